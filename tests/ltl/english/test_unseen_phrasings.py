"""Phrasings of the pattern families read by the rules of the fourth round, none taken from a
benchmark set: cue phrases ("whichever comes first", "with no end", "exactly while", "when, and
only when,", "right then", "go together", "in strict order"), constructions ("from A to B to C",
"B stays off limits until A, and C until B", "nor come back to A before B", "only one visit to
A before B", "once you leave A, do not go back into it before B", "within two steps of a",
"no more than four steps later", "a -> b"), references to the listed places ("each one after
the one before it", "reaching them in this order", "before the one preceding it has been
visited"), permissions in parentheses or after a dash, and a name shortened after it was said
in full ("the well house ... the house"). Each is checked equivalent to its family's formula
over one place at a time; and sentences that must fail rather than be read wrongly."""

from __future__ import annotations

import pytest
from phrasing_kit import Phrasings

from governor.ltl import operators as op
from governor.ltl.english.grammar.normaliser import symbols
from governor.ltl.english.grammar.sentence.passes import gapping, not_first, time_frame
from governor.ltl.english.translate import translate_offline
from governor.ltl.parser import atom
from governor.ltl.patterns import PATTERNS
from governor.papers.ltl_translate import equivalent

PLACES = ["forge", "mill", "granary", "well_house"]
PROPS = ["bell", "low_fuel", "lamp_bright", "gate_signal", "alarm", "door_open"]
KIT = Phrasings(PLACES, PROPS)
DOMAIN = KIT.domain
CASES: list[tuple[str, list[str], int | None, str]] = [
    ("visit", ["forge", "mill"], None, "Go to the forge and the mill, whichever comes first."),
    ("visit", ["forge", "mill", "granary"], None, "Each of the forge, the mill and the granary should be visited at least once, no particular order."),
    ("visit", ["forge", "mill"], None, "Before the day is out, stop by the forge and the mill."),
    ("visit", ["forge", "mill"], None, "Get to the forge at some point and also get to the mill at some point."),
    ("sequenced_visit", ["forge", "mill"], None, "Go to the forge, then to the mill (passing through the mill on the way is fine)."),
    ("sequenced_visit", ["forge", "mill", "granary"], None, "Visit the forge, then the mill, then the granary - it is fine if you pass the granary early."),
    ("sequenced_visit", ["forge", "mill", "granary"], None, "The route: forge, mill, granary. Each one must be reached at some time after the one before it; extra visits do not matter."),
    ("sequenced_visit", ["forge", "mill", "granary"], None, "The forge first, then the mill, then the granary. Reaching them in this order is what counts; dropping into the mill early does no harm."),
    ("sequenced_visit", ["forge", "mill"], None, "Head to the forge, and once that is done, go to the mill."),
    ("sequenced_visit", ["forge", "mill", "granary"], None, "Go from the forge to the mill to the granary; extra visits are allowed."),
    ("ordered_visit", ["forge", "mill", "granary"], None, "Go to the forge, then the mill, then the granary. The mill stays off limits until you have reached the forge, and the granary until you have reached the mill."),
    ("ordered_visit", ["forge", "mill", "granary"], None, "Visit the forge, the mill and the granary in this order, and never enter one of them before the one preceding it has been visited."),
    ("ordered_visit", ["forge", "mill", "granary"], None, "In this order: forge, mill, granary. None of them may be entered early; each is allowed only after the previous one, and all three must be reached."),
    ("ordered_visit", ["forge", "mill"], None, "Go to the forge, then the mill, without visiting the mill first."),
    ("strictly_ordered_visit", ["forge", "mill", "granary"], None, "Visit the forge, then the mill, then the granary, never going back."),
    ("strictly_ordered_visit", ["forge", "mill", "granary"], None, "Visit the forge, the mill and the granary in this order: none of them before its predecessor, and only a single visit to the forge before the mill, and to the mill before the granary."),
    ("strictly_ordered_visit", ["forge", "mill", "granary"], None, "Reach the forge, then the mill, then the granary, strictly in order. You may not enter any of them before the previous one, nor come back to the forge before the mill, nor to the mill before the granary."),
    ("strictly_ordered_visit", ["forge", "mill"], None, "First the forge, then the mill. The mill is off limits until you have been in the forge, and once you leave the forge you may not go back into it before getting to the mill."),
    ("strictly_ordered_visit", ["forge", "mill", "granary"], None, "Go from the forge to the mill to the granary, strictly in that order: the forge just once before the mill, the mill just once before the granary, and never the mill before the forge or the granary before the mill."),
    ("strictly_ordered_visit", ["forge", "mill", "granary"], None, "Inspect the forge, the mill and the granary in strict sequence: each entered only after the previous one, and the forge and the mill each not re-entered until the following one has been reached."),
    ("strictly_ordered_visit", ["forge", "mill"], None, "Reach the forge and then the mill, with no visit to the mill before the forge and no second visit to the forge before the mill."),
    ("strictly_ordered_visit", ["forge", "mill", "granary"], None, "Go through the forge, the mill and the granary in strict order, and do not go back to a place before reaching the next one."),
    ("patrolling", ["forge", "mill"], None, "Over and over again, visit the forge and the mill, with no end."),
    ("patrolling", ["forge", "mill"], None, "You should keep checking the forge and the mill again and again, for as long as you run."),
    ("patrolling", ["forge"], None, "Keep returning to the forge."),
    ("patrolling", ["forge", "mill", "granary"], None, "Make endless rounds of the forge, the mill and the granary."),
    ("patrolling", ["forge", "mill"], None, "You must return to the forge and to the mill infinitely many times."),
    ("future_avoid", ["forge", "mill"], None, "The robot should never enter the mill after it has visited the forge."),
    ("past_avoid", ["mill", "forge"], None, "Don't enter the mill until you've been to the forge."),
    ("upper_rest_avoid", ["mill"], 3, "No more than 3 visits to the mill."),
    ("exact_rest_avoid", ["mill"], 2, "Two visits to the mill, exactly."),
    ("exact_rest_avoid", ["mill"], 3, "Enter the mill three times, neither more nor less."),
    ("exact_rest_avoid", ["mill"], 1, "Visit the mill one time and one time only."),
    ("instant_react", ["low_fuel", "forge"], None, "If the fuel is low, you have to be in the forge - at every moment when the fuel is low."),
    ("instant_react", ["door_open", "mill"], None, "If the door is open, you must be in the mill right then."),
    ("delay_react", ["alarm", "mill"], None, "In response to each alarm, go to the mill eventually; it need not be right away."),
    ("prompt_react", ["alarm", "mill"], None, "If the alarm sounds then immediately go to the mill."),
    ("prompt_react", ["lamp_bright", "forge"], None, "You must be in the forge at the step immediately following any step in which the lamp is bright."),
    ("prompt_react", ["alarm", "mill"], None, "Alarm -> mill at the next step, without exception."),
    ("prompt_react", ["low_fuel", "well_house"], None, "Low fuel must be followed immediately, at the next step, by a visit to the well house."),
    ("prompt_react", ["alarm", "mill"], None, "The alarm sounding must always be followed directly by a visit to the mill."),
    ("bound_react", ["alarm", "mill"], None, "Be in the mill when, and only when, the alarm sounds."),
    ("bound_react", ["door_open", "forge"], None, "Be in the forge exactly while the door is open."),
    ("bound_react", ["door_open", "forge"], None, "Be in the forge precisely at the times the door is open."),
    ("bound_react", ["bell", "forge"], None, "Being in the forge and the bell ringing always go together."),
    ("bound_react", ["alarm", "mill"], None, "Be in the mill when the alarm sounds, and only when it sounds."),
    ("bound_delay", ["forge", "mill"], None, "Being in the forge now is equivalent to being in the mill one step from now, at all times."),
    ("bound_delay", ["bell", "mill"], None, "The bell ringing now and you being in the mill one step later must always go together: both or neither."),
    ("bound_delay", ["bell", "forge"], None, "Be in the forge one step after the bell rings, and only then."),
    ("bound_delay", ["alarm", "mill"], None, "You are in the mill one step after the alarm sounds, and at no other time."),
    ("bounded_react", ["bell", "mill"], 4, "Each time the bell rings, go to the mill within 4 steps."),
    ("bounded_react", ["alarm", "mill"], 4, "Each time the alarm sounds, be at the mill no more than four steps later."),
    ("bounded_react", ["alarm", "mill"], 2, "Within two steps of the alarm sounding, you must be at the mill, always."),
    ("wait", ["mill", "bell"], None, "Keep waiting in the mill until the bell rings, which is sure to happen."),
    ("strictly_ordered_visit", ["forge", "mill"], None, "Visit the forge and then the mill. Don't go into the mill before the forge, and don't visit the forge twice before the mill."),
    ("strictly_ordered_visit", ["forge", "mill", "granary"], None, "Forge, then mill, then granary: once you have left a place you may not return to it until you have reached the next one, and no place may be visited ahead of its turn."),
    ("strictly_ordered_visit", ["forge", "mill", "granary"], None, "Visit the forge, the mill and the granary in strict order, with exactly one visit to each of the forge and the mill before the next one."),
    ("bound_react", ["alarm", "mill"], None, "The alarm sounds at exactly the moments you are in the mill."),
    ("bound_react", ["bell", "forge"], None, "Be in the forge whenever the bell rings and at no other time."),
    ("bound_react", ["alarm", "mill"], None, "Whenever the alarm sounds you are in the mill, and you are in the mill only when the alarm sounds."),
    ("bounded_react", ["alarm", "mill"], 2, "Every time the alarm sounds, the mill has to be reached in two steps or less."),
    ("bounded_react", ["bell", "forge"], 4, "The bell rings, then you have up to four steps to get to the forge; this applies every time."),
    ("patrolling", ["forge", "mill"], None, "Visit the forge and the mill again and again until the end of the mission."),
    ("sequenced_visit", ["forge", "mill", "granary"], None, "Visit the forge, then the mill, then the granary; going through any of them earlier doesn't count against you."),
    ("bound_react", ["alarm", "mill"], None, "Be in the mill during exactly those steps in which the alarm sounds."),
    ("bound_react", ["door_open", "mill"], None, "Being in the mill and the door being open must always match."),
    ("bounded_react", ["alarm", "mill"], 2, "When the alarm sounds, you must be in the mill no more than 2 steps afterwards."),
    ("bounded_react", ["alarm", "mill"], 3, "Whenever the alarm sounds, make it to the mill within the following three steps."),
    ("wait", ["forge", "bell"], None, "Hold your position in the forge until the bell rings, which must happen at some point."),
    ("bound_delay", ["alarm", "mill"], None, "The alarm sounding at one step and you being in the mill at the next step must always go together."),
    ("upper_rest_avoid", ["mill"], 2, "Never enter the mill a third time."),
    ("upper_rest_avoid", ["mill"], 3, "You may visit the mill, but not more than three times."),
    ("strictly_ordered_visit", ["forge", "mill", "granary"], None, "Visit the forge, the mill and the granary in that exact order, each only once until the next one has been visited."),
    ("strictly_ordered_visit", ["forge", "mill"], None, "Go to the forge and then the mill; you may not enter the mill before the forge, nor enter the forge again until the mill has been reached."),
    ("ordered_visit", ["forge", "mill"], None, "The robot must visit the forge and the mill, and it must not enter the mill until it has visited the forge."),
    ("past_avoid", ["mill", "forge"], None, "The robot may not enter the mill until it has visited the forge, which it must do."),
    ("ordered_visit", ["forge", "well_house"], None, "Visit the forge and the well house, and never enter the house before the forge."),
    ("wait", ["mill", "bell"], None, "Do not move from the mill until the bell rings; the bell will ring."),
    ("bound_react", ["alarm", "mill"], None, "Be in the mill at exactly the steps where the alarm sounds."),
    ("global_avoid", ["forge", "mill"], None, "The forge and the mill are dangerous; never go to them."),
    ("visit", ["forge", "mill"], None, "There are two places, the forge and the mill; visit them both."),
    ("bound_react", ["alarm", "mill"], None, "The alarm sounds and you are in the mill at exactly the same steps."),
    ("bound_react", ["alarm", "mill"], None, "You are in the mill at a step exactly if the alarm sounds at that step."),
    ("bound_react", ["bell", "forge"], None, "Be at the forge exactly as long as the bell rings."),
    ("bounded_react", ["alarm", "mill"], 6, "If the alarm sounds, get to the mill in six steps or less."),
]  # fmt: skip


