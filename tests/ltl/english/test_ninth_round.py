"""Rules of the ninth round, each checked on phrasings of no benchmark set. Precision first: a
time said in a unit other than "step" (a move, a turn, a tick, a cycle) is read as a step, and a
time no rule reads ("two turns later", "on the next round", "shortly after") fails the sentence
rather than be dropped; a reason that says a time or a rule fails rather than be dropped; a
filler holds only where it restates ("immediately or never" is no "immediately"; "at least
twice, but no more" is exact); "before it has" awaits the place named before; "in that
sequence" is a sequenced visit. Coverage: a rule and its converse in more shapes ("at no other
step", "never unless ... the step just before", "only while ..., and always while you're
there"); returns with the place left unnamed or said again ("once you leave it, don't come back
until B"; "once you walk out of A, stay out of it until B"); "a single stop at each"; numbered
steps ("Step one: A. Step two: B."); frames of a watch or a service; "without ever finishing";
events in free words (a call for something, a compound's head noun, "comes in", "start")."""

from __future__ import annotations

import pytest
from phrasing_kit import Phrasings

from governor.ltl.english.grammar.normaliser import symbols
from governor.ltl.english.phrases.time_units import unit_variants

PLACES = ["mill", "barn", "silo", "jetty", "boathouse", "pantry", "cellar_door", "hayloft"]
PROPS = ["horn_on", "lamp_on", "gate_open", "valve_shut", "water_high", "pump_on", "flag_up"]
KIT = Phrasings(PLACES, PROPS)
EVENTS = Phrasings(
    ["mill", "barn", "jetty"],
    ["tea_requested", "tea_served", "medic_call", "radio_lost", "parcel_in", "geese_honking",
     "spare_on", "pump_broken", "hatch_open", "courier_arrived"],
)  # fmt: skip

CASES: list[tuple[str, list[str], int | None, str]] = [
 # time units: a move, a turn, a tick, a cycle are steps
 ("prompt_react", ["horn_on", "mill"], None, "Whenever the horn is on, be at the mill on your very next turn."),
 ("prompt_react", ["gate_open", "barn"], None, "If the gate is open, head to the barn during the following move."),
 ("prompt_react", ["water_high", "pump_on"], None, "Whenever the water is high, the pump must be on one tick later."),
 ("bounded_react", ["lamp_on", "silo"], 3, "Each time the lamp is on, reach the silo within three cycles."),
 ("bounded_react", ["horn_on", "jetty"], 2, "When the horn is on, get to the jetty in 2 turns or fewer."),
 ("bounded_react", ["gate_open", "mill"], 1, "If the gate is open, be at the mill by the next move."),
 # a rule and its converse
 ("bound_delay", ["gate_open", "lamp_on"], None, "The lamp is on on the turn right after the gate is open, and on no other turn."),
 ("bound_delay", ["horn_on", "flag_up"], None, "Whenever the horn is on, the flag is up at the following step; the flag is up at no other step."),
 ("bound_delay", ["valve_shut", "pump_on"], None, "The pump is on exactly one move after the valve is shut, and never at any other time."),
 ("bound_delay", ["water_high", "lamp_on"], None, "The lamp is on at the next step whenever the water is high, and it is never on unless the water was high at the step just before."),
 ("bound_delay", ["gate_open", "horn_on"], None, "Exactly one step after the gate is open, the horn is on, and the horn is never on at other steps."),
 ("bound_react", ["mill", "lamp_on"], None, "Keep the lamp on only while you're in the mill, and always while you're there."),
 ("bound_react", ["gate_open", "lamp_on"], None, "The lamp is on when the gate is open and off when it is not."),
 # "before it has": the place named before is awaited
 ("past_avoid", ["barn", "mill"], None, "The robot must visit the mill, and it may not enter the barn before it has."),
 ("past_avoid", ["silo", "jetty"], None, "Go to the jetty; you may not set foot in the silo until you have."),
 ("past_avoid", ["hayloft", "barn"], None, "Visit the barn, and do not climb into the hayloft before you did."),
 # "in that sequence": the sequence said, a sequenced visit
 ("sequenced_visit", ["mill", "barn", "silo"], None, "Reach the mill, then the barn, then the silo, in that sequence."),
 ("sequenced_visit", ["jetty", "boathouse"], None, "Visit the jetty and the boathouse, one after the other in this sequence."),
 ("sequenced_visit", ["pantry", "mill", "barn"], None, "Step one: the pantry. Step two: the mill. Step three: the barn."),
 ("sequenced_visit", ["silo", "jetty"], None, "Stop one: the silo. Stop two: the jetty."),
 # strictly ordered visits over several clauses
 ("strictly_ordered_visit", ["mill", "barn"], None, "Go to the mill, then the barn. Don't show up at the barn before the mill, and once you walk out of the mill, stay out of it until you have reached the barn."),
 ("strictly_ordered_visit", ["silo", "jetty"], None, "Visit the silo and then the jetty. Don't go to the jetty before the silo, and only visit the silo once before you reach the jetty."),
 ("strictly_ordered_visit", ["barn", "mill"], None, "Go to the barn and then the mill. You can't reach the mill before the barn, and you get one visit to the barn before the mill: once you leave it, don't come back until you've been to the mill."),
 ("strictly_ordered_visit", ["mill", "barn", "silo"], None, "Visit the mill, the barn and the silo in order, with a single stop at each before moving on to the next."),
 ("strictly_ordered_visit", ["jetty", "barn", "mill"], None, "Take the route jetty, barn, mill in that order without doubling back: don't enter a place ahead of its turn, and don't re-enter one you've left until you're at the next one."),
 # counts in a frame, repetition, waits
 ("upper_rest_avoid", ["silo"], 2, "Don't go to the silo more than twice during the watch."),
 ("upper_rest_avoid", ["pantry"], 4, "You may go into the pantry no more than four times during service."),
 ("exact_rest_avoid", ["mill"], 2, "Visit the mill at least twice, but no more."),
 ("patrolling", ["mill", "barn", "silo"], None, "Keep cycling through the mill, the barn and the silo, without ever finishing."),
 ("wait", ["jetty", "flag_up"], None, "Hover over the jetty until the flag is up."),
 ("global_avoid", ["barn"], None, "Keep out of the barn, because the floor is wet."),
]  # fmt: skip

