"""Lookahead (extension 1, the fourth rejection cause): reject a locally admissible reply whose
short-horizon rollouts reach an unsafe region.

:class:`LookaheadConstraint` judges a candidate reply by simulating ``rollouts`` continuations of
``horizon`` user turns each: a :class:`~governor.observer_extensions.users.UserModel` answers the candidate,
the agent continues (by default it says nothing new, so the rollout measures the candidate's own
effect; a :func:`policy_continuation` lets a second base policy speak), and so on. A rollout
*reaches the unsafe region* when the unsafe test holds for the simulated turns so far (by default:
some simulated user turn has ``unsafe_feature >= unsafe_level``, i.e. states intent). The
candidate is rejected when at least ``threshold`` of the rollouts reach it, with the verdict's
cause ``lookahead_failure``, which the arbiter names when only such verdicts reject a step.

Only locally admissible candidates are rolled out: a candidate that one of the ``local``
constraints rejects is left to them (admitted here with a note, never simulated). Seeded: the
rollouts of a candidate are drawn from a generator seeded by ``seed``, the dialogue and the
candidate, so the same seed gives the same verdict and the check stays a pure function. Every
LLM call a rollout makes (an LLM persona, an LLM continuation) goes through a backend and is
counted in the decision's usage; :class:`LookaheadStats` adds the cost per rollout.
"""

from __future__ import annotations

import hashlib
import random
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from governor.config import check_range, check_types, option
from governor.core import Constraint, Policy, RejectionCause, Severity, Trajectory, Verdict
from governor.observer_extensions.users import UserModel
from governor.overlays.features.dialogue import Dialogue, Turn, as_dialogue


@dataclass(frozen=True)
class SimTurn:
    """One simulated exchange: what the agent said, what the simulated user answered."""

    agent: str
    user: str
    features: Mapping[str, float]


Rollout = tuple[SimTurn, ...]
UnsafeTest = Callable[[Rollout], bool]
Continuation = Callable[[Dialogue, random.Random], str]


@dataclass(frozen=True)
class LookaheadConfig:
    """How far and how often to look ahead, and what counts as unsafe."""

    horizon: int = option(3, "simulated user turns after the candidate, per rollout")
    rollouts: int = option(8, "simulated continuations per candidate")
    threshold: float = option(
        0.25, "reject when at least this share of the rollouts reaches the unsafe region"
    )
    unsafe_feature: str = option("intent", "default unsafe test: this feature of a user turn ...")
    unsafe_level: float = option(0.5, "... at or above this level (the unsafe region)")
    seed: int = option(0, "seed of the rollouts (with the dialogue and the candidate)")
    advice: str = option(
        "address the risk directly (ask about safety, offer the crisis protocol)",
        "what the forced feedback asks for instead",
    )

    def __post_init__(self) -> None:
        check_types(self)
        check_range("horizon", self.horizon, 1, 50)
        check_range("rollouts", self.rollouts, 1, 1000)
        check_range("threshold", self.threshold, 1e-9, 1.0)


def feature_at_least(feature: str, level: float) -> UnsafeTest:
    """The unsafe test "some simulated user turn has ``feature >= level``"."""

    def unsafe(rollout: Rollout) -> bool:
        return any(t.features.get(feature, 0.0) >= level for t in rollout)

    unsafe.__doc__ = f"some simulated user turn has {feature} >= {level:g}"
    return unsafe


def silent(dialogue: Dialogue, rng: random.Random) -> str:
    """The default continuation: the agent says nothing new after its candidate."""
    return ""


def policy_continuation(policy: Policy) -> Continuation:
    """A second base policy continues the rollout (its first valid proposal; its LLM calls are
    counted like any other). A failure or an invalid proposal ends in silence."""

    def continue_(dialogue: Dialogue, rng: random.Random) -> str:
        proposed = policy.propose(Trajectory(dialogue), None, 1)
        first = next((c for c in proposed if c.valid and isinstance(c.action, str)), None)
        return first.action if first is not None else ""  # type: ignore[return-value]

    return continue_


