"""The monitor speed benchmark, with a tiny budget."""

from __future__ import annotations

import random
import statistics
import time

from governor.bench.ltl_speed import OBJECTS, ROOMS, constraints, ltl_speed
from governor.ltl.monitor import Monitor
from governor.ltl.satisfiability import jointly_satisfiable, one_hot


def test_rows_have_the_documented_keys() -> None:
    rows = ltl_speed((1, 3), seed=1, steps=60)
    assert [r["n_constraints"] for r in rows] == [1, 3]
    for row in rows:
        assert set(row) == {"n_constraints", "step_us_p50", "first_step_ms"}
        assert 0 < row["step_us_p50"] < 10_000 and 0 < row["first_step_ms"] < 1_000


def test_conjoined_mode_runs() -> None:
    (row,) = ltl_speed((5,), steps=60, mode="conjoined")
    assert row["n_constraints"] == 5 and row["step_us_p50"] > 0


def test_benchmark_constraints_are_jointly_satisfiable() -> None:
    fs = constraints(8, random.Random(3))
    assert len(fs) == 8
    alphabet = one_hot([f"agent_at({r})" for r in ROOMS], OBJECTS)
    assert jointly_satisfiable(fs, alphabet, max_depth=30)


def test_the_step_time_bound_holds_when_timed_here() -> None:
    """The README's figure (8 µs a step at 10 constraints) timed without the benchmark: ten
    monitors stepped one by one over random traces, with a 25-fold margin for a shared machine;
    the benchmark's own figure must be in the same range."""
    rng = random.Random(7)
    monitors = [Monitor(f, f"c{i}") for i, f in enumerate(constraints(10, random.Random(0)))]
    timings = []
    for _ in range(40):
        states = [m.initial for m in monitors]
        for _ in range(30):
            room = rng.choice(ROOMS)
            labels = {f"agent_at({room})", *(o for o in OBJECTS if rng.random() < 0.3)}
            start = time.perf_counter()
            states = [m.step(st, labels) for m, st in zip(monitors, states, strict=True)]
            timings.append(time.perf_counter() - start)
    assert all(
        m.final_verdict(st) in ("ok", "pending", "violated")
        for m, st in zip(monitors, states, strict=True)
    )
    assert statistics.median(timings) < 200e-6
    (row,) = ltl_speed((10,), steps=600)
    assert row["step_us_p50"] < 200