EVENT_CASES: list[tuple[str, list[str], int | None, str]] = [
 ("bounded_react", ["tea_requested", "tea_served"], 2, "Whenever the captain shouts for tea, the tea must be served within two steps."),
 ("bounded_react", ["medic_call", "barn"], 3, "Whenever a farmer radios for a medic, arrive at the barn within three turns."),
 ("bounded_react", ["radio_lost", "jetty"], 4, "Any time the radio signal is lost, be back at the jetty within 4 moves."),
 ("delay_react", ["parcel_in", "mill"], None, "Whenever a parcel comes in, go to the mill eventually."),
 ("delay_react", ["geese_honking", "barn"], None, "When the geese start honking, go over to the barn, not necessarily at once but eventually."),
 ("bounded_react", ["pump_broken", "spare_on"], 2, "If the pump breaks, the spare unit must be on within two moves."),
 ("wait", ["mill", "courier_arrived"], None, "Remain at the mill until your courier driver arrives."),
]  # fmt: skip


@pytest.mark.parametrize("family,args,n,sentence", CASES, ids=[c[3] for c in CASES])
def test_ninth_round_phrasing_is_translated_to_its_family(
    family: str, args: list[str], n: int | None, sentence: str
) -> None:
    KIT.reads_as(sentence, family, args, n)


@pytest.mark.parametrize("family,args,n,sentence", EVENT_CASES, ids=[c[3] for c in EVENT_CASES])
def test_ninth_round_events_are_grounded(
    family: str, args: list[str], n: int | None, sentence: str
) -> None:
    EVENTS.reads_as(sentence, family, args, n)


@pytest.mark.parametrize(
    "sentence",
    [
        # a time in a unit no rule reads, or a count of steps no pattern has
        "Whenever the horn is on, go to the mill two turns later.",
        "Whenever the horn is on, go to the mill within 5 minutes.",
        "Whenever the horn is on, go to the mill on the third move.",
        "Whenever the horn is on, go to the mill after a few ticks.",
        # a span or an occasion said next is no next step
        "Whenever the horn is on, go to the mill on the next round.",
        "Whenever the horn is on, go to the mill at the first opportunity.",
        # two steps on, or how often: no pattern says it
        "Whenever the horn is on, be at the mill the step after next.",
        "Whenever the horn is on, be at the mill at the next turn but one.",
        "Go to the mill every turn.",
        # a time of day or of the week: no step says it (and no explanation drops it)
        "Go to the barn. Never at night.",
        "Go to the barn. Never before noon.",
        "Avoid the barn. It is only safe in the morning.",
        # a vague time is neither "eventually" nor a bound
        "Whenever the horn is on, go to the mill shortly after.",
        "If the gate is open, be at the barn soon.",
        # a reason that says a time or a rule may be part of it
        "Go to the mill, because you must not enter the barn before the next step.",
        "Stay in the silo, since the horn will be on at the next step.",
        # "immediately or never" is no "immediately"
        "Whenever the horn is on, go to the mill immediately or never.",
        # "before" with nothing after a negated place: before what is unsaid
        "Visit the mill, and it may not enter the barn before it has ever.",
        # a device named after a name's noun is another thing
        "Whenever the hatch sensor is open, go to the mill.",
    ],
)  # fmt: skip
def test_ninth_round_cases_fail_rather_than_guess(sentence: str) -> None:
    if "hatch" in sentence:
        EVENTS.fails(sentence)
    else:
        KIT.fails(sentence)


def _toks(text: str) -> list[str]:
    return text.split(" ")


def test_every_step_phrase_is_said_of_every_unit() -> None:
    table = {("at", "no", "other", "step"): ("OTHERWISE",), ("step", "out", "of"): ("LEAVE",)}
    variants = unit_variants(table)
    assert variants[("at", "no", "other", "turn")] == ("OTHERWISE",)
    assert variants[("at", "no", "other", "tick")] == ("OTHERWISE",)
    assert ("turn", "out", "of") not in variants  # "step out of" is a verb: no unit
    assert "TIME" in symbols(_toks("P1 two turns later"))
    assert "TIME" not in symbols(_toks("P1 at a step if and only if P2"))  # any step
