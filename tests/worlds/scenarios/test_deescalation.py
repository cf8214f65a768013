"""The de-escalation scenario on a tiny budget: the supervisor keeps students out of crisis."""

from __future__ import annotations

import numpy as np

from governor.worlds.scenarios import deescalation
from governor.worlds.scenarios.student import CRISIS, Student, activity_effect


def test_the_supervisor_beats_the_fixed_mode_and_no_supervisor() -> None:
    r = deescalation.run(episodes=6, seed=0)
    c = r.conditions
    assert r.metric == "time_above_crisis" and r.lower_is_better
    assert (r.treatment, r.ablation) == ("supervisor", "fixed_mode")
    assert c["supervisor"] < c["fixed_mode"] < c["none"]
    assert r.effect > 0
    rows = {row["condition"]: row for row in r.table}
    assert rows["supervisor"]["overrides"] > 0 == rows["fixed_mode"]["overrides"]
    assert rows["supervisor"]["crisis_met"] in (None, 1.0)
    assert rows["fixed_mode"]["mean_demand"] < rows["none"]["mean_demand"]
    assert set(r.series) == set(deescalation.CONDITIONS)
    assert all(len(s) == deescalation.STEPS + 1 for s in r.series.values())


def test_the_same_seed_gives_the_same_student_whatever_the_agent_does() -> None:
    a, b = Student(5, 10), Student(5, 10)
    assert a.e == b.e and a.draws == b.draws
    a.respond("crisis", 0.0, 0, False)
    b.respond(None, 1.0, 0, False)
    assert a.draws == b.draws and a.e < b.e


def test_the_stated_activity_effects() -> None:
    assert activity_effect("small_talk", 0.2, 0) < 0 < activity_effect("small_talk", 0.9, 0)
    assert activity_effect("breathing", 0.7, 0) < activity_effect("breathing", 0.7, 20) < 0
    assert activity_effect("creative", 0.9, 0) > 0 > activity_effect("creative", 0.4, 0)
    assert activity_effect("crisis", CRISIS, 0) < activity_effect("silence", CRISIS, 0) < 0


def test_an_episode_is_reproducible() -> None:
    t1, c1 = deescalation.episode("supervisor", 3, steps=12)
    t2, c2 = deescalation.episode("supervisor", 3, steps=12)
    assert np.allclose(c1, c2) and t1.overrides == t2.overrides