@pytest.mark.parametrize("family,args,n,sentence", CASES, ids=[c[3] for c in CASES])
def test_unseen_phrasing_is_translated_to_its_family(
    family: str, args: list[str], n: int | None, sentence: str
) -> None:
    KIT.reads_as(sentence, family, args, n)


@pytest.mark.parametrize(
    "sentence",
    [
        "Limit your visits to the mill to three.",  # a number no count reads
        "Whenever you are in the forge, the bell rang at the step before.",  # a past step
        "Visit the forge, the mill and the granary, without visiting the mill first.",
        "Answer the bell: whenever it rings, be at the forge within three steps.",
        "Visit the forge every other step.",  # a period no pattern has
        "Go to the forge in the first three steps.",
        "Be in the mill exactly on the steps the bell does not ring.",  # an unread "exactly"
    ],
)
def test_what_the_rules_cannot_read_fails(sentence: str) -> None:
    t = translate_offline(sentence, DOMAIN)
    assert t.formula is None and t.error, t.formula


def test_a_place_then_a_bare_never_is_no_future_avoidance() -> None:
    """ "visit A, never B": A required and B avoided throughout ("afterwards" would make it a
    future avoidance)."""
    t = translate_offline("Visit the forge, never the mill.", DOMAIN)
    forge, mill = atom("agent_at(forge)"), atom("agent_at(mill)")
    goal = op.And((PATTERNS["visit"](forge), PATTERNS["global_avoid"](mill)))
    rec = KIT.record("visit", ["forge"], None)
    assert t.formula is not None and equivalent(goal, t.formula, rec), t.formula


