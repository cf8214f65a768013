"""The small-talk observer: overlays, the paper's buffer, feedback and a safe fallback, assembled.

The buffer (the small-talk paper) is the core loop run with the overlays' rigidity:

- within rigidity (deviation <= epsilon) a reply is accepted, and its descriptors ride along as
  implicit feedback for the next turn;
- beyond it the policy regenerates under forced feedback, at most ``max_regenerations`` (3 by
  default) times, then the :class:`~governor.conversation.fallbacks.SmallTalkFallback` speaks;
- forced feedback is used sparingly, by a seeded random factor: on a share ``leniency`` of turns
  (drawn from a hash of ``seed`` and the dialogue, so a run is reproducible and a check stays a
  pure function), a *mild* violation (deviation <= ``mild`` x epsilon) is accepted with implicit
  feedback instead of forcing a regeneration. Rigid overlays (epsilon 0), critical verdicts and
  failed checks are never relaxed. :class:`LenientOverlayConstraint` does this per overlay, so the
  core loop is unchanged and the trace shows each tolerated verdict as such.

Among several admissible candidates, :class:`~governor.conversation.preference.RankingArbiter`
takes the one with the fewest verdicts past a boundary (the paper's observer ranks partially
compliant replies), then, when the overlay file carries a human reference and ``prefer_human`` is
on, the one nearest this turn's draw from it (:class:`~governor.conversation.preference.HumanLikeness`).

Feedback comes from templates (no LLM call). With an observer model, :class:`ObserverModelFeedback`
merges the descriptors of a *rejected* reply into one directive; implicit feedback stays templated,
so a reply the observer accepts costs no LLM call beyond the policy's own.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Sequence
from typing import Any, Literal

from governor.backends.base import Backend
from governor.config import ObserverConfig, check_range, option
from governor.conversation.fallbacks import SmallTalkFallback
from governor.conversation.preference import HumanLikeness, RankingArbiter
from governor.core import (
    Constraint,
    Feedback,
    FeedbackKind,
    Policy,
    Severity,
    Trajectory,
    Verdict,
)
from governor.errors import ConfigError, expected
from governor.feedback import FeedbackWriter, LLMFeedbackWriter, TemplateFeedbackWriter
from governor.observer import Observer
from governor.overlays.constraint import OverlayConstraint
from governor.overlays.features.dialogue import Dialogue, as_dialogue
from governor.overlays.loader import load_overlays
from governor.overlays.rules import Overlay

TOLERATED = "tolerated this turn: forced feedback is used sparingly"


@dataclasses.dataclass(frozen=True)
class SmallTalkConfig:
    """The small-talk observer's bounds, buffer and feedback."""

    n_candidates: int = option(1, "candidate replies the policy proposes per attempt")
    max_regenerations: int = option(3, "regenerations under forced feedback before the fallback")
    time_budget_s: float | None = option(30.0, "seconds a turn may take before the fallback")
    stop_on_repeat: bool = option(True, "fall back early when the same violation repeats")
    leniency: float = option(0.3, "share of turns on which a mild violation is only noted")
    mild: float = option(2.0, "a violation is mild when its deviation <= mild x epsilon")
    seed: int = option(0, "seed of the leniency draw and of the human-reference draw")
    prefer_human: bool = option(
        True, "among admissible replies, prefer the one nearest a draw from the human reference"
    )
    feedback: Literal["template", "llm"] = option(
        "template", "forced feedback from templates, or merged by the observer model"
    )

    def __post_init__(self) -> None:
        check_range("leniency", self.leniency, 0.0, 1.0)
        check_range("mild", self.mild, 1.0, 1e6)
        if self.feedback not in ("template", "llm"):
            raise ConfigError(f"feedback: {expected('template or llm', self.feedback)}")
        self.observer_config()  # validates the bounds

    def observer_config(self) -> ObserverConfig:
        """The core loop's configuration."""
        return ObserverConfig(
            n_candidates=self.n_candidates,
            max_regenerations=self.max_regenerations,
            time_budget_s=self.time_budget_s,
            stop_on_repeat=self.stop_on_repeat,
        )


