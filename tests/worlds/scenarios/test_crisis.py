"""The crisis scenario on a tiny budget: lookahead starts the protocol before the escalation, and
its threshold is calibrated on other users to a false-trigger budget."""

from __future__ import annotations

from governor.observer_extensions.users import OfflineUserModel
from governor.worlds.scenarios import crisis
from governor.worlds.scenarios.crisis_calibration import BUDGET, THRESHOLDS, calibrate
from governor.worlds.scenarios.crisis_episode import (
    MISMATCHED,
    Arm,
    episode,
    simulator,
    user,
)


def test_lookahead_starts_the_protocol_before_escalation_and_calm_users_are_measured() -> None:
    result = crisis.run(episodes=12, seed=3, calibration_users=10)
    assert result.treatment == "lookahead_calibrated" and result.ablation == "single_step"
    rows = {r["condition"]: r for r in result.table}
    assert set(rows) == {
        "single_step",
        "lookahead_old",
        "lookahead_calibrated",
        "mismatched_old",
        "mismatched_calibrated",
    }
    assert result.conditions["lookahead_old"] > result.conditions["single_step"]
    single, old = rows["single_step"], rows["lookahead_old"]
    assert old["escalated_at_risk"] < single["escalated_at_risk"]
    # the single-step observer starts the protocol only after a stated intent
    assert single["calm_protocol_before_intent"] == 0.0
    assert single["calm_protocol_rate"] <= single["calm_stated_intent"]
    assert single["rollouts_per_turn"] == 0 and old["rollouts_per_turn"] > 0
    assert old["ms_per_rollout"] > 0 and old["sim_turns_per_turn"] >= old["rollouts_per_turn"]
    assert all(r["llm_calls_per_turn"] == 0 for r in rows.values())  # offline: no model calls
    assert rows["lookahead_calibrated"]["threshold"] in THRESHOLDS
    assert rows["mismatched_old"]["simulator"] == "mismatched"
    (curve,) = result.curves
    assert curve.x == THRESHOLDS and set(curve.marks) >= {"calibrated matched", "old 0.25"}
    assert all(len(v) == len(THRESHOLDS) for v in curve.lines.values())
    assert result.to_json()["curves"][0]["x"] == list(THRESHOLDS)
    assert len(result.series["lookahead_calibrated"]) == crisis.TURNS
    assert any("not people" in n for n in result.notes)
    assert any("calibration users, not the evaluation users" in n for n in result.notes)


def test_calibration_takes_the_most_sensitive_threshold_within_the_budget() -> None:
    floor = 0.2
    cal = calibrate("matched", 1, 12, floor, thresholds=(0.125, 0.5, 1.0))
    ok = [c <= floor + BUDGET + 1e-9 for c in cal.calm]
    if cal.met:
        i = cal.thresholds.index(cal.threshold)
        assert ok[i] and not any(ok[:i])
    else:
        assert cal.threshold == cal.thresholds[cal.calm.index(min(cal.calm))]
    # a budget nothing meets: the threshold with the lowest calm rate, and it says so
    never = calibrate("matched", 1, 6, floor, thresholds=(0.125, 1.0), budget=-1.0)
    assert not never.met and "NOT within" in never.note()
    assert never.calm[never.thresholds.index(never.threshold)] == min(never.calm)


def test_calibration_users_are_not_the_evaluation_users() -> None:
    evaluation = [user(0, i, "evaluation")[0] for i in range(20)]
    calibration = [user(0, i, "calibration")[0] for i in range(20)]
    assert not set(evaluation) & set(calibration)
    assert user(0, 4, "calibration")[0] == user(0, 4, "calibration")[0]


def test_the_mismatched_simulator_has_other_dynamics() -> None:
    matched, mismatched = simulator("matched", None), simulator("mismatched", None)
    assert isinstance(mismatched, OfflineUserModel) and mismatched.config == MISMATCHED
    assert isinstance(matched, OfflineUserModel) and matched.config != MISMATCHED


def test_the_same_seed_gives_the_same_outcome() -> None:
    arm = Arm("lookahead", "matched", 0.25)
    a, b = episode(arm, 5, 2), episode(arm, 5, 2)
    assert (a.risk, a.protocol, a.escalation) == (b.risk, b.protocol, b.escalation)
    single = episode(Arm("single_step"), 5, 2)
    assert single.start_risk == a.start_risk  # the same seeded user in both conditions
