"""Test helpers: a textbook finite-trace evaluator, random formulas and traces, flloat conversion.

The evaluator is written directly from the definitions of each operator on a finite trace
w = w[0..n-1], independently of governor.ltl.progression (it shares only the syntax tree).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from hypothesis import strategies as st

from governor.ltl import operators as op
from governor.ltl import syntax as s

Trace = Sequence[frozenset[str]]
ATOMS = ("a", "b", "c")


def ev(f: s.Formula, w: Trace, i: int = 0) -> bool:
    """Whether ``f`` holds at position ``i`` of the non-empty finite trace ``w``."""
    n = len(w)
    assert 0 <= i < n
    t = type(f)
    if t is s.Atom:
        return f.label in w[i]
    if t is s.Const:
        return f.value
    if t is s.End:
        return False
    if t is op.Not:
        return not ev(f.arg, w, i)
    if t is op.And:
        return all(ev(a, w, i) for a in f.args)
    if t is op.Or:
        return any(ev(a, w, i) for a in f.args)
    if t is op.Implies:
        return (not ev(f.left, w, i)) or ev(f.right, w, i)
    if t is op.Iff:
        return ev(f.left, w, i) == ev(f.right, w, i)
    if t is op.Next:
        return i + 1 < n and ev(f.arg, w, i + 1)
    if t is op.WeakNext:
        return i + 1 >= n or ev(f.arg, w, i + 1)
    if t is op.Eventually:
        return any(ev(f.arg, w, j) for j in range(i, n))
    if t is op.Always:
        return all(ev(f.arg, w, j) for j in range(i, n))
    if t is op.Until:
        return any(
            ev(f.right, w, j) and all(ev(f.left, w, k) for k in range(i, j)) for j in range(i, n)
        )
    if t is op.WeakUntil:
        until = any(
            ev(f.right, w, j) and all(ev(f.left, w, k) for k in range(i, j)) for j in range(i, n)
        )
        return until or all(ev(f.left, w, j) for j in range(i, n))
    if t is op.Release:
        return all(
            ev(f.right, w, j) or any(ev(f.left, w, k) for k in range(i, j)) for j in range(i, n)
        )
    if t is op.StrongRelease:
        return any(
            ev(f.left, w, j) and all(ev(f.right, w, k) for k in range(i, j + 1))
            for j in range(i, n)
        )
    if t is op.Yesterday:
        return i > 0 and ev(f.arg, w, i - 1)
    if t is op.WeakYesterday:
        return i == 0 or ev(f.arg, w, i - 1)
    if t is op.Once:
        return any(ev(f.arg, w, j) for j in range(0, i + 1))
    if t is op.Historically:
        return all(ev(f.arg, w, j) for j in range(0, i + 1))
    if t is op.Since:
        return any(
            ev(f.right, w, j) and all(ev(f.left, w, k) for k in range(j + 1, i + 1))
            for j in range(0, i + 1)
        )
    if t is op.WeakSince:
        since = any(
            ev(f.right, w, j) and all(ev(f.left, w, k) for k in range(j + 1, i + 1))
            for j in range(0, i + 1)
        )
        return since or all(ev(f.left, w, j) for j in range(0, i + 1))
    raise AssertionError(f"no textbook rule for {t.__name__}")


def atoms(names: Sequence[str] = ATOMS) -> st.SearchStrategy[s.Formula]:
    return st.sampled_from([s.Atom(x) for x in names])


_PURE_UNARY = (op.Not, op.Yesterday, op.WeakYesterday, op.Once, op.Historically)
_PURE_BINARY = (op.Since, op.WeakSince, op.Implies, op.Iff)
_FUTURE_UNARY = (op.Not, op.Next, op.WeakNext, op.Eventually, op.Always)
_FUTURE_BINARY = (op.Until, op.WeakUntil, op.Release, op.StrongRelease, op.Implies, op.Iff)
FLLOAT_UNARY = (op.Not, op.Next, op.WeakNext, op.Eventually, op.Always)
FLLOAT_BINARY = (op.Until, op.Release, op.Implies, op.Iff)


def _tree(
    leaves: st.SearchStrategy[s.Formula],
    unary: Sequence[type],
    binary: Sequence[type],
    max_leaves: int,
) -> st.SearchStrategy[s.Formula]:
    def extend(children: st.SearchStrategy[s.Formula]) -> st.SearchStrategy[s.Formula]:
        nary = st.sampled_from([op.And, op.Or])
        return st.one_of(
            st.builds(lambda c, x: c(x), st.sampled_from(unary), children),
            st.builds(lambda c, x, y: c(x, y), st.sampled_from(binary), children, children),
            st.builds(lambda c, xs: c(tuple(xs)), nary, st.lists(children, min_size=2, max_size=3)),
        )

    return st.recursive(leaves, extend, max_leaves=max_leaves)


def pure_past(names: Sequence[str] = ATOMS, max_leaves: int = 4) -> st.SearchStrategy[s.Formula]:
    leaves = st.one_of(atoms(names), st.sampled_from([s.TRUE, s.FALSE]))
    return _tree(leaves, _PURE_UNARY, _PURE_BINARY, max_leaves)


def formulas(
    names: Sequence[str] = ATOMS, past: bool = True, max_leaves: int = 8
) -> st.SearchStrategy[s.Formula]:
    """Random formulas with every operator; past operators get pure-past operands."""
    leaves = st.one_of(atoms(names), st.sampled_from([s.TRUE, s.FALSE]))
    if past:
        leaves = st.one_of(leaves, pure_past(names, 3))
    return _tree(leaves, _FUTURE_UNARY, _FUTURE_BINARY, max_leaves)


def flloat_formulas(
    names: Sequence[str] = ATOMS, max_leaves: int = 8
) -> st.SearchStrategy[s.Formula]:
    """Random future formulas in the fragment flloat can evaluate."""
    leaves = st.one_of(atoms(names), st.sampled_from([s.TRUE, s.FALSE]))
    return _tree(leaves, FLLOAT_UNARY, FLLOAT_BINARY, max_leaves)


def traces(
    names: Sequence[str] = ATOMS, min_size: int = 1, max_size: int = 6
) -> st.SearchStrategy[list[frozenset[str]]]:
    letter = st.frozensets(st.sampled_from(list(names)))
    return st.lists(letter, min_size=min_size, max_size=max_size)


def to_flloat(f: s.Formula) -> Any:
    """The same formula as a flloat LTLf object (future fragment without W)."""
    from flloat import ltlf  # imported lazily: tests that need it import flloat first

    table: dict[type, Callable[..., Any]] = {
        op.Not: ltlf.LTLfNot,
        op.Next: ltlf.LTLfNext,
        op.WeakNext: ltlf.LTLfWeakNext,
        op.Eventually: ltlf.LTLfEventually,
        op.Always: ltlf.LTLfAlways,
        op.Until: lambda a, b: ltlf.LTLfUntil([a, b]),
        op.Release: lambda a, b: ltlf.LTLfRelease([a, b]),
        op.Implies: lambda a, b: ltlf.LTLfImplies([a, b]),
        op.Iff: lambda a, b: ltlf.LTLfEquivalence([a, b]),
    }
    if isinstance(f, s.Atom):
        return ltlf.LTLfAtomic(f.name)
    if isinstance(f, s.Const):
        return ltlf.LTLfTrue() if f.value else ltlf.LTLfFalse()
    if isinstance(f, s.NAry):
        cls = ltlf.LTLfAnd if isinstance(f, op.And) else ltlf.LTLfOr
        return cls([to_flloat(a) for a in f.args])
    return table[type(f)](*(to_flloat(k) for k in f.children()))


def flloat_trace(w: Trace, names: Sequence[str] = ATOMS) -> list[dict[str, bool]]:
    """flloat's trace form: one {atom: truth} interpretation per position."""
    return [{x: x in letter for x in names} for letter in w]
