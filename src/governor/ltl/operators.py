"""The LTLf operators as node classes: boolean connectives, future and past temporal operators.

Each class is a frozen node of :mod:`governor.ltl.syntax` with its printed symbol, its kind (future
or past) and its binding strength; ``str(f)`` prints infix text that :func:`governor.ltl.parser.parse`
reads back. Imports the formula base classes only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from governor.ltl.syntax import FUTURE, IFF, IMPLIES, OR, PAST, Binary, NAry, Unary


def _node(symbol: str, kind: int = 0, prec: int | None = None) -> Any:
    """Decorate a node class: its printed symbol, kind flag and binding strength."""

    def decorate(cls: type) -> type:
        cls.SYMBOL = symbol  # type: ignore[attr-defined]
        cls.KIND = kind  # type: ignore[attr-defined]
        if prec is not None:
            cls.PREC = prec  # type: ignore[attr-defined]
        return dataclass(frozen=True, slots=True, eq=False, repr=False)(cls)

    return decorate


@_node("!")
class Not(Unary):
    """Negation."""


@_node("&")
class And(NAry):
    """Conjunction of two or more operands."""


@_node("|", prec=OR)
class Or(NAry):
    """Disjunction of two or more operands."""


@_node("->", prec=IMPLIES)
class Implies(Binary):
    """Implication, right-associative."""


@_node("<->", prec=IFF)
class Iff(Binary):
    """Equivalence, right-associative."""


@_node("X", FUTURE)
class Next(Unary):
    """Strong next: a next position exists and the operand holds there."""


@_node("WX", FUTURE)
class WeakNext(Unary):
    """Weak next: no next position exists, or the operand holds there."""


@_node("F", FUTURE)
class Eventually(Unary):
    """The operand holds now or at some later position."""


@_node("G", FUTURE)
class Always(Unary):
    """The operand holds now and at every later position."""


@_node("U", FUTURE)
class Until(Binary):
    """The right operand holds eventually, and the left one at every position before."""


@_node("W", FUTURE)
class WeakUntil(Binary):
    """Until, or the left operand holds to the end: ``(a U b) | G a``."""


@_node("R", FUTURE)
class Release(Binary):
    """The right operand holds up to and including the first position where the left one does
    (or to the end): ``!(!a U !b)``."""


@_node("M", FUTURE)
class StrongRelease(Binary):
    """Release that must end (Spot's ``M``): the right operand holds up to and including a
    position where the left one holds, and that position comes: ``b U (a & b)``."""


@_node("Y", PAST)
class Yesterday(Unary):
    """A previous position exists and the operand held there."""


@_node("Z", PAST)
class WeakYesterday(Unary):
    """No previous position exists, or the operand held there."""


@_node("O", PAST)
class Once(Unary):
    """The operand holds now or held at some earlier position."""


@_node("H", PAST)
class Historically(Unary):
    """The operand holds now and held at every earlier position."""


@_node("S", PAST)
class Since(Binary):
    """The right operand held at some position up to now, and the left one at every later one."""


@_node("B", PAST)
class WeakSince(Binary):
    """Since, or the left operand held at every position so far: ``(a S b) | H a``."""
