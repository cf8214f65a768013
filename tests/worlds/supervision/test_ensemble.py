"""The ensemble scenario on a tiny budget: disagreement deferral admits fewer errors."""

from __future__ import annotations

from governor.worlds.supervision import ensemble


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
