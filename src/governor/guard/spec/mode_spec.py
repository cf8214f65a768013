"""A policy's supervision section, read and validated, and how it becomes a supervisor.

:class:`SupervisionSpec` holds what the policy file says (modes, the mode graph, mode rules, the
selector's choices, gating rules, protective overrides, the classifiers, the refusal cooldown);
its builders make the runtime objects with the supervision package's own constructors
(:class:`~governor.supervision.ModeGraph`, :class:`~governor.supervision.EngagementGate`,
:class:`~governor.supervision.ConditionSelector`, :class:`~governor.supervision.Supervisor`),
which validate them: the policy reader calls the same builders with placeholder observers, so a
policy that loads builds. Imports the observer, the supervision package and the spec's parts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from governor.errors import ConfigError, expected
from governor.guard.spec.parts import LTLRule
from governor.observer import Observer
from governor.overlays.rules import Overlay
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
    ProtectiveRule,
    RefusalClassifier,
    StateClassifier,
    Supervisor,
    SupervisorConfig,
    ThresholdOverride,
    TimeWindowClassifier,
)

CLASSIFIERS = ("presence", "time_window", "affect", "refusals", "crisis")
"""The shipped offline state classifiers a policy may name in ``checks.user``."""

DEFAULT_CLASSIFIERS = ("presence", "affect", "refusals", "crisis")
"""The classifiers used when ``checks.user`` is not given (``time_window`` too when the
supervision section has one)."""

OVERRIDE_KINDS = ("threshold", "escalating_affect", "perseveration")

REFUSAL_PHRASES = (
    r"^\W*(?:no|nope|nah)\W*$",
    r"\bnot now\b",
    r"\bleave me alone\b",
    r"\bgo away\b",
    r"\bstop (?:talking|asking|it)\b",
    r"\bi do(?:n'?t| not) want to (?:talk|chat)\b",
)
"""User turns that decline to talk (counted as refusals for the cooldown); short and lexical."""


@dataclass(frozen=True)
class ModeSpec:
    """One mode: its prompt, overlays, fallback texts and own LTL rules; ``silent`` modes say
    their default fallback text and call no model."""

    name: str
    description: str = ""
    system_prompt: str | None = None
    overlays_from: str | None = None
    overlays: tuple[Overlay, ...] = ()
    fallbacks: Mapping[str, str] = field(default_factory=dict)
    ltl: tuple[LTLRule, ...] = ()
    silent: bool = False


@dataclass(frozen=True)
class OverrideSpec:
    """One protective rule: its kind, name, forced mode, action and the kind's parameters."""

    kind: str
    name: str
    mode: str | None
    action: str
    when: str | None = None
    params: Mapping[str, Any] = field(default_factory=dict)

    def build(self) -> ProtectiveRule:
        """The protective rule (its constructor validates the action and the parameters)."""
        action: Any = self.action
        p = dict(self.params)
        if self.kind == "threshold":
            return ThresholdOverride(self.name, str(self.when), self.mode, action)
        if self.kind == "escalating_affect":
            window = int(p.pop("window", 3))
            return EscalatingAffect(self.mode, name=self.name, window=window, action=action, **p)
        repeats = int(p.pop("repeats", 3))
        return Perseveration(self.mode, name=self.name, repeats=repeats, action=action, **p)


@dataclass(frozen=True)
class SupervisionSpec:
    """A policy's supervision section (see :mod:`governor.guard.spec.mode_section`)."""

    modes: tuple[ModeSpec, ...]
    edges: Mapping[str, tuple[str, ...]]
    initial: str
    entries: tuple[str, ...] | None = None
    safe_mode: str | None = None
    propositions: Mapping[str, str] = field(default_factory=dict)
    rules: tuple[tuple[str, str, str], ...] = ()
    choices: tuple[tuple[str, str], ...] = ()
    default_mode: str | None = None
    max_steps: Mapping[str, int] = field(default_factory=dict)
    gating: tuple[GatingRule, ...] = ()
    overrides: tuple[OverrideSpec, ...] = ()
    config: SupervisorConfig = field(default_factory=SupervisorConfig)
    classifiers: tuple[str, ...] = DEFAULT_CLASSIFIERS
    time_window: tuple[float, float] | None = None
    crisis_phrases: tuple[str, ...] | None = None
    refusal_phrases: tuple[str, ...] = REFUSAL_PHRASES

    def mode(self, name: str) -> ModeSpec:
        return next(m for m in self.modes if m.name == name)

    def classifier(self, name: str) -> StateClassifier:
        """The shipped classifier ``name`` (one of :data:`CLASSIFIERS`)."""
        if name == "time_window":
            start, end = self.time_window or (0.0, 24.0)
            return TimeWindowClassifier(start, end)
        if name == "crisis":
            return (
                CrisisClassifier(self.crisis_phrases) if self.crisis_phrases else CrisisClassifier()
            )
        if name == "presence":
            return PresenceClassifier()
        if name == "affect":
            return AffectClassifier()
        if name == "refusals":
            return RefusalClassifier()
        raise ConfigError(f"classifier: {expected(f'one of {CLASSIFIERS}', name)}")

    def gate(self, rules: Sequence[GatingRule] | None = None) -> EngagementGate:
        """The engagement gate over the classifiers (``rules``: these instead of the policy's)."""
        chosen = self.gating if rules is None else rules
        return EngagementGate([self.classifier(n) for n in self.classifiers], chosen)

    def graph(self, observers: Mapping[str, Observer]) -> ModeGraph:
        """The mode graph, each mode run by ``observers[name]``."""
        modes = [
            Mode(m.name, observers[m.name], m.description, m.system_prompt or "")
            for m in self.modes
        ]
        return ModeGraph(modes, self.edges, self.initial, self.entries)

    def selector(self, graph: ModeGraph) -> ConditionSelector:
        return ConditionSelector(
            graph.names, self.choices, self.default_mode or self.initial, max_steps=self.max_steps
        )

    def supervisor(
        self,
        observers: Mapping[str, Observer],
        *,
        rules: Sequence[tuple[str, str, str]] | None = None,
        overrides: Sequence[OverrideSpec] | None = None,
    ) -> Supervisor:
        """The supervisor over ``observers`` (``rules``/``overrides``: these instead of the
        policy's, for validating one at a time)."""
        graph = self.graph(observers)
        return Supervisor(
            graph,
            self.selector(graph),
            gate=self.gate(),
            rules=self.rules if rules is None else rules,
            propositions=self.propositions,
            overrides=[o.build() for o in (self.overrides if overrides is None else overrides)],
            safe_mode=self.safe_mode,
            config=self.config,
        )
