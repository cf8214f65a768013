"""The service's Prometheus histogram: each bucket counts the steps up to its bound."""

from __future__ import annotations

import re

from governor.serve.prometheus import BUCKETS, Metrics


def _buckets(text: str) -> dict[str, int]:
    found = re.findall(r'governor_step_seconds_bucket\{le="([^"]+)"\} (\d+)', text)
    return {le: int(n) for le, n in found}


def test_histogram_buckets_are_cumulative_and_bounds_inclusive() -> None:
    metrics = Metrics()
    for seconds in (0.004, 0.005, 0.02, 0.0051, 100.0):
        metrics.observe({"kind": "execute", "llm": {"calls": 1}}, seconds)
    buckets = _buckets(metrics.render())
    assert len(buckets) == len(BUCKETS) + 1
    assert buckets["0.005"] == 2 and buckets["0.01"] == 3 and buckets["0.025"] == 4
    assert buckets["60"] == 4 and buckets["+Inf"] == 5
    counts = list(buckets.values())
    assert counts == sorted(counts)
    assert "governor_step_seconds_count 5" in metrics.render()
    assert "governor_llm_calls_total 5" in metrics.render()
