"""Rules of the tenth round, each checked on phrasings of no benchmark set. Precision first: a
negated clause that names nothing is no avoidance of the place before ("keep returning to A;
there's no point after which you can stop" patrols A; "... you can forget it" fails); "never
... again" after a condition is from then on (future avoidance), also said of an event ("the
pump must never run again"); "until it comes" / "until it happens" awaits the proposition said
before; an opening "until ...," whose event no rule reads fails before a negation instead of
being dropped as a time frame; "after you've been to A, go to B" presupposes the visit: a
sequence, with the reaction offered as the other reading. Coverage: a rule said again of the
negated condition ("if not a, not b at the next step", "whenever it isn't, b is off at the next
step", "somewhere other than B"); an elided converse opening with its condition ("and whenever
you're not, it's off"); events in other words (kick in, overflow, go in, come to a stop, back to
normal, go up / raised, in motion, released); "no later" after a deadline; other counts denied
after an exact one; "stay clear of", "there is no situation in which", "sit with ... in A";
returns "step back in" and "don't return to A once you've left it until B"."""

from __future__ import annotations

import pytest
from phrasing_kit import Phrasings

from governor.ltl.english.translate import translate_offline

PLACES = ["mill", "barn", "silo", "jetty", "boathouse", "returns_desk"]
PROPS = ["horn_on", "lamp_on", "gate_open", "valve_shut", "water_high", "pump_on", "flag_up"]
KIT = Phrasings(PLACES, PROPS)
EVENTS = Phrasings(
    ["mill", "barn", "jetty"],
    ["cooling_on", "tank_full", "bag_added", "cart_stopped", "level_normal", "flag_raised",
     "belt_moving", "brake_engaged", "stop_requested", "heat_high", "order_placed",
     "order_shipped"],
)  # fmt: skip

CASES: list[tuple[str, list[str], int | None, str]] = [
 # a negation that names nothing, after a repetition: "never stop"
 ("patrolling", ["mill"], None, "Keep returning to the mill; there's no point after which you can stop."),
 ("patrolling", ["barn"], None, "Keep going back to the barn; there is no time at which the robot may stop."),
 ("patrolling", ["silo"], None, "Keep visiting the silo. You can never stop."),
 # "never ... again" after a condition: from then on
 ("future_avoid", ["horn_on", "barn"], None, "As soon as the horn is on, the robot must never enter the barn again."),
 ("future_avoid", ["gate_open", "silo"], None, "Once the gate is open, never go into the silo again."),
 ("future_avoid", ["water_high", "mill"], None, "When the water is high, you may never set foot in the mill again."),
 ("future_avoid", ["valve_shut", "pump_on"], None, "After the valve has been shut, the pump must never be on again."),
 # "until it comes": the proposition said before is awaited
 ("past_avoid", ["barn", "horn_on"], None, "The horn will sound eventually; until it happens, keep out of the barn."),
 ("past_avoid", ["silo", "flag_up"], None, "The flag must go up at some point, and until it does, the silo is off limits."),
 ("past_avoid", ["mill", "lamp_on"], None, "The lamp has to come on sometime; until that occurs, stay out of the mill."),
 # a rule said again of the negated condition: the bound delay
 ("bound_delay", ["gate_open", "lamp_on"], None, "If the gate is open, the lamp must be on at the next step; if the gate is not open, the lamp must not be on at the next step."),
 ("bound_delay", ["water_high", "pump_on"], None, "Whenever the water is high, the pump is on at the following tick, and whenever it isn't, the pump is off at the following tick."),
 ("bound_delay", ["horn_on", "mill"], None, "Be at the mill at the next step whenever the horn is on, and somewhere other than the mill at the next step whenever the horn is not on."),
 ("bound_delay", ["valve_shut", "flag_up"], None, "If the valve is shut now, the flag is up at the next step, and if the valve is not shut now, the flag is not up at the next step."),
 # an elided converse with its condition first: the bound reaction
 ("bound_react", ["barn", "lamp_on"], None, "Whenever you're in the barn, the lamp is on, and whenever you're not, it's off."),
 ("bound_react", ["jetty", "horn_on"], None, "While you are on the jetty, the horn is on, and while you aren't, it is off."),
 # a place whose name holds a word of returning is no return
 ("wait", ["returns_desk", "horn_on"], None, "Stay at the returns desk until the horn is on."),
 # a deadline said again, other counts denied after an exact one
 ("prompt_react", ["gate_open", "lamp_on"], None, "Whenever the gate opens, the lamp is on at the next step, no later."),
 ("prompt_react", ["horn_on", "barn"], None, "If the horn is on, be in the barn at the next step and no later."),
 ("exact_rest_avoid", ["mill"], 2, "Go to the mill exactly twice: not once, not three times."),
 ("exact_rest_avoid", ["barn"], 3, "Visit the barn exactly three times. Not twice, not four times."),
 # avoidance said in other words
 ("global_avoid", ["silo"], None, "Stay clear of the silo for the whole shift."),
 ("global_avoid", ["jetty"], None, "There is no situation in which the robot may enter the jetty."),
 ("global_avoid", ["boathouse"], None, "There is no case where you may go into the boathouse."),
 # staying with someone in a place
 ("wait", ["barn", "flag_up"], None, "Sit with the farmer in the barn until the flag is up."),
 ("wait", ["mill", "lamp_on"], None, "Sit beside the patient in the mill until the lamp is on."),
 # returns with the place elided or said before "once you've left it"
 ("strictly_ordered_visit", ["mill", "barn"], None, "Visit the mill and then the barn, in strict order: once you've left the mill, don't step back in until you're at the barn, and don't go to the barn before the mill."),
 ("strictly_ordered_visit", ["silo", "jetty"], None, "Drive to the silo, then on to the jetty: no stop at the jetty before the silo, and don't return to the silo once you've left it until you've reached the jetty."),
 # "one" and "a place" after leaving: "it" is that place, each in the list
 ("strictly_ordered_visit", ["mill", "barn", "silo"], None, "Go to the mill, then the barn, then the silo. Don't enter any of them before the one before it, and once you leave one, don't go back into it until you've reached the next."),
 ("strictly_ordered_visit", ["jetty", "boathouse", "mill"], None, "First the jetty, then the boathouse, then the mill. Never get to one before the one before it, and after you leave a place, move on to the next without returning to it."),
 ("strictly_ordered_visit", ["barn", "silo", "mill"], None, "Visit the barn, the silo and the mill in that order; never reach one ahead of the one before it, and once you exit one, do not go back into it before the next."),
 # a frame of the whole run said with "while"
 ("global_avoid", ["silo"], None, "While you're doing the rounds on the farm, remember one thing: the silo is never to be entered."),
 ("global_avoid", ["mill"], None, "While on your shift, keep out of the mill."),
 ("patrolling", ["barn"], None, "While you're on patrol, keep going back to the barn."),
]  # fmt: skip

