"""Overlays: IF-condition-THEN-bounds rules over features, with a rigidity epsilon.

An overlay applies when its condition holds (always, without one). Its feature value (aggregated
over its scope) has a *deviation*: the distance past its bounds, in the feature's own units (0
inside). The response is admissible iff deviation <= epsilon:

- deviation 0: ``Verdict.allow`` with the margin to the nearest bound;
- 0 < deviation <= epsilon: ``Verdict.allow`` with the deviation and the descriptor (implicit
  feedback for the next turn);
- deviation > epsilon: ``Verdict.reject`` with the descriptor (forced feedback, regeneration).

Kinds, in terms of verdicts:

- ``prohibitory``: excludes responses past its bounds (severity high by default).
- ``transfer``: under a required condition, excludes one class of responses (those past its
  bounds) and its feedback names the class to move to instead ("acknowledge the feeling rather
  than advise"); the same response stays admissible when the condition does not hold (severity
  medium by default).
- ``permissive``: widens the bounds of its ``target`` overlay while its condition holds (the
  union of both bounds); it never rejects anything itself.

Scopes: ``turn`` judges the candidate; ``last_n`` judges the mean over the assistant's last n
turns, candidate included (once there are n); ``trajectory`` the mean over all of them (features that are already
trajectory aggregates, such as drift, are used as they are). Empty or non-text responses are
inadmissible under every overlay (deviation epsilon + 1).

An overlay with a ``margin`` (adaptive rigidity, :mod:`governor.overlays.rigidity`) hands its
feature value to the margin, which tightens the tolerance as the margin shrinks.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from governor.core import Severity, Verdict
from governor.errors import SpecError, expected
from governor.overlays.features.base import DEFAULT_RESOURCES, Resources, get_feature
from governor.overlays.features.dialogue import (
    MAX_TURN_CHARS,
    Dialogue,
    as_dialogue,
    assistant_turns,
    bot_history,
)

Kind = Literal["prohibitory", "transfer", "permissive"]
KINDS: tuple[str, ...] = ("prohibitory", "transfer", "permissive")
OPS: Mapping[str, Callable[[float, float], bool]] = {
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
    "==": operator.eq,
    "!=": operator.ne,
}


@dataclass(frozen=True)
class Condition:
    """``feature op threshold``, judged on the candidate's turn."""

    feature: str
    op: str
    threshold: float

    @classmethod
    def parse(cls, text: str) -> Condition:
        """Parse ``"user_affect < -0.3"``; raises ValueError saying what was expected."""
        parts = str(text).split()
        if len(parts) != 3 or parts[1] not in OPS:
            raise ValueError(f"expected 'feature op number' with op in {' '.join(OPS)}")
        try:
            threshold = float(parts[2])
        except ValueError:
            raise ValueError(f"expected a number after {parts[1]!r}, found {parts[2]!r}") from None
        return cls(parts[0], parts[1], threshold)

    def holds(self, value: float) -> bool:
        """Whether ``value op threshold``."""
        return OPS[self.op](value, self.threshold)

    def __str__(self) -> str:
        return f"{self.feature} {self.op} {self.threshold:g}"


@dataclass(frozen=True)
class Bounds:
    """Admissible feature values: ``min <= value <= max`` (a missing side is unbounded)."""

    min: float | None = None
    max: float | None = None

    def deviation(self, value: float) -> float:
        """Distance past the nearer violated bound (0 inside)."""
        below = self.min - value if self.min is not None else 0.0
        above = value - self.max if self.max is not None else 0.0
        return max(0.0, below, above)

    def margin(self, value: float) -> float | None:
        """Signed distance to the nearest bound (negative outside)."""
        low, high = self.min, self.max
        if low is None:
            return None if high is None else high - value
        return value - low if high is None else min(value - low, high - value)

    def widen(self, other: Bounds) -> Bounds:
        """The union: the lower of the minima and the higher of the maxima."""
        low = None if self.min is None or other.min is None else min(self.min, other.min)
        high = None if self.max is None or other.max is None else max(self.max, other.max)
        return Bounds(low, high)


@dataclass(frozen=True)
class Scope:
    """Which assistant turns an overlay judges: ``turn``, ``last_n`` (n of them), ``trajectory``."""

    kind: Literal["turn", "last_n", "trajectory"] = "turn"
    n: int = 1

    def __str__(self) -> str:
        return f"last_n: {self.n}" if self.kind == "last_n" else self.kind


class AdaptiveRigidity(Protocol):
    """What an overlay's ``margin`` does (:class:`governor.overlays.rigidity.Margin`)."""

    def judge(
        self, overlay: Overlay, context: Any, candidate: str, value: float, bounds: Bounds
    ) -> Verdict: ...


