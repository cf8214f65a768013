"""Adaptive rigidity (extension 2): an overlay whose tolerance shrinks with a safety margin.

An overlay with a ``margin`` tracks a running value n_t of a feature (its own by default) over
the assistant's last ``window`` turns before the candidate (``mean``: their sum over ``window``,
so turns not yet taken count 0; or ``sum``), and its margin m_t = ``bound`` - n_t. Barrier-
function style, the admissible step shrinks with the margin: the candidate's deviation past the
overlay's bounds is tolerated up to min(epsilon, ``alpha`` x max(m_t, 0)) instead of epsilon
(fixed rigidity). Near zero (m_t <= ``repair_below``) a repair is forced: only a candidate inside
the bounds that also meets ``requires`` (``"feature op number"``, e.g. ``encouragement >= 0.3``)
is admissible, and the rejection's feedback names the ``repair`` strategy. The running value is
read from the dialogue, so the check stays a pure function of the trajectory.

In YAML, a rule option::

    margin: {bound: 0.35, window: 4, alpha: 1.0, repair_below: 0.1,
             requires: "encouragement >= 0.3", repair: "encourage, or ask a supportive question"}
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from governor.core import Verdict
from governor.errors import ConfigError, SpecError, expected
from governor.overlays.features.base import get_feature
from governor.overlays.features.dialogue import Dialogue, bot_history
from governor.overlays.rules import Bounds, Condition, Overlay

FIELDS = ("bound", "window", "feature", "aggregate", "alpha", "repair_below", "requires", "repair")


@dataclass(frozen=True)
class Margin:
    """The margin of one overlay; see the module doc."""

    bound: float
    window: int = 3
    feature: str | None = None
    aggregate: Literal["mean", "sum"] = "mean"
    alpha: float = 1.0
    repair_below: float = 0.0
    requires: Condition | None = None
    repair: str = "repair: acknowledge and encourage"

    def __post_init__(self) -> None:
        if not (isinstance(self.window, int) and 1 <= self.window <= 1000):
            raise SpecError(f"margin window: {expected('an integer in [1, 1000]', self.window)}")
        if self.aggregate not in ("mean", "sum"):
            raise SpecError(f"margin aggregate: {expected('mean or sum', self.aggregate)}")
        for name in ("bound", "alpha", "repair_below"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise SpecError(f"margin {name}: {expected('a number', value)}")
            if not math.isfinite(value) or (name == "alpha" and value < 0):
                raise SpecError(f"margin {name}: {expected('a finite number (alpha >= 0)', value)}")

    def running(self, overlay: Overlay, context: Dialogue) -> float:
        """n_t: the running value over the assistant's last ``window`` turns before the candidate."""
        fn = get_feature(self.feature or overlay.feature).fn
        turns = bot_history(context)[-self.window :]
        total = sum(float(fn(c, text, res=overlay.resources)) for c, text in turns)
        return total / self.window if self.aggregate == "mean" else total

    def tolerance(self, epsilon: float, margin: float) -> float:
        """The deviation tolerated at margin ``margin``: min(epsilon, alpha x max(margin, 0))."""
        return min(epsilon, self.alpha * max(margin, 0.0))

    def judge(
        self, overlay: Overlay, context: Dialogue, candidate: str, value: float, bounds: Bounds
    ) -> Verdict:
        """The overlay's verdict on ``candidate`` (whose feature value is ``value``) under the margin."""
        running = self.running(overlay, context)
        m = self.bound - running
        deviation, to_bound = bounds.deviation(value), bounds.margin(value)
        state = (
            f"margin {m:.2f}: {self.feature or overlay.feature} {running:.2f} of"
            f" {self.bound:g} over the last {self.window} turns"
        )
        if m <= self.repair_below:
            short = 0.0
            if self.requires is not None:
                fn = get_feature(self.requires.feature).fn
                got = float(fn(context, candidate, res=overlay.resources))
                if not self.requires.holds(got):
                    short = max(abs(self.requires.threshold - got), 1e-3)
            if deviation > 0.0 or short > 0.0:
                text = f"{state}, near zero: {self.repair}"
                return Verdict.reject(
                    overlay.name,
                    max(deviation, short),
                    text,
                    margin=to_bound,
                    severity=overlay.severity,
                )
        if deviation == 0.0:
            return Verdict.allow(overlay.name, margin=to_bound)
        tol = self.tolerance(overlay.epsilon, m)
        text = f"{overlay.explain(value, bounds, deviation)} ({state}; tolerance {tol:.2f})"
        if deviation <= tol:
            return Verdict.allow(
                overlay.name, margin=to_bound, deviation=deviation, descriptor=text
            )
        return Verdict.reject(
            overlay.name, deviation, text, margin=to_bound, severity=overlay.severity
        )


def parse_margin(value: Any, fail: Callable[[str, str], SpecError]) -> Margin:
    """A rule's ``margin`` option (a mapping of :data:`FIELDS`); errors name the field."""
    if not isinstance(value, Mapping):
        raise fail("margin", expected(f"a mapping with some of {', '.join(FIELDS)}", value))
    unknown = sorted(set(map(str, value)) - set(FIELDS))
    if unknown:
        raise fail("margin", f"unknown key {unknown[0]!r}; expected some of {', '.join(FIELDS)}")
    if value.get("bound") is None:
        raise fail("margin", "missing 'bound' (the limit of the running value)")
    fields = dict(value)
    try:
        if fields.get("requires") is not None:
            fields["requires"] = Condition.parse(str(fields["requires"]))
            get_feature(fields["requires"].feature)
        if fields.get("feature") is not None:
            get_feature(str(fields["feature"]))
        for name in ("bound", "alpha", "repair_below"):
            if name in fields and not isinstance(fields[name], bool):
                fields[name] = (
                    float(fields[name]) if isinstance(fields[name], int) else fields[name]
                )
        if "repair" in fields:
            fields["repair"] = str(fields["repair"])
        return Margin(**fields)
    except (ValueError, ConfigError, SpecError, TypeError) as exc:
        raise fail("margin", str(exc)) from None


TUTORING_OVERLAYS = Path(__file__).with_name("tutoring.yaml")
"""The shipped example: the paper's tutoring overlays (negativity under a margin)."""
