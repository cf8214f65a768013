"""The human reference: calibrated quantiles of human feature values, and matching a draw from it.

:func:`fit_reference` records, per feature, the quantiles of human values (calibration split) at
``levels`` and how the feature was computed. :meth:`HumanReference.rank` maps a value to its place
in the human distribution (0 lowest, 1 highest; the middle of a run of tied quantiles, so a
common value such as a tone of exactly 0 gets the middle of its share). :meth:`HumanReference.draw`
draws a target place per feature, uniformly, from a seed and a key; :meth:`HumanReference.distance`
is the mean absolute difference between a reply's places and the target's.

Choosing among candidate replies the one nearest a fresh uniform draw is inverse-transform
sampling restricted to the candidates: with many candidates the chosen values follow the human
distribution of each feature (its spread included, unlike preferring the median); with few it moves
them toward it and narrows the spread somewhat. The features are drawn independently, so only
their marginals are matched.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from governor.errors import SpecError, expected

LEVELS = tuple(round(i / 50, 2) for i in range(51))


@dataclass(frozen=True)
class HumanReference:
    """Human quantiles at ``levels`` of each of ``features``, and the method that computed them."""

    levels: tuple[float, ...]
    features: tuple[str, ...]
    quantiles: tuple[tuple[float, ...], ...]
    methods: tuple[str, ...]

    def __post_init__(self) -> None:
        lv = np.asarray(self.levels, dtype=float)
        if len(lv) < 2 or lv[0] != 0.0 or lv[-1] != 1.0 or np.any(np.diff(lv) <= 0):
            raise SpecError(f"reference levels: {expected('0 ... 1, increasing', self.levels)}")
        if not self.features or not len(self.features) == len(self.quantiles) == len(self.methods):
            raise SpecError(
                f"reference: {expected('one quantile list and method per feature', self.features)}"
            )
        for name, q in zip(self.features, self.quantiles, strict=True):
            if len(q) != len(lv) or np.any(np.diff(q) < 0) or not np.all(np.isfinite(q)):
                raise SpecError(
                    f"reference {name}: {expected(f'{len(lv)} non-decreasing numbers', q)}"
                )

    def method(self, feature: str) -> str:
        """How ``feature`` was computed for the reference."""
        return self.methods[self.features.index(feature)]

    def rank(self, feature: str, value: float) -> float:
        """Where ``value`` lies in the human distribution of ``feature``, in [0, 1]."""
        q = np.asarray(self.quantiles[self.features.index(feature)])
        lv = np.asarray(self.levels)
        lo, hi = np.searchsorted(q, value, "left"), np.searchsorted(q, value, "right")
        if hi > lo:  # ties: the middle of the levels where the quantile equals the value
            return float(lv[lo:hi].mean())
        if lo == 0:
            return 0.0
        if lo == len(q):
            return 1.0
        a, b = q[lo - 1], q[lo]
        return float(lv[lo - 1] + (lv[lo] - lv[lo - 1]) * (value - a) / (b - a))

    def draw(self, seed: int, key: str) -> dict[str, float]:
        """A uniform target place per feature, a pure function of ``seed`` and ``key``."""
        digest = hashlib.sha256(f"{seed}\x1e{key}".encode()).digest()
        rng = np.random.default_rng(int.from_bytes(digest[:8], "big"))
        places = rng.random(len(self.features))
        return {f: float(u) for f, u in zip(self.features, places, strict=True)}

    def distance(self, values: Mapping[str, float], target: Mapping[str, float]) -> float:
        """Mean absolute difference between the places of ``values`` and ``target``."""
        gaps = [abs(self.rank(f, values[f]) - target[f]) for f in self.features]
        return sum(gaps) / len(gaps)

    def to_dict(self) -> dict[str, Any]:
        """The YAML form."""
        return {
            "levels": list(self.levels),
            "features": {
                f: {"method": m, "quantiles": [round(x, 4) for x in q]}
                for f, q, m in zip(self.features, self.quantiles, self.methods, strict=True)
            },
        }


def fit_reference(
    values: Mapping[str, Sequence[float]],
    methods: Mapping[str, str],
    levels: Sequence[float] = LEVELS,
) -> HumanReference:
    """Quantiles of each feature's human values at ``levels``."""
    names = tuple(values)
    quantiles = tuple(
        tuple(float(x) for x in np.quantile(np.asarray(values[f], dtype=float), levels))
        for f in names
    )
    return HumanReference(tuple(levels), names, quantiles, tuple(methods[f] for f in names))


def reference_from(data: Any, where: str) -> HumanReference:
    """Read the ``features.human_reference`` section of an overlay file."""
    try:
        features = data["features"]
        return HumanReference(
            tuple(float(x) for x in data["levels"]),
            tuple(str(f) for f in features),
            tuple(tuple(float(x) for x in spec["quantiles"]) for spec in features.values()),
            tuple(str(spec["method"]) for spec in features.values()),
        )
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise SpecError(f"{where}: features: human_reference: {exc!r}") from exc
