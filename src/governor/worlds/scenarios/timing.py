"""What one supervisor decision costs, without lookahead: the de-escalation supervisor (five
modes, four classifiers, three LTL mode rules, three protective rules) stepped over a fixed
cycle of student turns. Only the supervisor's step is timed, not the modes' observers. Wall time
includes whatever else the machine runs (a busy machine deschedules the process for whole
milliseconds); the thread's CPU time does not."""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from governor.worlds.scenarios.deescalation import build

TURNS = (
    "Okay, I'm okay.",
    "Whatever.",
    "This is stupid. I hate this.",
    "I want my tablet back.",
    "Leave me alone! I hate this place!",
    "I feel a bit better.",
)


def decision_timing(decisions: int = 2_000, seed: int = 0) -> dict[str, Any]:
    """Milliseconds per supervisor decision: mean, median, 95th and 99th percentiles."""
    sup = build("supervisor", np.random.default_rng(seed))
    state = sup.start()
    times, cpu = [], []
    for i in range(decisions):
        obs = {"people": 1, "user_text": TURNS[i % len(TURNS)], "refused": False}
        start, start_cpu = time.perf_counter(), time.thread_time()
        decision = sup.step(state, obs)
        times.append(time.perf_counter() - start)
        cpu.append(time.thread_time() - start_cpu)
        state = decision.state
    ms = 1000.0 * np.asarray(times)
    cpu_ms = 1000.0 * np.asarray(cpu)
    return {
        "decisions": decisions,
        "what": "Supervisor.step of the de-escalation supervisor, no lookahead",
        "mean_ms": round(float(ms.mean()), 4),
        "median_ms": round(float(np.median(ms)), 4),
        "p95_ms": round(float(np.quantile(ms, 0.95)), 4),
        "p99_ms": round(float(np.quantile(ms, 0.99)), 4),
        "cpu_mean_ms": round(float(cpu_ms.mean()), 4),
        "cpu_median_ms": round(float(np.median(cpu_ms)), 4),
        "cpu_p95_ms": round(float(np.quantile(cpu_ms, 0.95)), 4),
        "target_ms": 1.0,
    }
