"""The monitor speed benchmark, with a tiny budget."""

from __future__ import annotations

import random

from governor.bench.ltl_speed import OBJECTS, ROOMS, constraints, ltl_speed
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
