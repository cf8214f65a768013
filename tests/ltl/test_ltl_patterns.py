"""Specification patterns: the Safety Chip's examples and hand-checked traces."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from governor.data import shared_data_dir
from governor.errors import SpecError
from governor.ltl import patterns as p
from governor.ltl.parser import parse, parse_prefix
from governor.ltl.progression import holds

DATA = shared_data_dir() / "safety_chip"
PATTERN_FILE = DATA / "constraint_patterns.json"

# What each example of constraint_patterns.json should be, as a pattern call.
EXPECTED: dict[str, Any] = {
    "G i kitchen F living_room": p.delayed_reaction("kitchen", "living_room"),
    "G i kitchen F bathroom": p.delayed_reaction("kitchen", "bathroom"),
    "G i bathroom G ! bedroom": p.future_avoidance("bathroom", "bedroom"),
    "G i bathroom G ! living_room": p.future_avoidance("bathroom", "living_room"),
    "G ! kitchentable": p.global_avoidance("kitchentable"),
    "G ! coffeetable": p.global_avoidance("coffeetable"),
    "F kitchen": p.lower_restricted_avoidance("kitchen", 1),
    "U ! bedroom living_room": p.past_avoidance("bedroom", "living_room"),
    "U ! bathroom kitchen": p.past_avoidance("bathroom", "kitchen"),
    "G i living_room X bedroom": p.prompt_reaction("living_room", "bedroom"),
    "G i bedroom X bathroom": p.prompt_reaction("bedroom", "bathroom"),
}
UPPER = {"bedroom": [2, 1], "kitchen": [3]}  # upper_rest_avoid examples, in file order


def trace(*rooms: str) -> list[frozenset[str]]:
    return [frozenset(r.split("+")) if r else frozenset() for r in rooms]


@pytest.fixture(scope="module")
def examples() -> dict[str, list[dict[str, str]]]:
    data: dict[str, list[dict[str, str]]] = json.loads(PATTERN_FILE.read_text())
    return data


def test_every_example_parses_to_its_pattern(examples: dict[str, list[dict[str, str]]]) -> None:
    tokens = set()
    for name, items in examples.items():
        assert name in p.PATTERNS
        for i, item in enumerate(items):
            f = parse_prefix(item["ltl"])
            tokens.update(item["ltl"].split())
            if name == "upper_rest_avoid":
                prop = next(iter(f.atoms())).name
                n = UPPER[prop][[x for x in items[:i] if prop in x["ltl"]].__len__()]
                assert f == p.PATTERNS[name](prop, n)
            else:
                assert f == EXPECTED[item["ltl"]], item
    assert {"G", "F", "X", "U", "!", "&", "i"} <= tokens  # every operator used there is read


def test_reversed_example(examples: dict[str, list[dict[str, str]]]) -> None:
    # "you have to enter bedroom before going into living room" is written U ! bedroom living_room
    # (avoid bedroom until living room): the reverse. The trace the sentence asks for violates it.
    item = next(x for x in examples["past_avoid"] if x["ltl"] == "U ! bedroom living_room")
    assert "enter bedroom before going into living room" in item["utt"]
    written = parse_prefix(item["ltl"])
    meant = p.past_avoidance("living_room", "bedroom")
    obeys_sentence = trace("kitchen", "bedroom", "living_room")
    breaks_sentence = trace("kitchen", "living_room")
    assert not holds(written, obeys_sentence) and holds(written, breaks_sentence)
    assert holds(meant, obeys_sentence) and not holds(meant, breaks_sentence)


@pytest.mark.parametrize(
    ("formula", "good", "bad"),
    [
        (p.global_avoidance("kitchentable"), ("", "a"), ("", "kitchentable")),
        (p.future_avoidance("bathroom", "bedroom"), ("bedroom", "bathroom"), ("bathroom", "k", "bedroom")),
        (p.delayed_reaction("kitchen", "living_room"), ("kitchen", "b", "living_room"), ("living_room", "kitchen")),
        (p.prompt_reaction("living_room", "bedroom"), ("living_room", "bedroom"), ("living_room", "k", "bedroom")),
        (p.prompt_reaction("living_room", "bedroom"), ("k",), ("k", "living_room")),
        (p.past_avoidance("bathroom", "kitchen"), ("kitchen", "bathroom"), ("bathroom", "kitchen")),
        (p.past_avoidance("bathroom", "kitchen"), ("kitchen",), ("bedroom",)),
        (p.precedence("kitchen", "bathroom"), ("bedroom",), ("bedroom", "bathroom", "kitchen")),
        (p.upper_restricted_avoidance("bedroom", 2), ("bedroom", "bedroom", "k", "bedroom"), ("bedroom", "k", "bedroom", "k", "bedroom")),
        (p.upper_restricted_avoidance("bedroom", 0), ("k", "b"), ("k", "bedroom")),
        (p.lower_restricted_avoidance("kitchen", 2), ("kitchen", "b", "kitchen"), ("kitchen", "kitchen")),
        (p.exact_restricted_avoidance("a", 1), ("b", "a", "a", "b"), ("a", "b", "a")),
        (p.exact_restricted_avoidance("a", 0), ("b",), ("b", "a")),
        (p.visit("a", "b"), ("b", "a"), ("a", "a")),
        (p.sequenced_visit("a", "b"), ("b", "a", "b"), ("b", "a")),
        (p.ordered_visit("a", "b", "c"), ("a", "b", "c"), ("a", "c", "b")),
        (p.strictly_ordered_visit("a", "b"), ("a", "", "b"), ("a", "", "a", "b")),
        (p.patrolling("a"), ("a", "", "a"), ("a", "")),
        (p.instantaneous_reaction("is_open(fridge)", "agent_at(kitchen)"), ("agent_at(kitchen)+is_open(fridge)",), ("is_open(fridge)",)),
        (p.bound_reaction("a", "b"), ("a+b", ""), ("a", "")),
        (p.bound_delay("a", "b"), ("a", "b"), ("a", "")),
        (p.wait("a", "b"), ("a", "a", "b"), ("a", "")),
    ],
)  # fmt: skip
def test_patterns_on_hand_checked_traces(
    formula: Any, good: tuple[str, ...], bad: tuple[str, ...]
) -> None:
    assert holds(formula, trace(*good))
    assert not holds(formula, trace(*bad))


def visits(w: list[frozenset[str]], x: str) -> int:
    """Entering episodes: positions where x holds and did not hold just before."""
    return sum(1 for i, s in enumerate(w) if x in s and (i == 0 or x not in w[i - 1]))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from([frozenset(), frozenset({"a"})]), min_size=1, max_size=9))
def test_restricted_avoidance_counts_entering_episodes(w: list[frozenset[str]]) -> None:
    k = visits(w, "a")
    for n in range(4):
        assert holds(p.upper_restricted_avoidance("a", n), w) == (k <= n)
        assert holds(p.exact_restricted_avoidance("a", n), w) == (k == n)
        if n:
            assert holds(p.lower_restricted_avoidance("a", n), w) == (k >= n)


def test_patterns_take_formulas_and_text() -> None:
    assert p.delayed_reaction(parse("a | b"), "c") == parse("G(a | b -> F c)")
    assert str(p.global_avoidance("agent_at(kitchen)", "is_open(fridge)")) == (
        "G !agent_at(kitchen) & G !is_open(fridge)"
    )


@pytest.mark.parametrize(
    "call",
    [
        lambda: p.upper_restricted_avoidance("a", -1),
        lambda: p.lower_restricted_avoidance("a", 0),
        lambda: p.lower_restricted_avoidance("a", 1.5),
        lambda: p.ordered_visit("a"),
        lambda: p.visit(),
        lambda: p.wait("a", 3),
        lambda: p.wait("a", "b &"),
    ],
)
def test_bad_pattern_arguments(call: Any) -> None:
    with pytest.raises(SpecError, match="expected"):
        call()


def test_every_pattern_has_an_english_reading() -> None:
    for fn in p.PATTERNS.values():
        assert fn.__doc__ and len(fn.__doc__) > 20
