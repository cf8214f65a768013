"""The feature registry and the resources features may use.

A feature is a function ``f(context, candidate, *, res=DEFAULT_RESOURCES) -> float``: ``context``
is the dialogue before the candidate (a tuple of :class:`Turn`, oldest first), ``candidate`` the
text being judged. The registry :data:`FEATURES` holds each feature's metadata; :func:`measure`
computes one and says how it was computed (a tokenizer or an estimate, an embedding or a lexical
proxy).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from types import MappingProxyType
from typing import Any, Literal, Protocol

import numpy as np

from governor.errors import ConfigError, expected
from governor.overlays.features.dialogue import Dialogue, as_dialogue
from governor.overlays.reference import HumanReference

Scope = Literal["turn", "trajectory"]
Embed = Callable[[Sequence[str]], np.ndarray]
Tokenizer = Callable[[str], Sequence[object]]


@dataclass(frozen=True)
class ToneWeights:
    """Weights of the tone combination C = H*w_H + mean_i(s_i*w_i).

    ``sentences[k]`` weighs the k-th sentence; later sentences use the last entry.
    """

    whole: float = 0.5
    sentences: tuple[float, ...] = (0.5,)

    def __post_init__(self) -> None:
        if not self.sentences:
            raise ConfigError(f"tone weights: {expected('at least one sentence weight', ())}")

    def weight(self, i: int) -> float:
        """w_i, the weight of the i-th sentence (0-based)."""
        return self.sentences[min(i, len(self.sentences) - 1)]

    @cached_property
    def bits(self) -> tuple[str, tuple[str, ...]]:
        """The weights' exact bits (``float.hex`` of the whole's and of each sentence's), a cache
        key that tells 0.0 from -0.0 (equal weights, not the same ones); read once per weights."""
        return float(self.whole).hex(), tuple(float(w).hex() for w in self.sentences)


@dataclass(frozen=True)
class SpecificityNorms:
    """Maximum expected counts per response (human upper quantiles) that normalise specificity."""

    proper_nouns: float = 2.0
    numbers: float = 2.0
    descriptive: float = 6.0
    rare_rate: float = 0.3

    def __post_init__(self) -> None:
        for name in ("proper_nouns", "numbers", "descriptive", "rare_rate"):
            value = getattr(self, name)
            if not value > 0:
                raise ConfigError(f"specificity maximum {name}: {expected('a number > 0', value)}")


@dataclass(frozen=True)
class Resources:
    """What features may use beyond the text: optional models and calibrated parameters.

    ``tokenizer`` maps a text to its tokens (counted); ``embed`` maps texts to one vector each
    (``Backend.embed``, where every call is an LLM call, or the local
    :class:`~governor.overlays.embed.minilm.LocalEmbed`). Without them, features fall back to estimates
    and proxies, reported by :func:`measure`. ``reference`` is the calibrated human distribution
    of some features, used to prefer human-like replies (no feature reads it).
    """

    tokenizer: Tokenizer | None = None
    embed: Embed | None = None
    tone: ToneWeights = ToneWeights()
    specificity: SpecificityNorms = SpecificityNorms()
    reference: HumanReference | None = None


DEFAULT_RESOURCES = Resources()


class FeatureFn(Protocol):
    """The signature of a feature: the dialogue so far and the candidate text to a number."""

    def __call__(self, context: Dialogue, candidate: str, *, res: Resources = ...) -> float: ...


@dataclass(frozen=True)
class Feature:
    """A registered feature and what it means.

    ``low``/``high`` bound its values (infinite where unbounded); ``weak`` marks a proxy that
    is weak evidence on its own; ``optional`` names the resource (``tokenizer`` or ``embed``)
    whose absence turns the feature into an estimate or proxy, named by ``fallback``; ``grows``
    says that its value never falls as text is added to the candidate (a count), so an upper
    bound violated by a prefix stays violated.
    """

    name: str
    fn: FeatureFn
    low: float
    high: float
    unit: str
    scope: Scope
    description: str
    weak: bool = False
    optional: Literal["tokenizer", "embed"] | None = None
    method: str = "direct"
    fallback: str = ""
    grows: bool = False

    @property
    def range(self) -> tuple[float, float]:
        """(low, high)."""
        return (self.low, self.high)

    def method_with(self, res: Resources) -> str:
        """How this feature is computed with ``res``."""
        if self.optional is not None and getattr(res, self.optional) is None:
            return self.fallback
        return self.method

    def weak_with(self, res: Resources) -> bool:
        """Whether the value is a weak proxy when computed with ``res``."""
        return self.weak or self.method_with(res) != self.method


@dataclass(frozen=True)
class Measurement:
    """One feature value, how it was computed, and whether it is a weak proxy."""

    feature: str
    value: float
    method: str
    weak: bool


_REGISTRY: dict[str, Feature] = {}
FEATURES: Mapping[str, Feature] = MappingProxyType(_REGISTRY)


def register(
    name: str,
    *,
    range: tuple[float, float],
    unit: str,
    description: str,
    scope: Scope = "turn",
    weak: bool = False,
    optional: Literal["tokenizer", "embed"] | None = None,
    method: str = "direct",
    fallback: str = "",
    grows: bool = False,
) -> Callable[[FeatureFn], FeatureFn]:
    """Decorator: add a feature function to :data:`FEATURES` under ``name``."""

    def add(fn: FeatureFn) -> FeatureFn:
        if name in _REGISTRY:
            raise ConfigError(f"feature {name!r} is already registered")
        low, high = range
        if not getattr(fn, "__doc__", None):
            fn.__doc__ = f"Feature {name!r}: {description}; {unit} in [{low:g}, {high:g}]."
        _REGISTRY[name] = Feature(
            name, fn, low, high, unit, scope, description, weak, optional, method, fallback, grows
        )
        return fn

    return add


def get_feature(name: str) -> Feature:
    """The registered feature ``name``; the error lists the known ones."""
    try:
        return _REGISTRY[name]
    except KeyError:
        raise ConfigError(
            f"unknown feature {name!r}; known features: {', '.join(sorted(_REGISTRY))}"
        ) from None


def measure(
    name: str, context: Any, candidate: str, res: Resources = DEFAULT_RESOURCES
) -> Measurement:
    """Compute feature ``name`` for ``candidate`` after ``context`` (turns or a trajectory)."""
    feature = get_feature(name)
    value = float(feature.fn(as_dialogue(context), candidate, res=res))
    return Measurement(name, value, feature.method_with(res), feature.weak_with(res))


def measure_all(
    context: Any,
    candidate: str,
    res: Resources = DEFAULT_RESOURCES,
    names: Sequence[str] | None = None,
) -> dict[str, Measurement]:
    """Every registered feature (or those named) for one candidate."""
    return {n: measure(n, context, candidate, res) for n in (names or sorted(_REGISTRY))}
