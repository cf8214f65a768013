"""Engagement gating: rules over the state classifiers' features say whether an interaction may
start at all.

The classifiers (:mod:`~governor.supervision.classifiers`, re-exported here) turn raw
observations into features. A :class:`GatingRule` is a requirement ``"feature op number"``: the
interaction may start only while it holds (and, with ``sustain``, it ends when it stops
holding). A rule over a feature no classifier provides is refused when the gate is built, naming
the feature; a feature missing at run time fails the rule (fail closed).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from governor.errors import ConfigError
from governor.overlays.rules import Condition
from governor.supervision.classifiers import (
    CRISIS_PHRASES,
    MAX_TEXT,
    AffectClassifier,
    CrisisClassifier,
    PresenceClassifier,
    RefusalClassifier,
    StateClassifier,
    TimeWindowClassifier,
    user_text,
)
from governor.supervision.state import SupervisorState

__all__ = [
    "CRISIS_PHRASES",
    "MAX_TEXT",
    "AffectClassifier",
    "CrisisClassifier",
    "EngagementGate",
    "GatingRule",
    "PresenceClassifier",
    "RefusalClassifier",
    "StateClassifier",
    "TimeWindowClassifier",
    "check_features",
    "provided",
    "user_text",
]


@dataclass(frozen=True)
class GatingRule:
    """Engage only while ``condition`` holds; ``sustain``: also end an ongoing interaction when
    it stops holding."""

    name: str
    condition: str
    sustain: bool = False

    @property
    def parsed(self) -> Condition:
        try:
            return Condition.parse(self.condition)
        except ValueError as exc:
            raise ConfigError(f"gating rule {self.name!r}: condition: {exc}") from None

    def holds(self, features: Mapping[str, float]) -> bool:
        cond = self.parsed
        value = features.get(cond.feature)
        return value is not None and math.isfinite(value) and cond.holds(value)


def provided(classifiers: Sequence[StateClassifier]) -> frozenset[str]:
    return frozenset(f for c in classifiers for f in c.features)


def check_features(what: str, feature: str, known: frozenset[str]) -> None:
    """Refuse ``feature`` unless a classifier provides it (the error names it)."""
    if feature not in known:
        raise ConfigError(
            f"{what}: unknown feature {feature!r}; expected one the classifiers provide:"
            f" {', '.join(sorted(known)) or 'none'}"
        )


class EngagementGate:
    """Classifiers and the gating rules over their features."""

    def __init__(
        self, classifiers: Sequence[StateClassifier], rules: Sequence[GatingRule] = ()
    ) -> None:
        self.classifiers = tuple(classifiers)
        self.rules = tuple(rules)
        self.features = provided(self.classifiers)
        for rule in self.rules:
            check_features(f"gating rule {rule.name!r}", rule.parsed.feature, self.features)

    def classify(self, observation: Mapping[str, Any], state: SupervisorState) -> dict[str, float]:
        """Every classifier's features; one that raises contributes nothing (its rules fail)."""
        out: dict[str, float] = {}
        for c in self.classifiers:
            try:
                values = c.classify(observation, state)
            except Exception:
                continue
            out.update((k, float(v)) for k, v in values.items() if k in c.features)
        return out

    def blocking(
        self, features: Mapping[str, float], *, sustained: bool = False
    ) -> tuple[str, ...]:
        """The rules that do not hold (only the ``sustain`` ones when ``sustained``)."""
        rules = [r for r in self.rules if r.sustain] if sustained else self.rules
        return tuple(f"{r.name} ({r.condition})" for r in rules if not r.holds(features))
