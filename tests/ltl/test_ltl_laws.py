"""Logical laws, checked semantically on random finite traces through progression."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import given, settings
from ltl_oracle import formulas, pure_past, traces

from governor.ltl import operators as op
from governor.ltl import syntax as s
from governor.ltl.parser import parse
from governor.ltl.progression import accepts_empty, holds, progress

Law = Callable[[s.Formula, s.Formula], tuple[s.Formula, s.Formula]]

FUTURE_LAWS: dict[str, Law] = {
    "G a == !F !a": lambda a, b: (op.Always(a), op.Not(op.Eventually(op.Not(a)))),
    "F a == true U a": lambda a, b: (op.Eventually(a), op.Until(s.TRUE, a)),
    "G a == false R a": lambda a, b: (op.Always(a), op.Release(s.FALSE, a)),
    "a W b == (a U b) | G a": lambda a, b: (
        op.WeakUntil(a, b),
        op.Or((op.Until(a, b), op.Always(a))),
    ),
    "a R b == !(!a U !b)": lambda a, b: (op.Release(a, b), op.Not(op.Until(op.Not(a), op.Not(b)))),
    "a R b == b W (a & b)": lambda a, b: (op.Release(a, b), op.WeakUntil(b, op.And((a, b)))),
    "a M b == b U (a & b)": lambda a, b: (op.StrongRelease(a, b), op.Until(b, op.And((a, b)))),
    "a M b == !(!a W !b)": lambda a, b: (
        op.StrongRelease(a, b),
        op.Not(op.WeakUntil(op.Not(a), op.Not(b))),
    ),
    "a M b == (a R b) & F a": lambda a, b: (
        op.StrongRelease(a, b),
        op.And((op.Release(a, b), op.Eventually(a))),
    ),
    "WX a == !X !a": lambda a, b: (op.WeakNext(a), op.Not(op.Next(op.Not(a)))),
    "a U b == b | (a & X(a U b))": lambda a, b: (
        op.Until(a, b),
        op.Or((b, op.And((a, op.Next(op.Until(a, b)))))),
    ),
    "a W b == b | (a & WX(a W b))": lambda a, b: (
        op.WeakUntil(a, b),
        op.Or((b, op.And((a, op.WeakNext(op.WeakUntil(a, b)))))),
    ),
    "a -> b == !a | b": lambda a, b: (op.Implies(a, b), op.Or((op.Not(a), b))),
    "a <-> b == (a -> b) & (b -> a)": lambda a, b: (
        op.Iff(a, b),
        op.And((op.Implies(a, b), op.Implies(b, a))),
    ),
    "!(a & b) == !a | !b": lambda a, b: (op.Not(op.And((a, b))), op.Or((op.Not(a), op.Not(b)))),
    "F(a | b) == F a | F b": lambda a, b: (
        op.Eventually(op.Or((a, b))),
        op.Or((op.Eventually(a), op.Eventually(b))),
    ),
    "G(a & b) == G a & G b": lambda a, b: (
        op.Always(op.And((a, b))),
        op.And((op.Always(a), op.Always(b))),
    ),
}

PAST_LAWS: dict[str, Law] = {
    "H a == !O !a": lambda a, b: (op.Historically(a), op.Not(op.Once(op.Not(a)))),
    "Z a == !Y !a": lambda a, b: (op.WeakYesterday(a), op.Not(op.Yesterday(op.Not(a)))),
    "O a == true S a": lambda a, b: (op.Once(a), op.Since(s.TRUE, a)),
    "a B b == (a S b) | H a": lambda a, b: (
        op.WeakSince(a, b),
        op.Or((op.Since(a, b), op.Historically(a))),
    ),
    "a S b == b | (a & Y(a S b))": lambda a, b: (
        op.Since(a, b),
        op.Or((b, op.And((a, op.Yesterday(op.Since(a, b)))))),
    ),
}


@pytest.mark.parametrize("name", sorted(FUTURE_LAWS))
@settings(max_examples=60, deadline=None)
@given(formulas(max_leaves=4), formulas(max_leaves=4), traces())
def test_future_law(name: str, a: s.Formula, b: s.Formula, w: list[frozenset[str]]) -> None:
    left, right = FUTURE_LAWS[name](a, b)
    assert holds(left, w) == holds(right, w)


@pytest.mark.parametrize("name", sorted(PAST_LAWS))
@settings(max_examples=60, deadline=None)
@given(pure_past(), pure_past(), traces())
def test_past_law_at_every_position(
    name: str, a: s.Formula, b: s.Formula, w: list[frozenset[str]]
) -> None:
    # inside G(... <-> ...), the two sides must agree at every position of the trace
    left, right = PAST_LAWS[name](a, b)
    assert holds(op.Always(op.Iff(left, right)), w)


@settings(max_examples=100, deadline=None)
@given(formulas(max_leaves=4), traces())
def test_strong_and_weak_next_at_the_last_position(a: s.Formula, w: list[frozenset[str]]) -> None:
    # at the last position X is false and WX true, whatever their operand
    at_last = op.Not(op.Next(s.TRUE))
    assert holds(op.Always(op.Implies(at_last, op.Not(op.Next(a)))), w)
    assert holds(op.Always(op.Implies(at_last, op.WeakNext(a))), w)


@settings(max_examples=100, deadline=None)
@given(formulas(max_leaves=6), traces())
def test_negation_flips_every_verdict(f: s.Formula, w: list[frozenset[str]]) -> None:
    assert holds(op.Not(f), w) != holds(f, w)


def test_end_of_trace_conventions() -> None:
    assert not holds(parse("X a"), [{"a"}])
    assert holds(parse("WX a"), [{"a"}])
    assert holds(parse("X a"), [set(), {"a"}])
    assert not holds(parse("Y true"), [set()])
    assert holds(parse("Z false"), [set()])
    assert holds(parse("G a"), [{"a"}, {"a"}]) and not holds(parse("G a"), [{"a"}, set()])
    assert holds(parse("F a"), [set(), {"a"}]) and not holds(parse("F a"), [set(), set()])
    # the first position is the initial state
    assert not accepts_empty(progress(parse("X true"), set()))
    assert accepts_empty(progress(progress(parse("X true"), set()), set()))


def test_holds_needs_a_position() -> None:
    with pytest.raises(ValueError, match="expected at least one position"):
        holds(parse("a"), [])
