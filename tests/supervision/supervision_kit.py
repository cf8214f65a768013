"""A small supervisor for the supervision tests: five modes whose observers say fixed lines."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from governor.config import ObserverConfig
from governor.core import Candidate, Decision, Fallback, Feedback, Policy, Trajectory, Verdict
from governor.observer import Observer
from governor.overlays.constraint import overlay_constraints
from governor.supervision import (
    AffectClassifier,
    ConditionSelector,
    CrisisClassifier,
    EngagementGate,
    EscalatingAffect,
    GatingRule,
    Mode,
    ModeGraph,
    Perseveration,
    PresenceClassifier,
    RefusalClassifier,
    Supervisor,
    SupervisorConfig,
    ThresholdOverride,
    demand_overlays,
)

NAMES = ("small_talk", "breathing", "creative", "silence", "crisis")
EDGES = {n: [m for m in NAMES if m != n] for n in NAMES} | {"crisis": ["silence"]}
RULES = (
    ("crisis_protocol", "a crisis statement starts the crisis protocol",
     "G(crisis_statement -> mode_crisis)"),
    ("breathing_follows", "breathing may only follow small talk or creative",
     "G(mode_breathing -> Y(mode_small_talk | mode_creative | mode_breathing))"),
)  # fmt: skip


class Lines(Policy):
    """Proposes the given lines in order."""

    def __init__(self, *lines: str) -> None:
        self.lines = lines

    def propose(self, traj: Trajectory, feedback: Feedback | None, n: int) -> list[Candidate[Any]]:
        return [Candidate(t, t) for t in self.lines[:n]]


class Quiet(Fallback):
    """Says nothing: a silence marker."""

    def act(self, traj: Trajectory, verdicts: Sequence[Verdict]) -> Any:
        return "[silence]"


def mode(name: str, *lines: str, overlays: bool = False) -> Mode:
    constraints = overlay_constraints(demand_overlays()) if overlays else []
    config = ObserverConfig(n_candidates=len(lines) or 1, max_regenerations=0, time_budget_s=None)
    policy = Lines(*(lines or (f"[{name}]",)))
    return Mode(name, Observer(policy, constraints, Quiet(), config=config))


def graph(**modes: Mode) -> ModeGraph:
    made = [modes.get(n) or mode(n) for n in NAMES]
    return ModeGraph(made, EDGES, "small_talk", entries=("small_talk", "silence", "crisis"))


def supervisor(
    *,
    gating: Sequence[GatingRule] = (GatingRule("present", "user_present >= 1", sustain=True),),
    config: SupervisorConfig | None = None,
    modes: Mapping[str, Mode] | None = None,
) -> Supervisor:
    gate = EngagementGate(
        [PresenceClassifier(), AffectClassifier(), CrisisClassifier(), RefusalClassifier()], gating
    )
    selector = ConditionSelector(
        NAMES, [("user_affect < -0.6", "breathing"), ("user_affect < -0.3", "creative")],
        "small_talk",
    )  # fmt: skip
    return Supervisor(
        graph(**(modes or {})),
        selector,
        gate=gate,
        rules=RULES,
        propositions={"crisis_statement": "crisis_statement >= 1"},
        overrides=[
            ThresholdOverride("crisis_statement", "crisis_statement >= 1", "crisis"),
            EscalatingAffect("breathing", window=2, drop=0.6, below=-0.5),
            Perseveration("breathing", repeats=3, similarity=0.5),
        ],
        safe_mode="silence",
        config=config or SupervisorConfig(max_refusals=2, cooldown_steps=3),
    )


class ListSink:
    """A trace that keeps what it is given."""

    def __init__(self) -> None:
        self.records: list[tuple[Decision, dict[str, Any]]] = []
        self.episodes: list[dict[str, Any]] = []

    def record(
        self, decision: Decision, *, episode: str, t: int, extra: Mapping[str, Any] | None = None
    ) -> None:
        self.records.append((decision, dict(extra or {})))

    def record_episode(self, episode: str, summary: Mapping[str, Any]) -> None:
        self.episodes.append(dict(summary))
