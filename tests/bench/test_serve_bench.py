"""`governor bench serve` at a tiny size: the JSON's shape, one upstream call per accepted turn."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from governor.cli import main

pytest.importorskip("uvicorn")


def test_bench_serve_writes_json_and_plot(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out, png = tmp_path / "serve.json", tmp_path / "serve.png"
    args = ["bench", "serve", "--requests", "10", "--concurrency", "1,2", "--latency-ms", "5"]
    args += ["--token-ms", "2", "--stream-requests", "4", "--stream-concurrency", "1,2"]
    assert main([*args, "--json", str(out), "--plot", str(png)]) == 0
    result = json.loads(out.read_text())
    rows = result["rows"]
    assert [(r["checks"], r["concurrency"]) for r in rows] == [
        (checks, c) for checks in ("overlays", "ltl", "both") for c in (1, 2)
    ]
    for r in rows:
        for key in ("added_ms_p50", "added_ms_p99", "throughput_rps", "upstream_calls_per_turn"):
            assert isinstance(r[key], float), key
        assert r["throughput_rps"] > 0 and r["requests"] == 10
        assert r["accepted"] == 1.0  # the stub's fixed reply passes every check set
        assert r["upstream_calls_per_turn"] == 1.0
        assert r["upstream_calls_per_accepted_turn"] == 1.0
    assert result["checks_per_s"] > 0 and result["commits_per_s"] > 0
    assert result["config"]["store"] == "sqlite"  # the default: sessions in a SQLite file
    stream = result["stream"]["rows"]
    assert [(r["checks"], r["concurrency"]) for r in stream] == [
        (checks, c) for checks in ("prefix", "overlays") for c in (1, 2)
    ]
    for r in stream:
        assert r["requests"] == 4 and r["same_text"]  # governor released the stub's whole text
        assert r["governor_ttft_ms_p50"] >= r["upstream_ttft_ms_p50"] > 0
        assert r["whole_ratio_p50"] > 0
    assert png.stat().st_size > 1000
    printed = capsys.readouterr().out
    assert "decisions per second" in printed and "calls/turn" in printed
    assert "time to first token" in printed
    assert "sqlite store" in printed


def test_bench_serve_stub_runs_in_its_own_process_and_counts_calls() -> None:
    import os

    import httpx

    from governor.bench.service.stub import Stub

    with Stub(0.0) as stub:
        body = {"model": "stub", "messages": [{"role": "user", "content": "hi"}], "n": 2}
        answer = httpx.post(f"{stub.url}/chat/completions", json=body, timeout=10).json()
        assert len(answer["choices"]) == 2 and stub.calls == 1
        assert stub._process.pid != os.getpid()
        assert httpx.get(f"{stub.url}/models", timeout=10).status_code == 200
        assert stub.calls == 1  # only chat completions are counted
        streamed = httpx.post(f"{stub.url}/chat/completions", json={**body, "stream": True})
        assert streamed.headers["content-type"] == "text/event-stream"
        assert streamed.text.rstrip().endswith("data: [DONE]") and stub.calls == 2
    assert not stub._process.is_alive()


def test_bench_serve_refuses_bad_levels() -> None:
    assert main(["bench", "serve", "--concurrency", "0,8"]) == 2
    assert main(["bench", "serve", "--requests", "0"]) == 2
    assert main(["bench", "serve", "--store", "postgres"]) == 2
