"""Configuration: frozen dataclasses whose fields are checked against their declared types.

Every tunable has a default and a help text (the ``help`` metadata of its field), which become the
command-line help of the scripts configured by the dataclass (:mod:`governor.flags`); files are
read by :mod:`governor.files` and validated here (:func:`from_mapping`). Holds the runtime loop's
:class:`ObserverConfig` and the endpoint's :class:`BackendConfig`. Imports the error tree only.
"""

from __future__ import annotations

import dataclasses
import os
import types
import typing
from collections.abc import Mapping
from typing import Any, Literal, TypeVar

from governor.errors import ConfigError, expected

C = TypeVar("C")

ARBITRATION_MODES = ("intersection", "majority", "weighted")


def option(default: Any, help: str, **kwargs: Any) -> Any:
    """A dataclass field with a default and a help text."""
    if isinstance(default, (dict, list, set)):
        value = default
        return dataclasses.field(
            default_factory=lambda: type(value)(value), metadata={"help": help}, **kwargs
        )
    return dataclasses.field(default=default, metadata={"help": help}, **kwargs)


@dataclasses.dataclass(frozen=True)
class ObserverConfig:
    """Bounds and arbitration of the runtime loop."""

    n_candidates: int = option(1, "candidates the base policy proposes per attempt")
    max_regenerations: int = option(3, "regenerations with forced feedback before the fallback")
    time_budget_s: float | None = option(
        30.0, "seconds a step may take before the fallback (None: unbounded)"
    )
    fallback_budget_s: float = option(5.0, "seconds the fallback itself may take")
    arbitration: Literal["intersection", "majority", "weighted"] = option(
        "intersection", "how verdicts combine: intersection, majority or weighted"
    )
    weights: Mapping[str, float] = option({}, "constraint name -> weight (weighted voting)")
    quorum: float = option(0.5, "weighted voting: fraction of the total weight a candidate needs")
    min_confidence: float = option(0.0, "tau: reject when the best admissible confidence is below")
    stop_on_repeat: bool = option(True, "go to the fallback early when the same violation repeats")

    def __post_init__(self) -> None:
        check_types(self)
        check_range("n_candidates", self.n_candidates, 1, 64)
        check_range("max_regenerations", self.max_regenerations, 0, 32)
        if self.time_budget_s is not None:
            check_range("time_budget_s", self.time_budget_s, 1e-6, 3600.0)
        check_range("fallback_budget_s", self.fallback_budget_s, 1e-6, 3600.0)
        if self.arbitration not in ARBITRATION_MODES:
            raise ConfigError(
                f"arbitration: {expected(' or '.join(ARBITRATION_MODES), self.arbitration)}"
            )
        check_range("quorum", self.quorum, 0.0, 1.0)
        check_range("min_confidence", self.min_confidence, 0.0, 1.0)
        for name, weight in self.weights.items():
            check_range(f"weights[{name}]", weight, 0.0, 1e9)


@dataclasses.dataclass(frozen=True)
class BackendConfig:
    """Where an OpenAI-compatible endpoint is and how patiently to talk to it."""

    base_url: str | None = option(None, "endpoint base URL, e.g. http://127.0.0.1:8000/v1")
    model: str | None = option(None, "model name sent with every request")
    api_key: str | None = option(None, "bearer token (never printed)", repr=False)
    timeout_s: float = option(60.0, "seconds to wait for one HTTP answer")
    max_retries: int = option(2, "retries after a timeout, a 429 or a 5xx (0: none)")
    backoff_s: float = option(0.5, "first retry delay; doubles each retry")
    deadline_s: float | None = option(
        None, "seconds one call may take in all, retries and waits included (None: timeout_s)"
    )
    breaker_failures: int = option(
        3,
        "consecutive failed calls after which calls fail at once until a probe succeeds (0: never)",
    )
    breaker_cooldown_s: float = option(30.0, "seconds the circuit stays open before a probe")
    model_path: str | None = option(
        None, "a local transformers folder, or gemma3-270m (fetched), instead of an endpoint"
    )

    def __post_init__(self) -> None:
        check_types(self)
        check_range("timeout_s", self.timeout_s, 1e-3, 3600.0)
        check_range("max_retries", self.max_retries, 0, 10)
        check_range("backoff_s", self.backoff_s, 0.0, 60.0)
        if self.deadline_s is not None:
            check_range("deadline_s", self.deadline_s, 1e-3, 36_000.0)
        check_range("breaker_failures", self.breaker_failures, 0, 1000)
        check_range("breaker_cooldown_s", self.breaker_cooldown_s, 0.0, 3600.0)
        if self.base_url is not None and not self.base_url.startswith(("http://", "https://")):
            raise ConfigError(f"base_url: {expected('an http:// or https:// URL', self.base_url)}")

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, **overrides: Any) -> BackendConfig:
        """GOVERNOR_BASE_URL, GOVERNOR_MODEL, GOVERNOR_API_KEY and GOVERNOR_MODEL_PATH, overridden
        by non-None flags."""
        env = os.environ if environ is None else environ
        values: dict[str, Any] = {
            "base_url": env.get("GOVERNOR_BASE_URL") or None,
            "model": env.get("GOVERNOR_MODEL") or None,
            "api_key": env.get("GOVERNOR_API_KEY") or None,
            "model_path": env.get("GOVERNOR_MODEL_PATH") or None,
        }
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)

    @property
    def configured(self) -> bool:
        return self.base_url is not None and self.model is not None