def test_elided_clauses_take_the_first_clause_s_negation_again_and_count() -> None:
    syms = ["NOT", "AGAIN", "P1", "BEFORE", "P2", "COMMA", "OR", "P2", "BEFORE", "P3"]
    assert "NOT AGAIN P2 BEFORE P3" in " ".join(gapping(syms))
    post = ["P2", "NOT", "UNTIL", "PERF", "P1", "COMMA", "AND", "P3", "UNTIL", "PERF", "P2"]
    assert " ".join(gapping(post)).endswith("P3 NOT UNTIL PERF P2")
    count = ["ONLY", "N_1", "P1", "BEFORE", "P2", "COMMA", "AND", "P2", "BEFORE", "P3"]
    assert " ".join(gapping(count)).endswith("ONLY N_1 P2 BEFORE P3")
    nor = [
        "NOT",
        "CAN",
        "BEFORE",
        "COMMA",
        "NOR",
        "AGAIN",
        "P1",
        "BEFORE",
        "P2",
        "COMMA",
        "NOR",
        "P2",
        "BEFORE",
        "P3",
    ]
    assert " ".join(gapping(nor)).endswith("NOT AGAIN P1 BEFORE P2 COMMA NOT AGAIN P2 BEFORE P3")
    plain = ["P1", "BEFORE", "P2", "OR", "P2", "BEFORE", "P3"]  # nothing to lend: unchanged
    assert gapping(plain) == plain


def test_symbol_passes_of_the_fourth_round() -> None:
    assert time_frame(["BEFORE", "COMMA", "P1", "AND", "P2"]) == ["P1", "AND", "P2"]
    assert time_frame(["BEFORE", "REF", "COMMA", "P1"]) == ["BEFORE", "REF", "COMMA", "P1"]
    assert not_first(["P1", "THEN", "P2", "COMMA", "NOT", "P2", "FIRST"])[-3:] == [
        "P2",
        "BEFORE",
        "P1",
    ]
    three = ["P1", "COMMA", "P2", "AND", "P3", "COMMA", "NOT", "P2", "FIRST"]
    assert not_first(three) == three  # "first" of three places names no single other one
    assert symbols(["go", "from", "P1", "to", "P2", "to", "P3"]) == [
        "P1",
        "THEN",
        "P2",
        "THEN",
        "P3",
    ]
    assert symbols(["two", "P1", "exactly"]) == ["EQ_2", "P1"]
    assert "NUM" in symbols(["limit", "your", "P1", "to", "three"])
    assert "NUM" not in symbols(["all", "three", "must", "be", "reached"])
