"""Finite-trace (LTLf) semantics by formula progression.

Convention: a trace is the sequence of label sets of the states visited, the initial state first;
``progress(f, labels)`` reads one position and returns the obligation on the rest of the trace.
The rest may be empty: ``end`` marks it (a strong ``X a`` leaves ``a & !end``, a weak ``WX a``
leaves ``a | end``), and :func:`accepts_empty` evaluates an obligation on the empty rest, so a
trace satisfies ``f`` iff ``accepts_empty`` holds after progressing ``f`` through every position.

Past operators keep their history inside the formula. The value of a pure-past subformula at a
position depends only on the trace so far, so after each position every past node is replaced by
one whose value at the next position is right when read as if the trace started there:
``Y a`` becomes ``Z a`` (weak yesterday, true at the start) when ``a`` held, ``a S b`` becomes
``a B b`` (weak since) when it held, ``O a`` becomes ``true`` once ``a`` held and ``H a`` becomes
``false`` once ``a`` failed. Progressed states therefore stay ordinary, printable formulas.
This needs past operands to be pure past, which the syntax enforces (any LTL formula with past
operators has an equivalent of that shape, by Gabbay's separation theorem).

Results are built with the simplifying builders of :mod:`governor.ltl.simplify`, so equal states
are equal objects, and memoised on (formula, labels).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from collections.abc import Set as AbstractSet
from typing import Any

from governor.ltl import operators as op
from governor.ltl import syntax as s
from governor.ltl.simplify import NOT_END, conj, disj, iff, make, neg
from governor.ltl.syntax import END, FALSE, TRUE, Formula

CACHE_LIMIT = 500_000
"""Entries a memo table may hold before it is emptied (it then refills from the live states)."""

_PROGRESS: dict[tuple[Formula, frozenset[str]], Formula] = {}
_NOW: dict[tuple[Formula, frozenset[str]], bool] = {}
_ADVANCE: dict[tuple[Formula, frozenset[str]], Formula] = {}
_EMPTY: dict[Formula, bool] = {}
_LABELS: dict[Formula, frozenset[str]] = {}
_TABLES: tuple[dict[Any, Any], ...] = (_PROGRESS, _NOW, _ADVANCE, _EMPTY, _LABELS)


def clear_caches() -> None:
    """Empty every memo table (for cold-start measurements)."""
    for table in _TABLES:
        table.clear()


def cache_sizes() -> dict[str, int]:
    """Entries in the main memo tables."""
    return {"progress": len(_PROGRESS), "now": len(_NOW), "advance": len(_ADVANCE)}


def _remember(table: dict[Any, Any], key: Any, value: Any) -> Any:
    if len(table) >= CACHE_LIMIT:
        table.clear()
    table[key] = value
    return value


# --------------------------------------------------------------------------- progression


def progress(formula: Formula, labels: AbstractSet[str]) -> Formula:
    """The obligation on the rest of the trace after reading one position labelled ``labels``."""
    if isinstance(labels, str):
        raise TypeError(f"labels: expected a set of label strings, found the str {labels!r}")
    atoms = _LABELS.get(formula)
    if atoms is None:
        atoms = _remember(_LABELS, formula, formula.atom_labels())
    return progress_exact(formula, atoms.intersection(labels))


def progress_exact(formula: Formula, labels: frozenset[str]) -> Formula:
    """:func:`progress` with ``labels`` used as given; restricting them to the formula's atoms
    first (as :func:`progress` does) makes equal states share memo entries."""
    key = (formula, labels)
    out = _PROGRESS.get(key)
    if out is None:
        if formula._flags & (s.FUTURE | s.ENDS):
            out = _PROG[type(formula)](formula, labels)
        else:
            out = TRUE if _now(formula, labels) else FALSE
        _remember(_PROGRESS, key, out)
    return out


def _now(f: Formula, labels: frozenset[str]) -> bool:
    """The value of a formula without future operators at the position labelled ``labels``."""
    key = (f, labels)
    out = _NOW.get(key)
    if out is None:
        out = _remember(_NOW, key, _NOW_RULES[type(f)](f, labels))
    return out


def _advance(f: Formula, labels: frozenset[str]) -> Formula:
    """``f`` with its past nodes moved on past the position labelled ``labels``."""
    if not f._flags & s.PAST:
        return f
    key = (f, labels)
    out = _ADVANCE.get(key)
    if out is None:
        out = _remember(_ADVANCE, key, _advance_node(f, labels))
    return out


def _advance_node(f: Any, ls: frozenset[str]) -> Formula:
    t = type(f)
    if t is op.Yesterday or t is op.WeakYesterday:
        cls: type = op.WeakYesterday if _now(f.arg, ls) else op.Yesterday
        return make(cls, _advance(f.arg, ls))
    if t is op.Once:
        return TRUE if _now(f, ls) else make(t, _advance(f.arg, ls))
    if t is op.Historically:
        return make(t, _advance(f.arg, ls)) if _now(f, ls) else FALSE
    if t is op.Since or t is op.WeakSince:
        cls = op.WeakSince if _now(f, ls) else op.Since
        return make(cls, _advance(f.left, ls), _advance(f.right, ls))
    return make(t, *(_advance(k, ls) for k in f.children()))


def _p(f: Formula, ls: frozenset[str]) -> Formula:
    return progress_exact(f, ls)


_PROG: dict[type, Callable[[Any, frozenset[str]], Formula]] = {
    s.End: lambda f, ls: FALSE,
    op.Not: lambda f, ls: neg(_p(f.arg, ls)),
    op.And: lambda f, ls: conj(*(_p(a, ls) for a in f.args)),
    op.Or: lambda f, ls: disj(*(_p(a, ls) for a in f.args)),
    op.Implies: lambda f, ls: disj(neg(_p(f.left, ls)), _p(f.right, ls)),
    op.Iff: lambda f, ls: iff(_p(f.left, ls), _p(f.right, ls)),
    op.Next: lambda f, ls: conj(_advance(f.arg, ls), NOT_END),
    op.WeakNext: lambda f, ls: disj(_advance(f.arg, ls), END),
    op.Eventually: lambda f, ls: disj(_p(f.arg, ls), conj(_advance(f, ls), NOT_END)),
    op.Always: lambda f, ls: conj(_p(f.arg, ls), disj(_advance(f, ls), END)),
    op.Until: lambda f, ls: disj(_p(f.right, ls), conj(_p(f.left, ls), _advance(f, ls), NOT_END)),
    op.WeakUntil: lambda f, ls: disj(
        _p(f.right, ls), conj(_p(f.left, ls), disj(_advance(f, ls), END))
    ),
    op.Release: lambda f, ls: conj(_p(f.right, ls), disj(_p(f.left, ls), _advance(f, ls), END)),
    op.StrongRelease: lambda f, ls: conj(
        _p(f.right, ls), disj(_p(f.left, ls), conj(_advance(f, ls), NOT_END))
    ),
}

_NOW_RULES: dict[type, Callable[[Any, frozenset[str]], bool]] = {
    s.Atom: lambda f, ls: f.label in ls,
    s.Const: lambda f, ls: f.value,
    s.End: lambda f, ls: False,
    op.Not: lambda f, ls: not _now(f.arg, ls),
    op.And: lambda f, ls: all(_now(a, ls) for a in f.args),
    op.Or: lambda f, ls: any(_now(a, ls) for a in f.args),
    op.Implies: lambda f, ls: not _now(f.left, ls) or _now(f.right, ls),
    op.Iff: lambda f, ls: _now(f.left, ls) == _now(f.right, ls),
    op.Yesterday: lambda f, ls: False,  # the history says: not held (or no previous position)
    op.WeakYesterday: lambda f, ls: True,  # the history says: held (or no previous position)
    op.Once: lambda f, ls: _now(f.arg, ls),  # not yet held before (else it would be true)
    op.Historically: lambda f, ls: _now(f.arg, ls),  # always held before (else false)
    op.Since: lambda f, ls: _now(f.right, ls),
    op.WeakSince: lambda f, ls: _now(f.right, ls) or _now(f.left, ls),
}


# --------------------------------------------------------------------------- end of trace


def accepts_empty(formula: Formula) -> bool:
    """Whether an empty rest of the trace meets ``formula``: may the trace end here?

    Only ``end``, constants and boolean connectives decide it; every other node needs a
    position, and in a progressed obligation it only occurs guarded by ``end`` or ``!end``.
    """
    out = _EMPTY.get(formula)
    if out is None:
        out = _remember(_EMPTY, formula, _empty(formula))
    return out


def _empty(f: Any) -> bool:
    t = type(f)
    if t is s.Const:
        return bool(f.value)
    if t is s.End:
        return True
    if t is op.Not:
        return not accepts_empty(f.arg)
    if t is op.And:
        return all(accepts_empty(a) for a in f.args)
    if t is op.Or:
        return any(accepts_empty(a) for a in f.args)
    if t is op.Implies:
        return not accepts_empty(f.left) or accepts_empty(f.right)
    if t is op.Iff:
        return accepts_empty(f.left) == accepts_empty(f.right)
    return False


final = accepts_empty


def holds(formula: Formula, trace: Iterable[AbstractSet[str]]) -> bool:
    """Whether the non-empty finite ``trace`` (label sets, first position first) satisfies it."""
    state, n = formula, 0
    for labels in trace:
        state, n = progress(state, labels), n + 1
    if n == 0:
        raise ValueError("trace: expected at least one position, found none")
    return accepts_empty(state)


def strip_end(formula: Formula) -> Formula:
    """The obligation on a non-empty rest of the trace (``end`` false): for showing to people."""
    if not formula._flags & s.ENDS:
        return formula
    if type(formula) is s.End:
        return FALSE
    return make(type(formula), *(strip_end(k) for k in formula.children()))
