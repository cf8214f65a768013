"""The in-home training scenario on a tiny budget: gating avoids inappropriate starts."""

from __future__ import annotations

import pytest

from governor.worlds.scenarios import training
from governor.worlds.scenarios.family import TICKS, day
from governor.worlds.scenarios.pedagogy import feedback_overlays


def test_gating_avoids_inappropriate_starts_and_flagged_feedback() -> None:
    r = training.run(episodes=2, seed=0)
    assert (r.treatment, r.ablation) == ("gated", "ungated") and r.lower_is_better
    assert r.conditions["gated"] < r.conditions["ungated"]
    rows = {row["condition"]: row for row in r.table}
    assert rows["ungated"]["feedback_flagged"] > 0
    assert rows["gated"]["feedback_flagged"] == 0 < rows["gated"]["feedback_replaced"]
    assert all(len(s) == TICKS for s in r.series.values())


@pytest.mark.slow
def test_the_cooldown_cuts_nagging_on_the_same_days() -> None:
    days = range(120)  # a small effect: refusals in a row are rare once the gate is on
    with_cooldown = sum(training.one_day("gated", s).nagging for s in days)
    without = sum(training.one_day("gated_no_cooldown", s).nagging for s in days)
    assert with_cooldown < without


def test_a_day_is_seeded_and_ground_truth_is_stated() -> None:
    a, b = day(7), day(7)
    assert a == b and len(a) == TICKS
    for m in a:
        if m.appropriate:
            assert m.home and not m.talking and m.affect >= -0.3


def test_the_feedback_overlays_flag_judgemental_and_vague_feedback() -> None:
    overlays = feedback_overlays()

    def flagged(text: str) -> set[str]:
        return {o.name for o in overlays if not o.evaluate((), text).admissible}

    assert flagged(training.FEEDBACK[0]) == set()
    assert "non_judgemental" in flagged("That was wrong. You never ask questions.")
    assert {"clear_sentences", "no_hedging"} <= flagged(training.FEEDBACK[-1])
    assert flagged(training.SAFE_FEEDBACK) == set()