@dataclass(frozen=True)
class Overlay:
    """One rule; see the module docstring. Build from YAML with :func:`load_overlays`."""

    name: str
    feature: str
    bounds: Bounds
    epsilon: float = 0.0
    kind: Kind = "prohibitory"
    scope: Scope = Scope()
    priority: int = 0
    descriptor: str = "{feature} = {value:.2f} outside [{min}, {max}]"
    feedback: str = ""
    condition: Condition | None = None
    target: str | None = None
    severity: Severity = Severity.HIGH
    permits: tuple[Overlay, ...] = ()
    resources: Resources = field(default=DEFAULT_RESOURCES, compare=False, repr=False)
    calibration: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)
    margin: AdaptiveRigidity | None = None

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise SpecError(
                f"overlay {self.name!r}: kind: {expected(' or '.join(KINDS), self.kind)}"
            )
        if not (math.isfinite(self.epsilon) and self.epsilon >= 0):
            raise SpecError(f"overlay {self.name!r}: epsilon: {expected('>= 0', self.epsilon)}")

    def value(self, context: Any, candidate: str) -> float:
        """The feature value over this overlay's scope."""
        return self._value(as_dialogue(context), candidate)

    def _value(self, ctx: Dialogue, candidate: str) -> float:
        feature = get_feature(self.feature)
        fn, res = feature.fn, self.resources
        now = float(fn(ctx, candidate, res=res))
        if self.scope.kind == "turn" or feature.scope == "trajectory":
            return now
        if self.scope.kind == "last_n":
            history = bot_history(ctx, self.scope.n - 1) if self.scope.n > 1 else []
        else:
            history = bot_history(ctx)
        values = [float(fn(c, t, res=res)) for c, t in history] + [now]
        return sum(values) / len(values)

    def active(self, context: Any, candidate: str) -> bool:
        """Whether the overlay applies: its condition holds and its window is full.

        A ``last_n`` overlay applies once the assistant has n turns, the candidate included.
        """
        return self._active(as_dialogue(context), candidate)

    def _active(self, ctx: Dialogue, candidate: str) -> bool:
        if self.scope.kind == "last_n" and assistant_turns(ctx) + 1 < self.scope.n:
            return False
        if self.condition is None:
            return True
        fn = get_feature(self.condition.feature).fn
        return self.condition.holds(float(fn(ctx, candidate, res=self.resources)))

    def evaluate(self, context: Any, candidate: Any) -> Verdict:
        """Judge ``candidate`` after ``context`` (turns, or a trajectory)."""
        return self.judge(as_dialogue(context), candidate)

    def judge(self, ctx: Dialogue, candidate: Any) -> Verdict:
        """:meth:`evaluate` after a dialogue already read (the tuple of :class:`Turn` that
        :func:`as_dialogue` returns), as a constraint that reads it once per check passes it."""
        if not isinstance(candidate, str) or not candidate or candidate.isspace():
            found = "empty" if isinstance(candidate, str) else type(candidate).__name__
            return Verdict.reject(
                self.name, self.epsilon + 1.0, f"expected a text response, found {found}"
            )
        if len(candidate) > MAX_TURN_CHARS:
            found = f"{len(candidate):,} characters"
            wanted = f"a reply of at most {MAX_TURN_CHARS:,} characters"
            return Verdict.reject(
                self.name, self.epsilon + 1.0, f"expected {wanted}, found {found}"
            )
        if self.kind == "permissive":
            on = self._active(ctx, candidate)
            note = f"{self.target} widened ({self.condition})" if on else ""
            return Verdict.allow(self.name, descriptor=note)
        if not self._active(ctx, candidate):
            return Verdict.allow(self.name)
        bounds = self.bounds
        for permit in self.permits:
            if permit._active(ctx, candidate):
                bounds = bounds.widen(permit.bounds)
        value = self._value(ctx, candidate)
        if not math.isfinite(value):
            return Verdict.failed(self.name, f"{self.feature}: {expected('a number', value)}")
        if self.margin is not None:
            return self.margin.judge(self, ctx, candidate, value, bounds)
        deviation = bounds.deviation(value)
        margin = bounds.margin(value)
        if deviation == 0.0:
            return Verdict.allow(self.name, margin=margin)
        text = self.explain(value, bounds, deviation)
        if deviation <= self.epsilon:
            return Verdict.allow(self.name, margin=margin, deviation=deviation, descriptor=text)
        return Verdict.reject(self.name, deviation, text, margin=margin, severity=self.severity)

    def explain(self, value: float, bounds: Bounds, deviation: float) -> str:
        """The descriptor, then the feedback, filled in with the numbers."""
        slots = template_slots(self, value, bounds, deviation)
        text = self.descriptor.format(**slots)
        return f"{text}; {self.feedback.format(**slots)}" if self.feedback else text


def template_slots(
    overlay: Overlay, value: float, bounds: Bounds, deviation: float
) -> dict[str, Any]:
    """The names a descriptor or feedback template may use."""
    nan = math.nan
    return {
        "name": overlay.name,
        "feature": overlay.feature,
        "unit": get_feature(overlay.feature).unit,
        "value": value,
        "min": nan if bounds.min is None else bounds.min,
        "max": nan if bounds.max is None else bounds.max,
        "epsilon": overlay.epsilon,
        "deviation": deviation,
        "condition": str(overlay.condition) if overlay.condition else "",
    }
