"""Validating the fields of an overlay file: numbers, bounds, scopes, severities, parameters.

Each helper takes ``fail(field, message) -> SpecError`` so the error names the rule and field.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

from governor.core import Severity
from governor.errors import SpecError, expected
from governor.overlays.features.base import (
    DEFAULT_RESOURCES,
    Embed,
    Resources,
    SpecificityNorms,
    Tokenizer,
    ToneWeights,
)
from governor.overlays.reference import reference_from
from governor.overlays.rules import Bounds, Scope

Fail = Callable[[str, str], SpecError]
BOUNDS_KEYS = ("min", "max")
SCOPE_KEYS = ("last_n",)


def resources_from(
    features: Any, where: str, tokenizer: Tokenizer | None, embed: Embed | None
) -> Resources:
    """Calibrated feature parameters plus the given models."""
    if not isinstance(features, Mapping):
        raise SpecError(f"{where}: features: {expected('a mapping', features)}")
    try:
        tone = features.get("tone_weights")
        weights = (
            ToneWeights(float(tone["whole"]), tuple(float(w) for w in tone["sentences"]))
            if tone
            else DEFAULT_RESOURCES.tone
        )
        norms = features.get("specificity_max")
        spec = SpecificityNorms(**{k: float(v) for k, v in norms.items()}) if norms else None
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise SpecError(f"{where}: features: {exc}") from exc
    human = features.get("human_reference")
    reference = reference_from(human, where) if human is not None else None
    return Resources(tokenizer, embed, weights, spec or DEFAULT_RESOURCES.specificity, reference)


def number(value: Any, field: str, fail: Fail) -> float:
    """A finite number (booleans are not numbers here)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise fail(field, expected("a finite number", value))
    return float(value)


def parse_bounds(value: Any, fail: Fail) -> Bounds:
    """``{min, max}`` with at least one side and min <= max."""
    if not isinstance(value, Mapping) or not value or set(value) - set(BOUNDS_KEYS):
        raise fail("bounds", expected("a mapping with min and/or max", value))
    low = number(value["min"], "bounds", fail) if value.get("min") is not None else None
    high = number(value["max"], "bounds", fail) if value.get("max") is not None else None
    if (low is None and high is None) or (low is not None and high is not None and low > high):
        raise fail("bounds", expected("min <= max, at least one given", dict(value)))
    return Bounds(low, high)


def parse_scope(value: Any, fail: Fail) -> Scope:
    """``turn``, ``trajectory`` or ``{last_n: N}``."""
    if value in ("turn", "trajectory"):
        return Scope(value)
    if isinstance(value, Mapping) and set(value) == set(SCOPE_KEYS):
        n = value["last_n"]
        if not isinstance(n, bool) and isinstance(n, int) and n >= 1:
            return Scope("last_n", n)
    raise fail("scope", expected("turn, trajectory or {last_n: N} with N >= 1", value))


def parse_severity(value: Any, fail: Fail) -> Severity:
    """A severity name, any case."""
    names = [s.name.lower() for s in Severity]
    if str(value).lower() not in names:
        raise fail("severity", expected(" or ".join(names), value))
    return Severity[str(value).upper()]
