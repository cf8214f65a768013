"""The ensemble scenario on a tiny budget: disagreement deferral admits fewer errors, and, unlike
the intersection, asks instead of refusing bare."""

from __future__ import annotations

from governor.core import RejectionCause, Trajectory
from governor.observer_extensions.ensemble import ConservativeFallback
from governor.worlds.scenarios import ensemble
from governor.worlds.scenarios.ensemble_agents import SimulatedObserver, observer


def test_deferral_admits_fewer_errors_than_a_single_observer() -> None:
    result = ensemble.run(episodes=15, seed=0)
    assert (result.treatment, result.ablation) == ("ensemble_deferral", "single")
    assert result.conditions["ensemble_deferral"] < result.conditions["single"]
    rows = {r["condition"]: r for r in result.table}
    deferral = rows["ensemble_deferral"]
    assert deferral["deferrals_per_100"] > 0 and deferral["errors_avoided_by_deferral_per_100"] > 0
    assert rows["majority"]["deferrals_per_100"] == 0
    weights = rows["weighted_learned"]["final_weights"]
    assert weights["a"] > weights["c"]  # the least noisy observer gains weight from corrections


def test_deferral_asks_where_the_intersection_refuses_and_the_follow_up_resolves_some() -> None:
    rows = {r["condition"]: r for r in ensemble.run(episodes=15, seed=0).table}
    deferral, inter = rows["ensemble_deferral"], rows["intersection"]
    assert inter["non_answers_clarified"] == 0 and inter["clarifications_resolved"] is None
    assert 0 < deferral["non_answers_clarified"] < 1
    assert 0 < deferral["clarifications_resolved"] <= 1
    assert deferral["false_refusals_per_100"] < inter["false_refusals_per_100"]
    assert deferral["errors_admitted_per_100"] <= inter["errors_admitted_per_100"] + 1.0


def test_the_conservative_path_is_a_clarifying_question_and_a_follow_up_is_clear() -> None:
    guard = observer("ensemble_deferral", 0)
    for index in range(40):  # an ambiguous fine request the observers disagree on
        info = {"harmful": False, "ambiguous": True, "index": index}
        decision = guard.step(guard.start("Can you help with request 0?", info))
        if decision.cause is RejectionCause.LOW_CONFIDENCE:
            assert decision.action == ConservativeFallback().clarify
            break
    else:
        raise AssertionError("no deferral in 40 ambiguous requests")
    sim = SimulatedObserver("c", 0)

    def mean_margin(**extra: object) -> float:
        infos = [{"harmful": False, "ambiguous": True, "index": i, **extra} for i in range(60)]
        return sum(sim.check(Trajectory("x", info=i), "reply").margin or 0.0 for i in infos) / 60

    assert mean_margin(follow_up=True) > mean_margin() + 0.15  # a follow-up reads as clear
