"""The driving bench's checks of the exact filter itself: agreement with exact search, latency."""

from __future__ import annotations

import math
import statistics
import time
from typing import Any

import numpy as np

from governor.core import Trajectory
from governor.worlds.driving.exact_search import monitor_agreement
from governor.worlds.driving.filter import exact_filter
from governor.worlds.driving.grid_value import GridValue


def monitor_report(gv: GridValue, n: int, seed: int, margin: float) -> dict[str, Any]:
    """The grid value against exact search on ``n`` random road states.

    ``agreement`` compares signs (V > 0 against the search); ``false_safe_rate`` counts states the
    filter's switching rule (V > margin) would call safe that the search proves doomed. The
    conservative side of the margin is reported too: states with 0 < V <= margin.
    """
    if n == 0:
        return {}
    sign = monitor_agreement(gv, n, seed, 0.0)
    at_margin = monitor_agreement(gv, n, seed, margin)
    return {
        "states": sign["states"],
        "agreement": sign["agreement"],
        "false_safe_rate": at_margin["false_safe_rate"],
        "margin": margin,
        "sign_false_safe_rate": sign["false_safe_rate"],
        "agreement_at_margin": at_margin["agreement"],
        "safe_fraction": sign["safe_fraction"],
        "seconds": sign["seconds"] + at_margin["seconds"],
    }


def filter_latency_us(gv: GridValue, margin: float, n: int = 2000, seed: int = 1) -> float:
    """Median microseconds of one exact-filter decision (Q of the action, compared to the margin)."""
    monitor, _ = exact_filter(gv, margin)
    rng = np.random.default_rng(seed)
    p = gv.params
    trajs = [
        Trajectory(
            {
                "state": np.array(
                    [
                        rng.uniform(0, p.goal_x),
                        rng.uniform(0, p.road_width),
                        rng.uniform(-math.pi, math.pi),
                    ],
                    dtype=np.float32,
                )
            }
        )
        for _ in range(n)
    ]
    times = []
    for i, traj in enumerate(trajs):
        start = time.perf_counter()
        monitor.check(traj, i % 3)
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e6
