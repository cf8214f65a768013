"""The tutoring scenario on a tiny budget: adaptive rigidity keeps the running negativity down."""

from __future__ import annotations

from governor.worlds.scenarios import tutoring


def test_adaptive_rigidity_crosses_the_bound_less_often_than_fixed() -> None:
    result = tutoring.run(episodes=10, seed=0)
    assert (result.treatment, result.ablation) == ("adaptive", "fixed")
    assert result.conditions["adaptive"] < result.conditions["fixed"]
    assert result.conditions["fixed"] <= result.conditions["unguarded"]
    rows = {r["condition"]: r for r in result.table}
    assert rows["adaptive"]["regenerations_per_turn"] > rows["fixed"]["regenerations_per_turn"]
    assert rows["unguarded"]["regenerations_per_turn"] == 0
    assert set(result.series) == set(tutoring.CONDITIONS)
    assert all(len(s) == tutoring.TURNS for s in result.series.values())


def test_the_learners_are_the_same_in_every_condition() -> None:
    a, b = tutoring.episode("unguarded", 1, 0), tutoring.episode("unguarded", 1, 0)
    assert a == b
    fixed = [tutoring.episode("fixed", 1, i).running for i in range(6)]
    adaptive = [tutoring.episode("adaptive", 1, i).running for i in range(6)]
    assert fixed != adaptive  # the mechanism acts on some learner
