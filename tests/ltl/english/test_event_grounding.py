"""Event grounding: event phrases said in other words than a proposition's name (stems, event
verb families, particles, opposites, "it" for the condition's subject, a subject with a relative
clause), the rules of the fifth round around them (a closing "eventually" after a condition,
restated timing, "be at A and stay there until b", "b whenever a, and never b anywhere else",
"take a trip to A", "in A, b is mandatory", "B after A, never before it", "never drive into
either", "b at the next step if a, and not b at the next step if not a"), and the cases that must fail rather than guess. None of the sentences is
taken from a benchmark set; each is checked equivalent to its family's formula."""

from __future__ import annotations

import pytest
from phrasing_kit import Phrasings

from governor.errors import SpecError
from governor.ltl.english.grounding.event_words import sayings, stem
from governor.ltl.english.grounding.events import EventMatcher
from governor.ltl.english.grounding.lift import lift
from governor.ltl.english.lexicon import tokens
from governor.ltl.english.translate import translate_offline
from governor.ltl.parser import atom

PLACES = ["forge", "mill", "granary"]
PROPS = [
    "fuel_low", "delivery_received", "kettle_done", "test_ok", "pump_running", "lamp_on",
    "hatch_open", "courier_arrives", "farmer_returns", "fire_detected", "fire_out",
    "letter_sent", "crate_stored", "crate_arrived", "cart_loaded",
]  # fmt: skip
KIT = Phrasings(PLACES, PROPS)
DOMAIN = KIT.domain


@pytest.mark.parametrize(
    "words",
    [("runs", "running", "ran", "run"), ("stored", "stores", "store", "storing"),
     ("succeeded", "succeeds", "succeed"), ("passes", "passed", "pass"), ("fell", "falls")],
)  # fmt: skip
def test_inflections_share_one_stem(words: tuple[str, ...]) -> None:
    assert len({stem(w) for w in words}) == 1, [stem(w) for w in words]


def test_a_family_says_a_name_word_and_its_opposite_negates_it() -> None:
    same, opposite = sayings("on")
    assert ("run",) in same and ("wear",) in same and ("off",) in opposite
    assert ("shut",) in sayings("open")[1]


@pytest.mark.parametrize(
    "phrase,name",
    [
        ("the fuel runs low", "fuel_low"), ("a delivery comes in", "delivery_received"),
        ("the kettle goes off", "kettle_done"), ("the test passed", "test_ok"),
        ("the pump runs", "pump_running"), ("switch the lamp on", "lamp_on"),
        ("the courier shows up", "courier_arrives"), ("the farmer comes back", "farmer_returns"),
        ("a letter goes out", "letter_sent"),
    ],
)  # fmt: skip
def test_an_event_phrase_is_grounded_to_the_proposition_it_says(phrase: str, name: str) -> None:
    lifted = lift(phrase, DOMAIN)
    assert [str(p.formula) for p in lifted.phrases] == [name]


def test_an_opposite_says_the_proposition_negated() -> None:
    lifted = lift("if the hatch is shut, wait", DOMAIN)
    assert [str(p.formula) for p in lifted.phrases] == ["hatch_open"]
    assert "not P1" in lifted.text


def test_it_is_the_subject_of_the_condition() -> None:
    lifted = lift("whenever a fire is detected, it must eventually be out", DOMAIN)
    assert [str(p.formula) for p in lifted.phrases] == ["fire_detected", "fire_out"]
    assert "eventually" in lifted.text.split()  # kept from inside the phrase


def test_two_propositions_that_fit_equally_well_fail_with_both_names() -> None:
    matcher = EventMatcher(["lamp_on", "lamp_active"])
    with pytest.raises(SpecError, match=r"lamp_active.*lamp_on|lamp_on.*lamp_active"):
        matcher.match(tokens("the lamp runs"), 0)
    found = matcher.match(tokens("the lamp is active"), 0)  # its own word scores higher
    assert found is not None and found.formula == atom("lamp_active")
    found = EventMatcher(["door_open", "gate_open"]).match(tokens("the gate is ajar"), 0)
    assert found is not None and found.formula == atom("gate_open")