EVENT_CASES: list[tuple[str, list[str], int | None, str]] = [
 ("bounded_react", ["heat_high", "cooling_on"], 3, "Whenever the heat is high, the cooling has to kick in within 3 ticks."),
 ("prompt_react", ["tank_full", "mill"], None, "Any time the tank overflows, be at the mill at the next step."),
 ("prompt_react", ["tank_full", "bag_added"], None, "Whenever the tank is full, the bag goes in at the next step."),
 ("wait", ["barn", "cart_stopped"], None, "Stay in the barn until the cart has come to a full stop."),
 ("past_avoid", ["jetty", "level_normal"], None, "Keep off the jetty until the level is back to normal."),
 ("bound_react", ["belt_moving", "flag_raised"], None, "The flag is up exactly when the belt is in motion."),
 ("future_avoid", ["flag_raised", "jetty"], None, "Once the flag goes up, keep off the jetty from then on."),
 ("bound_delay", ["stop_requested", "brake_engaged"], None, "If a stop is requested, the brake must be engaged at the next step; if no stop is requested, the brake must be released at the next step."),
 ("bounded_react", ["order_placed", "order_shipped"], 2, "When an order comes in, it must be shipped within 2 turns."),
 ("future_avoid", ["tank_full", "belt_moving"], None, "After the tank has filled up, the belt must never move again."),
]  # fmt: skip


@pytest.mark.parametrize("family,args,n,sentence", CASES, ids=[c[3] for c in CASES])
def test_tenth_round_phrasing_is_translated_to_its_family(
    family: str, args: list[str], n: int | None, sentence: str
) -> None:
    KIT.reads_as(sentence, family, args, n)


@pytest.mark.parametrize("family,args,n,sentence", EVENT_CASES, ids=[c[3] for c in EVENT_CASES])
def test_tenth_round_events_are_grounded(
    family: str, args: list[str], n: int | None, sentence: str
) -> None:
    EVENTS.reads_as(sentence, family, args, n)


@pytest.mark.parametrize(
    "sentence",
    [
        # a negated sentence that names nothing is no avoidance of the place before
        "Keep returning to the mill; there's no point after which you can forget it.",
        "Keep going back to the silo; there is no point after which you may skip it.",
        # an opening "until" whose event no rule reads is no time frame of the whole run
        "Until the whistle blows, stay out of the mill.",
        "Until the bus has left, keep away from the jetty.",
        # "until it" with no event said before it
        "Until it comes, stay out of the mill.",
        # "while" with an event no rule reads is no frame of the run
        "While the whistle blows, keep out of the mill.",
    ],
)  # fmt: skip
def test_tenth_round_cases_fail_rather_than_guess(sentence: str) -> None:
    KIT.fails(sentence)


@pytest.mark.parametrize(
    "sentence,places",
    [
        ("After you've been to the mill, make your way to the barn at some point.", ("mill", "barn")),
        ("After you have visited the silo, go to the jetty.", ("silo", "jetty")),
        ("After you've been in the boathouse, head to the mill eventually.", ("boathouse", "mill")),
    ],
)  # fmt: skip
def test_after_a_visit_in_the_perfect_is_a_sequence_with_the_reaction_offered(
    sentence: str, places: tuple[str, str]
) -> None:
    t = translate_offline(sentence, KIT.domain)
    assert t.formula is not None, t.error
    KIT.reads_as(sentence, "sequenced_visit", list(places), None)
    assert t.ambiguous and t.reading is not None and "ambiguous" in t.reading
    assert [a.pattern for a in t.alternatives] == ["delay_react"]


def test_after_every_visit_stays_a_reaction() -> None:
    KIT.reads_as("After every visit to the mill, go to the barn eventually.", "delay_react",
                 ["mill", "barn"], None)  # fmt: skip
    KIT.reads_as("You must go to the barn after you visit the mill.", "delay_react",
                 ["mill", "barn"], None)  # fmt: skip