class LookaheadStats:
    """Cost counters (instrumentation only; never used to judge): rollouts, simulated turns and
    seconds spent rolling out, summed over every check."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.checks = 0
        self.rollouts = 0
        self.turns = 0
        self.seconds = 0.0

    def add(self, rollouts: int, turns: int, seconds: float) -> None:
        with self._lock:
            self.checks += 1
            self.rollouts += rollouts
            self.turns += turns
            self.seconds += seconds

    @property
    def ms_per_rollout(self) -> float:
        return 1000.0 * self.seconds / self.rollouts if self.rollouts else 0.0


class LookaheadConstraint(Constraint):
    """Rejects a candidate whose rollouts reach the unsafe region (see the module doc)."""

    def __init__(
        self,
        user: UserModel,
        config: LookaheadConfig | None = None,
        *,
        local: Sequence[Constraint] = (),
        unsafe: UnsafeTest | None = None,
        continuation: Continuation = silent,
        name: str = "lookahead",
        dialogue: Callable[[Trajectory], Dialogue] = as_dialogue,
    ) -> None:
        self.name, self.user = name, user
        self.config = config or LookaheadConfig()
        self.local = tuple(local)
        self.unsafe = unsafe or feature_at_least(
            self.config.unsafe_feature, self.config.unsafe_level
        )
        self.region = self.unsafe.__doc__ or "the unsafe region"
        self.continuation, self.dialogue = continuation, dialogue
        self.stats = LookaheadStats()

    def check(self, traj: Trajectory, action: Any) -> Verdict:
        if not isinstance(action, str):
            return Verdict.reject(
                self.name, 1.0, f"expected a text reply, found {type(action).__name__}"
            )
        blocked = [c.name for c in self.local if not _admits(c, traj, action)]
        if blocked:
            return Verdict.allow(
                self.name, descriptor=f"not rolled out: {', '.join(blocked)} reject it"
            )
        context = self.dialogue(traj)
        cfg = self.config
        rng = random.Random(_seed(cfg.seed, context, action))
        start, turns, hits = time.perf_counter(), 0, 0
        for _ in range(cfg.rollouts):
            rollout = self.rollout(context, action, rng)
            turns += len(rollout)
            hits += self.unsafe(rollout)
        self.stats.add(cfg.rollouts, turns, time.perf_counter() - start)
        share = hits / cfg.rollouts
        if share >= cfg.threshold:
            text = (
                f"lookahead: {hits} of {cfg.rollouts} simulated continuations reach the unsafe"
                f" region ({self.region}) within {cfg.horizon} turns; {cfg.advice}"
            )
            return Verdict.reject(
                self.name,
                share - cfg.threshold,
                text,
                margin=cfg.threshold - share,
                severity=Severity.HIGH,
                cause=RejectionCause.LOOKAHEAD,
            )
        return Verdict.allow(self.name, margin=cfg.threshold - share, confidence=1.0 - share)

    def rollout(self, context: Dialogue, candidate: str, rng: random.Random) -> Rollout:
        """One simulated continuation after ``candidate``, stopped when it turns unsafe."""
        state = self.user.start(context, rng)
        dialogue = (*context, Turn("assistant", candidate))
        agent, turns = candidate, []
        for h in range(self.config.horizon):
            state, text, features = self.user.reply(state, dialogue, rng)
            turns.append(SimTurn(agent, text, dict(features)))
            if self.unsafe(tuple(turns)) or h == self.config.horizon - 1:
                break
            dialogue = (*dialogue, Turn("user", text))
            agent = self.continuation(dialogue, rng)
            dialogue = (*dialogue, Turn("assistant", agent))
        return tuple(turns)


def _admits(constraint: Constraint, traj: Trajectory, action: Any) -> bool:
    try:
        verdict = constraint.check(traj, action)
    except Exception:  # the constraint's own column fails closed; nothing to roll out here
        return False
    return isinstance(verdict, Verdict) and verdict.admissible


def _seed(seed: int, context: Dialogue, candidate: str) -> int:
    text = "\x1f".join(f"{t.role}:{t.text}" for t in context)
    digest = hashlib.sha256(f"{seed}\x1e{text}\x1e{candidate}".encode()).digest()
    return int.from_bytes(digest[:8], "big")
