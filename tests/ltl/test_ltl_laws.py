"""Logical laws, checked semantically on random finite traces through progression."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import given, settings
from ltl_oracle import formulas, pure_past, traces

from governor.ltl import syntax as s
from governor.ltl.parser import parse
from governor.ltl.progression import accepts_empty, holds, progress

Law = Callable[[s.Formula, s.Formula], tuple[s.Formula, s.Formula]]

FUTURE_LAWS: dict[str, Law] = {
    "G a == !F !a": lambda a, b: (s.Always(a), s.Not(s.Eventually(s.Not(a)))),
    "F a == true U a": lambda a, b: (s.Eventually(a), s.Until(s.TRUE, a)),
    "G a == false R a": lambda a, b: (s.Always(a), s.Release(s.FALSE, a)),
    "a W b == (a U b) | G a": lambda a, b: (
        s.WeakUntil(a, b),
        s.Or((s.Until(a, b), s.Always(a))),
    ),
    "a R b == !(!a U !b)": lambda a, b: (s.Release(a, b), s.Not(s.Until(s.Not(a), s.Not(b)))),
    "a R b == b W (a & b)": lambda a, b: (s.Release(a, b), s.WeakUntil(b, s.And((a, b)))),
    "WX a == !X !a": lambda a, b: (s.WeakNext(a), s.Not(s.Next(s.Not(a)))),
    "a U b == b | (a & X(a U b))": lambda a, b: (
        s.Until(a, b),
        s.Or((b, s.And((a, s.Next(s.Until(a, b)))))),
    ),
    "a W b == b | (a & WX(a W b))": lambda a, b: (
        s.WeakUntil(a, b),
        s.Or((b, s.And((a, s.WeakNext(s.WeakUntil(a, b)))))),
    ),
    "a -> b == !a | b": lambda a, b: (s.Implies(a, b), s.Or((s.Not(a), b))),
    "a <-> b == (a -> b) & (b -> a)": lambda a, b: (
        s.Iff(a, b),
        s.And((s.Implies(a, b), s.Implies(b, a))),
    ),
    "!(a & b) == !a | !b": lambda a, b: (s.Not(s.And((a, b))), s.Or((s.Not(a), s.Not(b)))),
    "F(a | b) == F a | F b": lambda a, b: (
        s.Eventually(s.Or((a, b))),
        s.Or((s.Eventually(a), s.Eventually(b))),
    ),
    "G(a & b) == G a & G b": lambda a, b: (
        s.Always(s.And((a, b))),
        s.And((s.Always(a), s.Always(b))),
    ),
}

PAST_LAWS: dict[str, Law] = {
    "H a == !O !a": lambda a, b: (s.Historically(a), s.Not(s.Once(s.Not(a)))),
    "Z a == !Y !a": lambda a, b: (s.WeakYesterday(a), s.Not(s.Yesterday(s.Not(a)))),
    "O a == true S a": lambda a, b: (s.Once(a), s.Since(s.TRUE, a)),
    "a B b == (a S b) | H a": lambda a, b: (
        s.WeakSince(a, b),
        s.Or((s.Since(a, b), s.Historically(a))),
    ),
    "a S b == b | (a & Y(a S b))": lambda a, b: (
        s.Since(a, b),
        s.Or((b, s.And((a, s.Yesterday(s.Since(a, b)))))),
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
    assert holds(s.Always(s.Iff(left, right)), w)


@settings(max_examples=100, deadline=None)
@given(formulas(max_leaves=4), traces())
def test_strong_and_weak_next_at_the_last_position(a: s.Formula, w: list[frozenset[str]]) -> None:
    # at the last position X is false and WX true, whatever their operand
    at_last = s.Not(s.Next(s.TRUE))
    assert holds(s.Always(s.Implies(at_last, s.Not(s.Next(a)))), w)
    assert holds(s.Always(s.Implies(at_last, s.WeakNext(a))), w)


@settings(max_examples=100, deadline=None)
@given(formulas(max_leaves=6), traces())
def test_negation_flips_every_verdict(f: s.Formula, w: list[frozenset[str]]) -> None:
    assert holds(s.Not(f), w) != holds(f, w)


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
