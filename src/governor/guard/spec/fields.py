"""Reading a policy file's values: typed getters whose errors name the file, the path inside it
(``policy.yaml: ltl[2].formula``), what was expected and what was found.

Imports the error tree only.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, NoReturn

from governor.errors import ConfigError, expected


@dataclass(frozen=True)
class At:
    """A place in a policy file: the file's name and the path to a value inside it."""

    file: str
    path: str = ""

    def key(self, name: str) -> At:
        return At(self.file, f"{self.path}.{name}" if self.path else name)

    def index(self, i: int) -> At:
        return At(self.file, f"{self.path}[{i}]")

    def __str__(self) -> str:
        return f"{self.file}: {self.path}" if self.path else self.file

    def fail(self, what: str, found: Any) -> NoReturn:
        raise ConfigError(f"{self}: {expected(what, found)}")

    def error(self, message: str) -> ConfigError:
        return ConfigError(f"{self}: {message}")


def mapping(
    value: Any, at: At, allowed: Iterable[str], required: Iterable[str] = ()
) -> Mapping[str, Any]:
    """``value`` as a mapping whose keys are all ``allowed`` and include the ``required`` ones."""
    allowed, required = tuple(allowed), tuple(required)
    if not isinstance(value, Mapping):
        at.fail(f"a mapping with keys {', '.join(allowed)}", value)
    unknown = sorted(str(k) for k in value if k not in allowed)
    if unknown:
        raise at.error(
            f"unknown key(s) {', '.join(unknown)}; expected some of {', '.join(allowed)}"
        )
    missing = [k for k in required if k not in value]
    if missing:
        raise at.error(f"missing key(s) {', '.join(missing)}")
    return value


def text(value: Any, at: At, *, empty: bool = False) -> str:
    if not isinstance(value, str) or (not empty and not value.strip()):
        at.fail("non-empty text" if not empty else "text", value)
    return value


def optional_text(value: Any, at: At) -> str | None:
    return None if value is None else text(value, at)


def boolean(value: Any, at: At) -> bool:
    if not isinstance(value, bool):
        at.fail("true or false", value)
    return value


def number(value: Any, at: At) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        at.fail("a finite number", value)
    return float(value)


def items(value: Any, at: At) -> list[Any]:
    if not isinstance(value, list):
        at.fail("a list", value)
    return value


def names(value: Any, at: At) -> tuple[str, ...]:
    """A list of non-empty names."""
    return tuple(text(v, at.index(i)) for i, v in enumerate(items(value, at)))
