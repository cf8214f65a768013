"""The crisis scenario on a tiny budget: lookahead starts the protocol before the escalation."""

from __future__ import annotations

from governor.worlds.supervision import crisis


def test_lookahead_starts_the_protocol_before_escalation_more_often() -> None:
    result = crisis.run(episodes=12, seed=3)
    assert result.treatment == "lookahead" and result.ablation == "single_step"
    assert result.conditions["lookahead"] > result.conditions["single_step"]
    assert result.effect > 0
    rows = {r["condition"]: r for r in result.table}
    assert rows["lookahead"]["escalated"] < rows["single_step"]["escalated"]
    assert rows["single_step"]["rollouts_per_turn"] == 0
    assert rows["lookahead"]["rollouts_per_turn"] == 8 and rows["lookahead"]["ms_per_rollout"] > 0
    assert rows["lookahead"]["llm_calls_per_turn"] == 0  # offline user model: no model calls
    assert len(result.series["lookahead"]) == crisis.TURNS
    assert any("not people" in n for n in result.notes)


def test_the_same_seed_gives_the_same_outcome() -> None:
    a = crisis.episode("lookahead", 5, 2)
    b = crisis.episode("lookahead", 5, 2)
    assert (a.risk, a.protocol, a.escalation) == (b.risk, b.protocol, b.escalation)
    single = crisis.episode("single_step", 5, 2)
    assert single.start_risk == a.start_risk  # the same seeded user in both conditions
