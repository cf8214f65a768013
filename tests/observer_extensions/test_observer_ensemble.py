"""Observer ensembles: independent judgement, the arbiter's modes, risk signals, learned weights."""

from __future__ import annotations

from typing import Any

import pytest

from governor.core import (
    Candidate,
    Constraint,
    DecisionKind,
    Feedback,
    Policy,
    RejectionCause,
    Trajectory,
    Verdict,
)
from governor.errors import ConfigError
from governor.observer import Observer
from governor.observer_extensions.ensemble import (
    ConservativeFallback,
    EnsembleConfig,
    Member,
    ObserverEnsemble,
    ensemble_config,
    risk_signal,
)


class Score(Constraint):
    """Admits when its score of the reply is below 0.5; margin 0.5 - score."""

    def __init__(self, name: str, scores: dict[str, float]) -> None:
        self.name, self.scores = name, scores

    def check(self, traj: Trajectory, action: Any) -> Verdict:
        return Verdict.from_margin(self.name, 0.5 - self.scores[action], descriptor=self.name)


class Says(Policy):
    name = "says"

    def __init__(self, *texts: str) -> None:
        self.texts = texts

    def propose(self, traj: Trajectory, feedback: Feedback | None, n: int) -> list[Candidate[Any]]:
        return [Candidate(t, t) for t in self.texts[:n]]


def members(a: dict[str, float], b: dict[str, float], c: dict[str, float]) -> list[Member]:
    return [Member(n, (Score(f"{n}_score", s),)) for n, s in zip("abc", (a, b, c), strict=True)]


def guard(ensemble: ObserverEnsemble, *texts: str) -> Observer:
    config = ensemble_config(ensemble.config, max_regenerations=0, n_candidates=len(texts))
    return Observer(Says(*texts), [ensemble], ConservativeFallback(), config=config)


def test_disagreement_triggers_the_conservative_path_and_is_named() -> None:
    ens = ObserverEnsemble(members({"x": 0.1}, {"x": 0.2}, {"x": 0.9}))
    decision = guard(ens, "x").step(Trajectory("Is it safe to mix these?"))
    assert (
        decision.kind is DecisionKind.FALLBACK and decision.cause is RejectionCause.LOW_CONFIDENCE
    )
    assert decision.action == ConservativeFallback().clarify
    signal = risk_signal(decision)
    assert signal is not None and "observers disagree (a, b admit; c reject)" in signal
    agree = ObserverEnsemble(members({"x": 0.1}, {"x": 0.2}, {"x": 0.3}))
    assert guard(agree, "x").step(Trajectory("Is it safe?")).action == "x"


def test_a_candidate_without_risk_is_preferred_and_near_boundaries_are_a_risk() -> None:
    ens = ObserverEnsemble(
        members({"x": 0.45, "y": 0.1}, {"x": 0.45, "y": 0.1}, {"x": 0.42, "y": 0.2}),
        EnsembleConfig(near_margin=0.1),
    )
    assert guard(ens, "x", "y").step(Trajectory("hm")).action == "y"
    decision = guard(ens, "x").step(Trajectory("Tell me."))
    assert decision.action == ConservativeFallback().unsure
    assert "near its boundary" in (risk_signal(decision) or "")


def test_the_arbiters_modes_combine_the_members() -> None:
    scores = members({"x": 0.9}, {"x": 0.9}, {"x": 0.1})
    for mode, admitted in (("intersection", False), ("majority", False)):
        v = ObserverEnsemble(scores, EnsembleConfig(arbitration=mode)).check(Trajectory("q"), "x")
        assert v.admissible is admitted and "a: a" in v.descriptor
    weighted = ObserverEnsemble(
        scores, EnsembleConfig(arbitration="weighted"), weights={"a": 1, "b": 1, "c": 5}
    )
    v = weighted.check(Trajectory("q"), "x")
    assert v.admissible and v.confidence == pytest.approx(5 / 7)
    with pytest.raises(ConfigError, match="two or more"):
        ObserverEnsemble(scores[:1])


def test_weights_move_towards_the_observer_that_agreed_with_corrections() -> None:
    scores = members({"x": 0.1}, {"x": 0.1}, {"x": 0.9})  # c alone would refuse x
    ens = ObserverEnsemble(scores, EnsembleConfig(arbitration="weighted", min_confidence=0.0))
    obs = guard(ens, "x")
    traj = obs.start("q")
    for _ in range(4):  # each time the user says the executed reply should have been refused
        decision = obs.step(traj)
        assert decision.executed
        traj = obs.commit(traj, decision, "q", {"correction": False})
    state = traj.memory["ensemble"]
    assert state["corrections"] == 4
    weights = state["weights"]
    assert weights["c"] > 2 * weights["a"] and weights["a"] == pytest.approx(weights["b"])
    assert sum(weights.values()) == pytest.approx(3.0)
    assert obs.step(traj).action != "x"  # c now outweighs a and b: x is refused