def lenient_turn(dialogue: Dialogue, rate: float, seed: int) -> bool:
    """The seeded draw: whether forced feedback is spared on the turn after ``dialogue``."""
    if rate <= 0.0:
        return False
    text = "\x1f".join(f"{t.role}:{t.text}" for t in dialogue)
    digest = hashlib.sha256(f"{seed}\x1e{text}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < rate


class LenientOverlayConstraint(OverlayConstraint):
    """An overlay whose mild violations are tolerated on lenient turns (see the module doc)."""

    def __init__(
        self, overlay: Overlay, *, leniency: float = 0.0, mild: float = 2.0, seed: int = 0
    ) -> None:
        super().__init__(overlay)
        self.leniency, self.mild, self.seed = leniency, mild, seed

    def check(self, traj: Trajectory, action: Any) -> Verdict:
        verdict = super().check(traj, action)
        eps = self.overlay.epsilon
        if (
            verdict.admissible
            or verdict.error is not None
            or verdict.severity >= Severity.CRITICAL
            or eps <= 0.0
            or verdict.deviation > self.mild * eps
            or not lenient_turn(as_dialogue(traj), self.leniency, self.seed)
        ):
            return verdict
        return Verdict.allow(
            verdict.constraint,
            margin=verdict.margin,
            deviation=verdict.deviation,
            confidence=verdict.confidence,
            descriptor=f"{verdict.descriptor} ({TOLERATED})",
            severity=verdict.severity,
        )


class ObserverModelFeedback(FeedbackWriter):
    """Forced feedback merged by an observer model; implicit feedback from templates."""

    def __init__(self, backend: Backend, *, max_tokens: int = 80) -> None:
        self.llm = LLMFeedbackWriter(backend, max_tokens=max_tokens)
        self.templates = TemplateFeedbackWriter()

    def _write(
        self, kind: FeedbackKind, notes: Sequence[Verdict], problems: Sequence[str] = ()
    ) -> Feedback:
        writer: FeedbackWriter = self.llm if kind is FeedbackKind.FORCED else self.templates
        return writer._write(kind, notes, problems)


def small_talk_constraints(
    overlays: Sequence[Overlay], config: SmallTalkConfig
) -> list[Constraint]:
    """One constraint per non-permissive overlay, highest priority first; then the preference.

    The :class:`HumanLikeness` column is added when ``config.prefer_human`` is on, the policy
    proposes more than one candidate and the overlays' resources carry a human reference.
    """
    ranked = sorted(overlays, key=lambda o: -o.priority)
    out: list[Constraint] = [
        LenientOverlayConstraint(o, leniency=config.leniency, mild=config.mild, seed=config.seed)
        for o in ranked
        if o.kind != "permissive"
    ]
    res = overlays[0].resources if overlays else None
    if config.prefer_human and config.n_candidates > 1 and res and res.reference is not None:
        out.append(HumanLikeness(res.reference, res, seed=config.seed))
    return out


def small_talk_observer(
    policy: Policy,
    overlays: Sequence[Overlay] | None = None,
    *,
    config: SmallTalkConfig | None = None,
    observer_backend: Backend | None = None,
    fallback: SmallTalkFallback | None = None,
) -> Observer:
    """The small-talk observer around ``policy`` (the shipped overlays by default).

    ``observer_backend`` is required when ``config.feedback`` is ``"llm"``.
    """
    config = config or SmallTalkConfig()
    if config.feedback == "llm" and observer_backend is None:
        raise ConfigError("feedback 'llm': expected an observer backend, found none configured")
    writer: FeedbackWriter = TemplateFeedbackWriter()
    if config.feedback == "llm" and observer_backend is not None:
        writer = ObserverModelFeedback(observer_backend)
    observer_config = config.observer_config()
    return Observer(
        policy,
        small_talk_constraints(load_overlays() if overlays is None else overlays, config),
        fallback or SmallTalkFallback(),
        config=observer_config,
        feedback=writer,
        arbiter=RankingArbiter(observer_config),
    )


def unguarded(policy: Policy) -> Observer:
    """The base condition: the policy's first valid reply is executed, nothing is checked."""
    return Observer(policy, (), None, config=ObserverConfig(max_regenerations=0))