def test_words_that_say_no_part_of_a_name_ground_nothing() -> None:
    assert EventMatcher(["fuel_low"]).match(tokens("the fuel is cold"), 0) is None
    assert EventMatcher(["fire_alarm"]).match(tokens("it happens"), 0, ["fire_alarm"]) is None


CASES: list[tuple[str, list[str], int | None, str]] = [
    ("delay_react", ["fuel_low", "granary"], None, "Every time the fuel runs low, head to the granary at some point afterwards."),
    ("delay_react", ["delivery_received", "mill"], None, "Whenever a delivery comes in, go to the mill eventually."),
    ("delay_react", ["fire_detected", "fire_out"], None, "Whenever a fire is detected, it must eventually be out."),
    ("delay_react", ["crate_arrived", "crate_stored"], None, "Any crate that arrives must be stored eventually."),
    ("delay_react", ["fire_detected", "granary"], None, "Whenever a fire is detected, eventually take a trip to the granary."),
    ("bounded_react", ["crate_arrived", "crate_stored"], 4, "Each time a crate arrives, it should be stored within four steps."),
    ("bounded_react", ["crate_arrived", "cart_loaded"], 3, "Every crate that arrives must be followed by the cart being loaded within 3 steps."),
    ("prompt_react", ["fire_detected", "lamp_on"], None, "Whenever a fire is detected, switch the lamp on right after, at the next step."),
    ("prompt_react", ["fuel_low", "mill"], None, "If the fuel runs low, move to the mill immediately afterwards, at the following step."),
    ("bound_react", ["forge", "lamp_on"], None, "Wear the lamp whenever you are in the forge, and never wear it anywhere else."),
    ("bound_react", ["mill", "lamp_on"], None, "Switch the lamp on exactly while you are in the mill, not before and not after."),
    ("bound_delay", ["test_ok", "pump_running"], None, "The pump runs at the next step exactly when the test passed at this step."),
    ("wait", ["forge", "kettle_done"], None, "Keep standing in the forge until the kettle goes off."),
    ("wait", ["mill", "courier_arrives"], None, "Be at the mill and stay there until the courier shows up."),
    ("wait", ["granary", "farmer_returns"], None, "Wait in the granary until the farmer comes back, and the farmer has to come back."),
    ("bounded_react", ["fire_detected", "granary"], 5, "If a fire is detected, head to the granary and be there within five steps, each time."),
    ("bound_delay", ["test_ok", "pump_running"], None, "The pump runs at the next step if the test passed, and it does not run at the next step if the test failed."),
    ("bound_delay", ["crate_arrived", "hatch_open"], None, "If a crate arrives, the hatch opens at the next step, and if no crate arrives, it stays shut at the next step."),
    ("instant_react", ["mill", "lamp_on"], None, "In the mill, wearing the lamp is mandatory at all times."),
    ("ordered_visit", ["forge", "mill"], None, "Go to the mill after the forge, never before it."),
    ("global_avoid", ["forge", "mill"], None, "The forge and the mill are off limits; never drive into either."),
    ("future_avoid", ["forge", "mill"], None, "Never enter the mill after having been in the forge."),
    ("sequenced_visit", ["forge", "mill"], None, "Go to the forge; once you are done there, go on to the mill."),
    ("sequenced_visit", ["forge", "mill", "granary"], None, "Take me to the forge, afterwards the mill, and after that the granary."),
    ("patrolling", ["forge", "mill"], None, "Always come back to the forge and the mill, time after time."),
]  # fmt: skip


@pytest.mark.parametrize("family,args,n,sentence", CASES, ids=[c[3] for c in CASES])
def test_event_phrasing_is_translated_to_its_family(
    family: str, args: list[str], n: int | None, sentence: str
) -> None:
    KIT.reads_as(sentence, family, args, n)


@pytest.mark.parametrize(
    "sentence",
    [
        "Whenever the fuel is cold, go to the mill.",  # no proposition says "cold"
        # a negated condition read alone: no rule reads "if not a"
        "If no crate arrives, the hatch stays shut at the next step.",
    ],
)
def test_what_the_event_rules_cannot_read_fails(sentence: str) -> None:
    t = translate_offline(sentence, DOMAIN)
    assert t.formula is None, t.formula
