"""`governor bench plain-http`: every client is measured on requests the stub really answers."""

from __future__ import annotations

import pytest

from governor.bench.plain_http_cpu import PlainHttpBenchConfig, run
from governor.errors import ConfigError


def test_each_client_is_measured() -> None:
    result = run(PlainHttpBenchConfig(requests=20, rounds=1))
    assert [r["client"] for r in result["rows"]] == [
        "AsyncPlainHttp, awaited on the loop",
        "PlainHttp in a worker thread",
        "PlainHttp, blocking (no event loop)",
    ]
    assert all(r["cpu_us"] > 0 and r["wall_us"] > 0 for r in result["rows"])
    assert result["config"] == {"requests": 20, "rounds": 1}


def test_the_counts_are_checked() -> None:
    with pytest.raises(ConfigError, match="requests"):
        PlainHttpBenchConfig(requests=0)
