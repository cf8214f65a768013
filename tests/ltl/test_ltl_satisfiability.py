"""Satisfiability over explicit alphabets: witnesses, contradictions, counterexamples."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from ltl_oracle import ev, formulas

from governor.errors import SpecError
from governor.ltl import patterns as p
from governor.ltl.parser import parse
from governor.ltl.satisfiability import (
    at_most_one,
    counterexample,
    exactly_one,
    find_trace,
    jointly_satisfiable,
    minimal_conflict,
    one_hot,
    powerset,
    search,
)

ROOMS = ["bathroom", "bedroom", "kitchen", "living_room"]
ANY = powerset(ROOMS)
ONE_ROOM = one_hot(ROOMS)


def test_shortest_witness() -> None:
    trace = find_trace(parse("F(kitchen & X bedroom)"), ONE_ROOM)
    assert trace == [frozenset({"kitchen"}), frozenset({"bedroom"})]
    assert find_trace(p.ordered_visit("bedroom", "kitchen", "bathroom"), ONE_ROOM) == [
        frozenset({"bedroom"}),
        frozenset({"kitchen"}),
        frozenset({"bathroom"}),
    ]


def test_contradictions() -> None:
    never, visit = p.global_avoidance("kitchen"), p.visit("kitchen")
    assert not jointly_satisfiable([never, visit], ANY)
    result = search(parse("G !kitchen & F kitchen"), ANY)
    assert result.trace is None and result.exhaustive
    assert jointly_satisfiable([p.global_avoidance("kitchen"), p.visit("bedroom")], ANY)


def test_domain_rules() -> None:
    # both rooms at once would satisfy "kitchen and bedroom now"; one room at a time cannot
    both = parse("kitchen & bedroom")
    assert jointly_satisfiable([both], ANY)
    assert not jointly_satisfiable([both], ANY, rules=[exactly_one(ROOMS)])
    assert not jointly_satisfiable([both], ANY, rules=[at_most_one(ROOMS)])
    assert not jointly_satisfiable([both], ONE_ROOM)
    # "enter living room before bathroom" and "bathroom before living room", one room at a time
    a = p.past_avoidance("bathroom", "living_room")
    b = p.past_avoidance("living_room", "bathroom")
    assert jointly_satisfiable([a, b], ANY)  # both at once
    assert not jointly_satisfiable([a, b], ANY, rules=[exactly_one(ROOMS)])


def test_minimal_conflict_names_the_culprits() -> None:
    named = {
        "visit kitchen": p.visit("kitchen"),
        "stay out of the bathroom": p.global_avoidance("bathroom"),
        "never the kitchen": p.global_avoidance("kitchen"),
        "bedroom once": p.upper_restricted_avoidance("bedroom", 1),
    }
    assert set(minimal_conflict(named, ONE_ROOM)) == {"visit kitchen", "never the kitchen"}
    del named["never the kitchen"]
    assert minimal_conflict(named, ONE_ROOM) == ()


def test_counterexample_shows_a_violation() -> None:
    f = p.delayed_reaction("kitchen", "living_room")
    bad = counterexample(f, ONE_ROOM)
    assert bad == [frozenset({"kitchen"})]
    assert counterexample(parse("G(kitchen | !kitchen)"), ONE_ROOM) is None


def test_depth_bound_is_reported() -> None:
    f = p.lower_restricted_avoidance("kitchen", 3)  # needs 5 positions
    shallow = search(f, ONE_ROOM, max_depth=3)
    assert shallow.trace is None and not shallow.exhaustive
    deep = search(f, ONE_ROOM, max_depth=5)
    assert deep.trace is not None and len(deep.trace) == 5


@settings(max_examples=150, deadline=None)
@given(formulas(max_leaves=6))
def test_found_traces_satisfy_and_counterexamples_violate(f: object) -> None:
    alphabet = powerset(["a", "b", "c"])
    trace = find_trace(f, alphabet, max_depth=6)  # type: ignore[arg-type]
    if trace is not None:
        assert ev(f, trace)  # type: ignore[arg-type]
    bad = counterexample(f, alphabet, max_depth=6)  # type: ignore[arg-type]
    if bad is not None:
        assert not ev(f, bad)  # type: ignore[arg-type]


def test_alphabet_helpers() -> None:
    assert len(powerset(["a", "b", "c"])) == 8
    assert one_hot(["a", "b"], extra=["c"]) == [
        frozenset({"a"}),
        frozenset({"a", "c"}),
        frozenset({"b"}),
        frozenset({"b", "c"}),
    ]
    assert str(exactly_one(["a", "b"])) == "G(a & !b | b & !a)"
    with pytest.raises(SpecError, match="expected label sets"):
        find_trace(parse("a"), ["a", "b"])  # type: ignore[list-item]
    with pytest.raises(SpecError, match="at least one label set"):
        find_trace(parse("a"), [])
    with pytest.raises(SpecError, match="at most 16"):
        powerset([f"p{i}" for i in range(17)])


def test_a_formula_that_progresses_to_itself_is_still_found_satisfiable():
    from governor.ltl import TRUE, Always, Atom, find_trace, jointly_satisfiable, parse

    letters = [frozenset({"a"}), frozenset()]
    assert jointly_satisfiable([TRUE], letters)
    assert find_trace(TRUE, letters) is not None and len(find_trace(TRUE, letters) or []) == 1
    trace = find_trace(Always(Atom("a")), letters)
    assert trace == [frozenset({"a"})]
    assert find_trace(parse("G a & F !a"), letters) is None
