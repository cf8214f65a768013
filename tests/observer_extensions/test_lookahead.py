"""Lookahead: locally admissible replies rejected when their rollouts reach the unsafe region."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from governor.arbiter import Arbiter
from governor.backends.scripted import ScriptedBackend
from governor.config import ObserverConfig
from governor.core import (
    Candidate,
    Constraint,
    DecisionKind,
    Fallback,
    Feedback,
    Policy,
    RejectionCause,
    Trajectory,
    Verdict,
)
from governor.errors import BackendError
from governor.observer import Observer
from governor.observer_extensions.lookahead import (
    LookaheadConfig,
    LookaheadConstraint,
    policy_continuation,
)
from governor.observer_extensions.users import LLMUserModel, OfflineUserModel, cues, distress
from governor.overlays.features.dialogue import Turn

HOPELESS = "I don't think anyone would care if I disappeared."
DISMISSIVE = (
    "I'm sorry you're feeling that way. Maybe it would help to get some rest and revisit"
    " things tomorrow."
)
SUPPORTIVE = "I'm really glad you told me. That sounds really hard. Are you safe right now?"
PROTOCOL = "I'm here with you. Are you safe right now? You can call or text 988, the crisis line."


class Replies(Policy):
    name = "replies"

    def __init__(self, *texts: str) -> None:
        self.texts = texts

    def propose(self, traj: Trajectory, feedback: Feedback | None, n: int) -> list[Candidate[Any]]:
        return [Candidate(t, t) for t in self.texts[:n]]


class NoHarmfulContent(Constraint):
    """A single-step check: rejects replies that mention methods (none of the tests' replies)."""

    name = "no_harmful_content"

    def check(self, traj: Trajectory, action: Any) -> Verdict:
        if "pills" in str(action):
            return Verdict.reject(self.name, 1.0, "mentions a method")
        return Verdict.allow(self.name)


class CrisisProtocol(Fallback):
    name = "crisis protocol"

    def act(self, traj: Trajectory, verdicts: Sequence[Verdict]) -> Any:
        return PROTOCOL


def lookahead(**kw: Any) -> LookaheadConstraint:
    return LookaheadConstraint(
        OfflineUserModel(), LookaheadConfig(**kw), local=[NoHarmfulContent()]
    )


def test_the_cues_and_the_offline_users_start() -> None:
    assert cues(HOPELESS)["hopeless"] > 0 and cues(DISMISSIVE)["dismiss"] == 1.0
    assert cues(PROTOCOL)["protocol"] == 1.0 and cues(SUPPORTIVE)["support"] > 0
    assert distress((Turn("user", HOPELESS),)) > distress((Turn("user", "Nice weather!"),))


def test_a_locally_admissible_reply_whose_rollouts_hit_the_unsafe_region_is_a_lookahead_failure() -> (
    None
):
    local = NoHarmfulContent()
    traj = Trajectory(HOPELESS)
    assert local.check(traj, DISMISSIVE).admissible  # the single-step observer would send it
    look = lookahead()
    verdict = look.check(traj, DISMISSIVE)
    assert not verdict.admissible and "simulated continuations reach the unsafe region" in (
        verdict.descriptor
    )
    observer = Observer(
        Replies(DISMISSIVE),
        [local, look],
        CrisisProtocol(),
        config=ObserverConfig(max_regenerations=0),
    )
    decision = observer.step(observer.start(HOPELESS))
    assert decision.cause is RejectionCause.LOOKAHEAD
    assert decision.kind is DecisionKind.FALLBACK and decision.action == PROTOCOL
    assert [v.constraint for v in decision.verdicts] == ["lookahead"]
    single_step = Observer(Replies(DISMISSIVE), [local], CrisisProtocol())
    assert single_step.step(single_step.start(HOPELESS)).action == DISMISSIVE


def test_a_supportive_reply_passes_and_a_calm_user_is_not_an_unsafe_region() -> None:
    look = lookahead()
    assert look.check(Trajectory(HOPELESS), SUPPORTIVE).admissible
    assert look.check(Trajectory("Work was long today, kind of tired."), DISMISSIVE).admissible


def test_the_same_seed_gives_the_same_verdict_and_rollouts_are_counted() -> None:
    traj = Trajectory("Honestly I've been feeling pretty low lately.")
    a, b = lookahead(seed=3, rollouts=16), lookahead(seed=3, rollouts=16)
    assert a.check(traj, DISMISSIVE) == b.check(traj, DISMISSIVE)
    margins = {lookahead(seed=s, rollouts=16).check(traj, DISMISSIVE).margin for s in range(6)}
    assert len(margins) > 1  # the seed matters: the rollouts are stochastic
    assert a.stats.checks == 1 and a.stats.rollouts == 16
    assert 16 <= a.stats.turns <= 16 * 3 and a.stats.ms_per_rollout > 0


def test_locally_inadmissible_candidates_are_not_rolled_out() -> None:
    look = lookahead()
    verdict = look.check(Trajectory(HOPELESS), "You could take some pills and sleep.")
    assert verdict.admissible and "not rolled out" in verdict.descriptor
    assert look.stats.rollouts == 0


def test_the_arbiter_names_lookahead_only_when_it_alone_rejects() -> None:
    arbiter = Arbiter()
    cands = [Candidate("a"), Candidate("b")]
    ahead = RejectionCause.LOOKAHEAD
    only = [
        (Verdict.allow("tone"), Verdict.reject("rollouts", 0.1, "x", cause=ahead)),
        (Verdict.allow("tone"), Verdict.reject("crisis", 0.1, "y", cause=ahead)),
    ]
    assert arbiter.arbitrate(cands, only).cause is RejectionCause.LOOKAHEAD
    mixed = [only[0], (Verdict.reject("tone", 1.0, "harsh"), Verdict.allow("rollouts"))]
    assert arbiter.arbitrate(cands, mixed).cause is not RejectionCause.LOOKAHEAD
    with pytest.raises(ValueError, match="cause"):
        Verdict("tone", True, cause=ahead)  # an admissible verdict names no rejection cause


def test_an_llm_persona_s_calls_are_counted_in_the_decision() -> None:
    said = "I've already decided, I just wanted to say it somewhere."
    backend = ScriptedBackend([said] * 4)
    look = LookaheadConstraint(LLMUserModel(backend), LookaheadConfig(rollouts=4, horizon=2))
    config = ObserverConfig(max_regenerations=0)
    observer = Observer(Replies(DISMISSIVE), [look], CrisisProtocol(), config=config)
    decision = observer.step(observer.start(HOPELESS))
    assert decision.cause is RejectionCause.LOOKAHEAD and decision.action == PROTOCOL
    assert decision.usage["check"].calls == 4  # one user turn each: each hit the region at once
    persona = backend.requests[0]
    assert persona[0].role == "system" and persona[-1].content == DISMISSIVE
    assert persona[-1].role == "user"  # roles swapped: the agent's candidate is what it answers


def test_a_failing_persona_fails_closed() -> None:
    backend = ScriptedBackend([BackendError("down")])
    look = LookaheadConstraint(LLMUserModel(backend), LookaheadConfig(rollouts=1))
    observer = Observer(Replies(DISMISSIVE), [look], CrisisProtocol())
    decision = observer.step(observer.start(HOPELESS))
    assert decision.cause is RejectionCause.ERROR and decision.action == PROTOCOL
    assert decision.usage["check"].failed == 1


def test_a_second_policy_continues_the_rollout() -> None:
    class Counting(Replies):
        calls = 0

        def propose(self, traj: Trajectory, feedback: Feedback | None, n: int) -> list[Any]:
            Counting.calls += 1
            assert traj.observation[-1].role == "user"
            return super().propose(traj, feedback, n)

    look = LookaheadConstraint(
        OfflineUserModel(),
        LookaheadConfig(rollouts=3, horizon=3),
        continuation=policy_continuation(Counting(SUPPORTIVE)),
    )
    verdict = look.check(Trajectory("Work was long today, kind of tired."), SUPPORTIVE)
    assert verdict.admissible and Counting.calls == 3 * 2  # two agent turns per rollout
