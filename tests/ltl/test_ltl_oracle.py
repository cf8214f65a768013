"""Progression against an independent textbook evaluator of every operator (ltl_oracle.ev)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from ltl_oracle import ev, formulas, pure_past, traces

from governor.ltl import operators as op
from governor.ltl import syntax as s
from governor.ltl.progression import accepts_empty, holds, progress
from governor.ltl.simplify import simplify

ORACLE = settings(max_examples=400, deadline=None)


def run(f: s.Formula, w: list[frozenset[str]]) -> bool:
    """Progress ``f`` through the whole trace, then ask whether the trace may end there."""
    state = f
    for letter in w:
        state = progress(state, letter)
    return accepts_empty(state)


@ORACLE
@given(formulas(past=True), traces())
def test_progression_agrees_with_textbook_semantics(f: s.Formula, w: list[frozenset[str]]) -> None:
    assert run(f, w) == ev(f, w)


@settings(max_examples=200, deadline=None)
@given(formulas(past=True), traces(min_size=1, max_size=5))
def test_every_intermediate_state_is_the_rest_of_the_trace(
    f: s.Formula, w: list[frozenset[str]]
) -> None:
    # the state after k positions is satisfied by the rest exactly when f holds on the whole trace
    state = f
    for k, letter in enumerate(w):
        state = progress(state, letter)
        rest = w[k + 1 :]
        assert (holds(state, rest) if rest else accepts_empty(state)) == ev(f, w)


@settings(max_examples=200, deadline=None)
@given(formulas(past=True), traces())
def test_simplify_keeps_meaning(f: s.Formula, w: list[frozenset[str]]) -> None:
    assert ev(simplify(f), w) == ev(f, w)


@settings(max_examples=100, deadline=None)
@given(formulas(past=True), st.lists(traces(), min_size=2, max_size=4))
def test_memoised_progression_is_pure(f: s.Formula, ws: list[list[frozenset[str]]]) -> None:
    # the same question asked again, after other traces filled the memo, has the same answer
    first = [run(f, w) for w in ws]
    assert [run(f, w) for w in reversed(ws)] == list(reversed(first))


@ORACLE
@given(pure_past(max_leaves=6), traces(max_size=7))
def test_past_values_at_every_position(p: s.Formula, w: list[frozenset[str]]) -> None:
    # F(p & WX false) holds on a prefix iff p holds at the prefix's last position
    at_last = op.Eventually(op.And((p, op.WeakNext(s.FALSE))))
    for k in range(len(w)):
        assert run(at_last, w[: k + 1]) == ev(p, w, k)
