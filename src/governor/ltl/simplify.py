"""Simplifying builders: formulas rebuilt so that equal progression states are equal objects.

``conj`` and ``disj`` flatten, drop neutral constants, deduplicate and sort their operands (by
printed text) and turn ``x & !x`` into ``false``; ``make`` applies temporal simplifications that
hold at every position of a non-empty trace (``X false`` = ``false``, ``F F a`` = ``F a``,
``true U b`` = ``F b``, ``a S false`` = ``false``, ...).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from governor.ltl import operators as op
from governor.ltl import syntax as s
from governor.ltl.syntax import END, FALSE, TRUE, Formula

NOT_END = op.Not(END)


def neg(f: Formula) -> Formula:
    """``!f``, simplified."""
    if type(f) is s.Const:
        return FALSE if f.value else TRUE
    return f.arg if type(f) is op.Not else op.Not(f)


def conj(*fs: Formula) -> Formula:
    """``f1 & f2 & ...``: flattened, deduplicated, sorted; ``true`` if empty."""
    return _nary(op.And, fs)


def disj(*fs: Formula) -> Formula:
    """``f1 | f2 | ...``: flattened, deduplicated, sorted; ``false`` if empty."""
    return _nary(op.Or, fs)


def _nary(cls: type[s.NAry], fs: Iterable[Formula]) -> Formula:
    unit = cls is op.And  # the neutral constant's value; its negation absorbs
    neutral, absorbing = (TRUE, FALSE) if unit else (FALSE, TRUE)
    items: dict[Formula, None] = {}
    stack: list[Any] = list(fs)
    stack.reverse()
    while stack:
        f = stack.pop()
        t = type(f)
        if t is s.Const:
            if f.value is not unit:
                return absorbing
        elif t is cls:
            stack.extend(reversed(f.args))
        else:
            items[f] = None
    for f in items:
        if type(f) is op.Not and f.arg in items:
            return absorbing
    # knowing whether the trace has ended settles it inside the other operands:
    # !end & (x | end) = !end & x, and end | (x & !end) = end | x
    known, settled, inner = (NOT_END, END, op.Or) if unit else (END, NOT_END, op.And)
    if known in items and any(type(f) is inner and settled in f.args for f in items):
        other = disj if unit else conj
        return _nary(
            cls,
            [other(*(a for a in f.args if a != settled)) if type(f) is inner else f for f in items],
        )
    if not items:
        return neutral
    if len(items) == 1:
        return next(iter(items))
    return cls(tuple(sorted(items, key=str)))


def implies(a: Formula, b: Formula) -> Formula:
    """``a -> b``, simplified."""
    if type(a) is s.Const:
        return b if a.value else TRUE
    if type(b) is s.Const:
        return TRUE if b.value else neg(a)
    return TRUE if a == b else op.Implies(a, b)


def iff(a: Formula, b: Formula) -> Formula:
    """``a <-> b``, simplified, operands sorted."""
    if type(a) is s.Const:
        return b if a.value else neg(b)
    if type(b) is s.Const:
        return a if b.value else neg(a)
    if a == b:
        return TRUE
    if a == neg(b):
        return FALSE
    return op.Iff(a, b) if str(a) <= str(b) else op.Iff(b, a)


def _unary_rule(cls: type[s.Unary]) -> Callable[[Formula], Formula | None]:
    """Simplifications of ``cls(x)`` valid at every position of a non-empty trace."""
    idempotent = cls in (op.Eventually, op.Always, op.Once, op.Historically)
    keep = {op.Next: False, op.WeakNext: True, op.Yesterday: False, op.WeakYesterday: True}

    def rule(x: Formula) -> Formula | None:
        if type(x) is s.Const and (idempotent or keep.get(cls) == x.value):
            return x
        return x if idempotent and type(x) is cls else None

    return rule


def _binary_rule(cls: type[s.Binary]) -> Callable[[Formula, Formula], Formula | None]:
    """Simplifications of ``cls(a, b)`` valid at every position of a non-empty trace."""
    weak = cls in (op.WeakUntil, op.WeakSince)
    release = cls is op.Release
    grow = op.Once if cls is op.Since else op.Eventually  # a op b with a true
    hold = op.Historically if cls is op.WeakSince else op.Always  # weak a op b with b false

    def rule(a: Formula, b: Formula) -> Formula | None:
        if type(b) is s.Const and (b.value or not weak):
            return b
        if release:
            if type(a) is s.Const:
                return b if a.value else make(op.Always, b)
            return None
        if type(a) is s.Const:
            return b if not a.value else (TRUE if weak else make(grow, b))
        return make(hold, a) if weak and b == FALSE else None

    return rule


def _strong_release(a: Formula, b: Formula) -> Formula | None:
    """``a M b`` with a constant operand: ``false M b`` and ``a M false`` never hold, ``true M b``
    is ``b``, ``a M true`` is ``F a``."""
    if type(a) is s.Const:
        return b if a.value else FALSE
    if type(b) is s.Const:
        return make(op.Eventually, a) if b.value else FALSE
    return None


_BUILD: dict[type, Callable[..., Formula]] = {
    op.Not: neg,
    op.And: conj,
    op.Or: disj,
    op.Implies: implies,
    op.Iff: iff,
}
_RULES: dict[type, Callable[..., Formula | None]] = {
    **{c: _unary_rule(c) for c in (op.Next, op.WeakNext, op.Eventually, op.Always)},
    **{c: _unary_rule(c) for c in (op.Yesterday, op.WeakYesterday, op.Once, op.Historically)},
    **{c: _binary_rule(c) for c in (op.Until, op.WeakUntil, op.Release, op.Since, op.WeakSince)},
    op.StrongRelease: lambda a, b: _strong_release(a, b),
}


def make(cls: type, *children: Formula) -> Formula:
    """``cls(*children)`` with the simplifications above (for And and Or: the operands)."""
    build = _BUILD.get(cls)
    if build is not None:
        return build(*children)
    rule = _RULES.get(cls)
    simpler = rule(*children) if rule is not None else None
    return simpler if simpler is not None else cls(*children)


def simplify(f: Formula) -> Formula:
    """``f`` rebuilt bottom-up with the simplifying builders (same meaning on non-empty traces)."""
    kids = f.children()
    return make(type(f), *(simplify(k) for k in kids)) if kids else f