SEED_MAX = 2**32 - 1
"""Seeds are integers in [0, SEED_MAX] (what numpy's generators accept)."""


def check_types(obj: Any) -> None:
    """Raise a ConfigError naming the first field of dataclass ``obj`` whose value does not have
    its declared type (int, float, bool, str, a Literal, ``X | None``, or a mapping of str to
    numbers). A bool is not a number here, and an int is not a bool; a field named ``seed`` is an
    integer in [0, :data:`SEED_MAX`]; fields of other types are left to the dataclass's own
    checks."""
    hints = typing.get_type_hints(type(obj))
    for f in dataclasses.fields(obj):
        value = getattr(obj, f.name)
        wanted = _type_error(hints[f.name], value)
        if wanted:
            raise ConfigError(f"{f.name}: {expected(wanted, value)}")
        if f.name == "seed" and isinstance(value, int):
            check_range("seed", value, 0, SEED_MAX)


def _type_error(kind: Any, value: Any) -> str | None:
    """What ``value`` should have been for the type ``kind``; None when it fits (or is unknown)."""
    origin, args = typing.get_origin(kind), typing.get_args(kind)
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        problems = [_type_error(a, value) for a in args if a is not type(None)]
        return None if any(p is None for p in problems) else " or ".join(filter(None, problems))
    if origin is Literal:
        return None if value in args else "one of " + ", ".join(map(str, args))
    if kind is bool:
        return None if isinstance(value, bool) else "true or false"
    if kind is int:
        return None if isinstance(value, int) and not isinstance(value, bool) else "an integer"
    if kind is float:
        number = isinstance(value, (int, float)) and not isinstance(value, bool)
        return None if number else "a number"
    if kind is str:
        return None if isinstance(value, str) else "text"
    if origin in (Mapping, dict) and len(args) == 2 and args[0] is str:
        if not isinstance(value, Mapping):
            return "a mapping"
        for key, item in value.items():
            if not isinstance(key, str) or _type_error(args[1], item):
                return f"a mapping of names to {_type_error(args[1], object()) or 'values'}"
    return None


def check_range(name: str, value: Any, low: float, high: float) -> None:
    """Raise a ConfigError unless ``low <= value <= high`` (bools are not numbers here)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:
        raise ConfigError(f"{name}: {expected(f'a number in [{low:g}, {high:g}]', value)}")


def from_mapping(cls: type[C], data: Mapping[str, Any], where: str = "config") -> C:
    """Build a config dataclass from a mapping, naming unknown keys and bad values."""
    names = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    unknown = sorted(set(data) - names)
    if unknown:
        raise ConfigError(
            f"{where}: unknown key(s) {', '.join(unknown)};"
            f" expected some of {', '.join(sorted(names))}"
        )
    try:
        made = cls(**data)
        check_types(made)
        return made
    except TypeError as exc:
        raise ConfigError(f"{where}: {exc}") from exc
    except ConfigError as exc:
        message = str(exc)
        raise ConfigError(message if message.startswith(where) else f"{where}: {message}") from exc
