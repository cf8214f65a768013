"""Trajectory features: how the assistant's turns change over the conversation.

Drift is the least-squares slope of a turn feature over the assistant's last ``n`` turns,
candidate included, in the feature's units per turn (0 with fewer than 3 turns): LLM small talk
grows longer and more specific as a conversation goes on, one turn at a time.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import numpy as np

from governor.overlays.features.base import (
    DEFAULT_RESOURCES,
    FeatureFn,
    Resources,
    get_feature,
    register,
)
from governor.overlays.features.dialogue import Dialogue, bot_history
from governor.overlays.features.text import memo

DRIFT_TURNS = 5
MIN_POINTS = 3


def slope(values: Sequence[float]) -> float:
    """Least-squares slope of ``values`` against their index (0 for fewer than 3 values)."""
    if len(values) < MIN_POINTS:
        return 0.0
    # Memoised by the values' exact bits (0.0 and -0.0 are equal keys, not the same value).
    return _slope(tuple(float(v).hex() for v in values))


@memo()
def _slope(bits: tuple[str, ...]) -> float:
    y = np.array([float.fromhex(b) for b in bits])
    x, xx = _centred(len(bits))
    # y.mean() is np.add.reduce(y) / n (what numpy's mean computes for a float array).
    return float(np.dot(x, y - np.add.reduce(y) / len(bits)) / xx)


@lru_cache(maxsize=64)
def _centred(n: int) -> tuple[np.ndarray, np.floating[Any]]:
    """The indices 0..n-1 less their mean (read only), and their sum of squares."""
    x = np.arange(n, dtype=float)
    x -= x.mean()
    x.flags.writeable = False
    return x, np.dot(x, x)


def exceedances(values: Sequence[float], bound: float) -> int:
    """How many values lie above ``bound`` (repeated violations of an upper bound)."""
    return sum(1 for v in values if v > bound)


def series(name: str, context: Dialogue, candidate: str, res: Resources, n: int) -> list[float]:
    """Feature ``name`` over the assistant's last ``n`` - 1 turns and the candidate."""
    fn = get_feature(name).fn
    history = bot_history(context, n - 1) if n > 1 else []
    return [*(fn(ctx, text, res=res) for ctx, text in history), fn(context, candidate, res=res)]


def make_drift(base: str, n: int = DRIFT_TURNS) -> FeatureFn:
    """A feature function: the slope of ``base`` over the last ``n`` assistant turns."""

    def drift(context: Dialogue, candidate: str, *, res: Resources = DEFAULT_RESOURCES) -> float:
        return slope(series(base, context, candidate, res, n))

    drift.__name__ = f"{base}_drift"
    drift.__doc__ = f"Slope of {base} over the assistant's last {n} turns."
    return drift


def register_drift(base: str, n: int = DRIFT_TURNS) -> str:
    """Register ``<base>_drift`` and return its name."""
    feature = get_feature(base)
    name = f"{base}_drift"
    register(
        name,
        range=(-float("inf"), float("inf")),
        unit=f"{feature.unit}/turn",
        scope="trajectory",
        description=f"least-squares slope of {base} over the assistant's last {n} turns",
        weak=feature.weak,
    )(make_drift(base, n))
    return name


for _base in ("word_count", "specificity", "assistance", "tone"):
    register_drift(_base)
