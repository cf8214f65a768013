"""The LTLf formula tree: immutable, hashable nodes, with past-time operators.

This module holds the base class and the node shapes (atoms, constants, ``end``, unary, binary
and n-ary nodes); the operators are node classes of :mod:`governor.ltl.operators`.

Every node is a frozen dataclass; equal formulas compare equal and hash alike (the hash is
computed once, at construction). ``str(f)`` prints infix text with the fewest parentheses that
:func:`governor.ltl.parser.parse` reads back to ``f``. Operators, strongest first::

    ! X WX F G Y Z O H      unary
    U W R M S B             binary temporal, right-associative
    &   |                   n-ary
    ->  <->                 right-associative

Past operators (``Y`` yesterday, ``Z`` weak yesterday, ``O`` once, ``H`` historically, ``S``
since, ``B`` weak since) take pure-past operands: atoms, constants, boolean connectives and past
operators. ``end`` holds only after the last position; progression uses it to say whether the
rest of a trace may be empty, and it never appears in a formula a person writes.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, ClassVar

from governor.errors import SpecError

FUTURE, PAST, ENDS = 1, 2, 4  # flags: has a future operator, a past operator, ``end``
IFF, IMPLIES, OR, AND, TEMPORAL, UNARY, ATOMIC = range(1, 8)  # binding strength when printed

MAX_DEPTH = 150
"""The deepest formula a node may head. Printing, progression and satisfiability recurse over the
tree, so its depth is bounded once, here, and every formula built or parsed obeys it."""

NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
ARG = re.compile(r"[A-Za-z0-9_]+")
KEYWORDS = frozenset(
    {"true", "false", "end", "and", "or", "not"}
    | {"X", "WX", "N", "F", "G", "U", "W", "R", "M", "Y", "Z", "O", "H", "S", "B"}
)  # reserved in infix text; not usable as atom names


class Formula:
    """Base class of every node. Build nodes with the classes below or with ``parse``."""

    __slots__ = ("_depth", "_flags", "_hash", "_text")
    PREC: ClassVar[int] = ATOMIC
    SYMBOL: ClassVar[str] = ""
    KIND: ClassVar[int] = 0
    _depth: int
    _flags: int
    _hash: int
    _text: str | None

    def children(self) -> tuple[Formula, ...]:
        return ()

    def _fields(self) -> tuple[Any, ...]:
        return ()

    def _seal(self, own: int = 0) -> None:
        flags, depth = own, 1
        for child in self.children():
            if not isinstance(child, Formula):
                raise SpecError(f"{type(self).__name__}: expected a Formula, found {child!r}")
            if own & PAST and child._flags & (FUTURE | ENDS):
                raise SpecError(
                    f"{self.SYMBOL}: expected a pure-past operand (atoms, boolean connectives,"
                    f" past operators), found {child}"
                )
            flags |= child._flags
            depth = max(depth, child._depth + 1)
        if depth > MAX_DEPTH:
            raise SpecError(
                f"{self.SYMBOL or type(self).__name__}: expected a formula nested at most"
                f" {MAX_DEPTH} levels deep, found {depth} levels"
            )
        object.__setattr__(self, "_depth", depth)
        object.__setattr__(self, "_flags", flags)
        object.__setattr__(self, "_hash", hash((type(self), *self._fields())))
        object.__setattr__(self, "_text", None)

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if type(other) is not type(self):
            return False if isinstance(other, Formula) else NotImplemented
        assert isinstance(other, Formula)
        return self._hash == other._hash and self._fields() == other._fields()

    def __str__(self) -> str:
        text = self._text
        if text is None:
            text = self._render()
            object.__setattr__(self, "_text", text)
        return text

    def __repr__(self) -> str:
        return f"parse({str(self)!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), self._fields())

    def _render(self) -> str:
        raise NotImplementedError

    @property
    def depth(self) -> int:
        """The number of nodes on the longest path from this node to a leaf."""
        return self._depth

    @property
    def has_future(self) -> bool:
        """Whether a future operator (X WX F G U W R M) occurs in the formula."""
        return bool(self._flags & FUTURE)

    @property
    def has_past(self) -> bool:
        """Whether a past operator (Y Z O H S B) occurs in the formula."""
        return bool(self._flags & PAST)

    def walk(self) -> Iterator[Formula]:
        """Every subformula, this one first (depth first, left to right)."""
        stack: list[Formula] = [self]
        while stack:
            node = stack.pop()
            yield node
            stack.extend(reversed(node.children()))

    def atoms(self) -> frozenset[Atom]:
        """The atoms that occur in the formula."""
        return frozenset(f for f in self.walk() if isinstance(f, Atom))

    def atom_labels(self) -> frozenset[str]:
        """The label text (``str``) of each atom: what a labelling function must produce."""
        return frozenset(a.label for a in self.atoms())


def _wrap(f: Formula, strength: int) -> str:
    return str(f) if strength <= f.PREC else f"({f})"


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Atom(Formula):
    """A proposition: a bare name (``kitchen``) or a predicate (``is_in(apple, fridge)``).

    Its label, the text a labelling function puts in a state's label set, is ``str(atom)``:
    the name, then the arguments in parentheses joined by ``", "``.
    """

    name: str
    args: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        args = (self.args,) if isinstance(self.args, str) else tuple(self.args)
        object.__setattr__(self, "args", args)
        if not isinstance(self.name, str) or not NAME.fullmatch(self.name):
            raise SpecError(
                f"atom name: expected a letter then letters, digits or _, found {self.name!r}"
            )
        if self.name in KEYWORDS:
            raise SpecError(
                f"atom name: expected a name that is not a keyword, found {self.name!r}"
            )
        for arg in args:
            if not isinstance(arg, str) or not ARG.fullmatch(arg):
                raise SpecError(f"atom argument: expected letters, digits or _, found {arg!r}")
        self._seal()

    def _fields(self) -> tuple[Any, ...]:
        return (self.name, self.args)

    def _render(self) -> str:
        return f"{self.name}({', '.join(self.args)})" if self.args else self.name

    @property
    def label(self) -> str:
        return str(self)


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Const(Formula):
    """``true`` or ``false``."""

    value: bool

    def __post_init__(self) -> None:
        if not isinstance(self.value, bool):
            raise SpecError(f"constant: expected True or False, found {self.value!r}")
        self._seal()

    def _fields(self) -> tuple[Any, ...]:
        return (self.value,)

    def _render(self) -> str:
        return "true" if self.value else "false"


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class End(Formula):
    """``end``: the rest of the trace is empty (false at every position of a trace)."""

    def __post_init__(self) -> None:
        self._seal(ENDS)

    def _render(self) -> str:
        return "end"


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Unary(Formula):
    arg: Formula
    PREC: ClassVar[int] = UNARY

    def __post_init__(self) -> None:
        self._seal(self.KIND)

    def children(self) -> tuple[Formula, ...]:
        return (self.arg,)

    def _fields(self) -> tuple[Any, ...]:
        return (self.arg,)

    def _render(self) -> str:
        inner = _wrap(self.arg, UNARY)
        if self.SYMBOL == "!" or inner.startswith("("):
            return self.SYMBOL + inner
        return f"{self.SYMBOL} {inner}"


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Binary(Formula):
    left: Formula
    right: Formula
    PREC: ClassVar[int] = TEMPORAL

    def __post_init__(self) -> None:
        self._seal(self.KIND)

    def children(self) -> tuple[Formula, ...]:
        return (self.left, self.right)

    def _fields(self) -> tuple[Any, ...]:
        return (self.left, self.right)

    def _render(self) -> str:
        # right-associative: the left operand must bind tighter than this operator
        return f"{_wrap(self.left, self.PREC + 1)} {self.SYMBOL} {_wrap(self.right, self.PREC)}"


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class NAry(Formula):
    args: tuple[Formula, ...]
    PREC: ClassVar[int] = AND

    def __post_init__(self) -> None:
        args = tuple(self.args)
        object.__setattr__(self, "args", args)
        if len(args) < 2:
            raise SpecError(
                f"{type(self).__name__}: expected 2 or more operands, found {len(args)}"
            )
        self._seal()

    def children(self) -> tuple[Formula, ...]:
        return self.args

    def _fields(self) -> tuple[Any, ...]:
        return (self.args,)

    def _render(self) -> str:
        return f" {self.SYMBOL} ".join(_wrap(a, self.PREC + 1) for a in self.args)


TRUE = Const(True)
FALSE = Const(False)
END = End()
