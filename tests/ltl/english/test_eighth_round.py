"""Rules of the eighth round, each a rule about the structure of English checked on phrasings of
no benchmark set: an errand to a place is a visit ("take the cart to the kitchen"); a second
sentence that only explains the rule is dropped ("...; nobody should trip"); a task said before
a clause that awaits it ("Disarm the alarm, and don't enter the hall until it's disarmed"); a
rule and its converse said in two clauses ("..., and the lamp is only on right after ..."); an
elided condition ("and off whenever nobody is"); events said in free words (a one-word name by
its verb, a shortened noun, a compound by its head, an agent noun, a modifying noun, the agent
left unsaid, "never" inside the phrase); waits with a proposition as subject; strictly ordered
visits said over several clauses; and the cases that must fail rather than guess."""

from __future__ import annotations

import pytest
from phrasing_kit import Phrasings

from governor.ltl.english.grammar.sentence.converse import converse
from governor.ltl.english.grammar.sentence.tails import explanations, tasks_awaited

PLACES = ["yard", "cellar", "attic", "roof", "vault", "porch", "front_desk", "loading_area"]
PROPS = [
    "siren_on", "lamp_on", "lever_pulled", "hatch_open", "gate_closed", "guest_present",
    "courier_arrived", "check_done", "rain_stopped",
]  # fmt: skip
KIT = Phrasings(PLACES, PROPS)
EVENTS = Phrasings(
    ["porch", "hall"],
    ["raining", "greeting", "guest_arrived", "temp_low", "doorbell_pressed", "smoke_detected",
     "robot_stopped", "fan_on", "box_on_belt", "siren_on", "hatch_open", "call_pressed",
     "tray_picked_up"],
)  # fmt: skip

CASES: list[tuple[str, list[str], int | None, str]] = [
 # errands: the place is the visit
 ("visit", ["attic"], None, "Wheel the trolley to the attic."),
 ("sequenced_visit", ["cellar", "roof"], None, "Bring the mail first to the cellar and later to the roof."),
 ("visit", ["front_desk"], None, "Pick up the keys at the front desk."),
 ("past_avoid", ["vault", "porch"], None, "Escort the visitors to the porch, and don't go into the vault before that."),
 # explanations after the rule
 ("global_avoid", ["cellar"], None, "Stay out of the cellar. Nobody should get hurt down there."),
 ("upper_rest_avoid", ["attic"], 2, "Go up to the attic at most twice; the stairs are steep."),
 ("visit", ["yard", "roof"], None, "Visit the yard and the roof. The view is lovely."),
 ("global_avoid", ["vault"], None, "Never set foot in the vault. Staff only."),
 ("wait", ["siren_on", "guest_present"], None, "Keep the siren on until a guest is present; people are still inside."),
 ("upper_rest_avoid", ["vault"], 1, "Enter the vault at most once: one visit, max."),
 # a task, then a clause that awaits it
 ("past_avoid", ["yard", "gate_closed"], None, "Close the gate, and don't go into the yard until it's closed."),
 ("past_avoid", ["vault", "lever_pulled"], None, "Pull the lever, and stay out of the vault until you have done so."),
 ("past_avoid", ["roof", "hatch_open"], None, "Open the hatch, which is a must, and don't climb onto the roof before it's open."),
 ("past_avoid", ["cellar", "check_done"], None, "Run the check, and don't go down to the cellar before it is done."),
 # a rule and its converse
 ("bound_delay", ["lever_pulled", "siren_on"], None, "Whenever the lever is pulled, the siren is on at the next step, and the siren is only on right after a step where the lever was pulled."),
 ("bound_delay", ["lever_pulled", "siren_on"], None, "The siren is on at a step if and only if the lever was pulled at the step before."),
 ("bound_delay", ["hatch_open", "lamp_on"], None, "One step after each moment the hatch is open, the lamp is on, and it is on at no step except right after one where the hatch was open."),
 ("bound_delay", ["lever_pulled", "lamp_on"], None, "Every time the lever is pulled, the lamp is on at the next step; the lamp is only on at a step if the lever was pulled just before it."),
 ("bound_delay", ["yard", "roof"], None, "If you are in the yard at a step, you are on the roof at the next step, and vice versa: being on the roof at the next step means being in the yard now."),
 ("bound_react", ["guest_present", "lamp_on"], None, "Keep the lamp on whenever a guest is present, and off whenever nobody is."),
 ("bound_react", ["vault", "siren_on"], None, "Have the siren on while you are in the vault, and off whenever you aren't there."),
 ("bound_react", ["hatch_open", "lamp_on"], None, "Whenever the hatch is open the lamp is on, and the lamp is never on while the hatch is closed."),
 ("bound_react", ["guest_present", "lamp_on"], None, "The lamp is on if and only if a guest is standing by the door."),
 # waits: a proposition as subject, an event in free words
 ("wait", ["hatch_open", "courier_arrived"], None, "The hatch stays open until the courier has arrived."),
 ("wait", ["cellar", "rain_stopped"], None, "Stay in the cellar until the rain stops."),
 ("wait", ["yard", "lamp_on"], None, "The robot waits in the yard until the lamp turns on."),
 # ordered and strictly ordered visits over several clauses
 ("ordered_visit", ["cellar", "attic"], None, "Go to the cellar and then the attic; entering the attic before the cellar is not allowed."),
 ("ordered_visit", ["yard", "cellar", "roof"], None, "Check the yard, the cellar and the roof in order. Going to the cellar before the yard, or the roof before the cellar, is forbidden."),
 ("ordered_visit", ["attic", "roof"], None, "Visit the attic and then the roof, not the other way round."),
 ("strictly_ordered_visit", ["yard", "roof"], None, "Visit the yard and then the roof: a single visit to the yard before the roof, no going back to the yard in between, and never the roof first."),
 ("strictly_ordered_visit", ["cellar", "attic"], None, "Go to the cellar, then the attic. Enter the cellar once, leave it, and don't go back there before the attic; the attic must not come first."),
 ("strictly_ordered_visit", ["yard", "cellar"], None, "Head to the yard and then the cellar. Go into the yard just once before moving on, and do not enter the cellar any earlier."),
 ("strictly_ordered_visit", ["yard", "cellar", "attic"], None, "First the yard, then the cellar, then the attic, no doubling back: once you leave a place you don't go back into it before reaching the next one, and no place comes before the one ahead of it."),
 ("strictly_ordered_visit", ["yard", "roof"], None, "Go to the yard, then the roof; only one visit to the yard on the way, and never the roof first."),
 ("strictly_ordered_visit", ["loading_area", "roof"], None, "Go to the loading area and after that to the roof. Don't go to the roof first, and don't come back to loading between leaving it and reaching the roof."),
 ("sequenced_visit", ["yard", "roof", "yard"], None, "Drive to the yard, then to the roof, and after that back to the yard."),
 ("sequenced_visit", ["cellar", "attic"], None, "Make your way to the cellar and, some time after, to the attic."),
 # patrolling, frames, facts, the order left open, purposes
 ("patrolling", ["yard"], None, "Don't ever stop visiting the yard."),
 ("patrolling", ["roof", "yard"], None, "Keep returning to the roof and the yard for as long as the shift lasts."),
 ("patrolling", ["attic", "cellar"], None, "The robot keeps visiting the attic and the cellar; it never stops coming back to them."),
 ("global_avoid", ["vault"], None, "The vault has wet paint, so you must avoid it."),
 ("visit", ["yard", "roof"], None, "Visit the yard and the roof; I don't mind which comes first."),
 ("prompt_react", ["siren_on", "yard"], None, "Whenever the siren is on, go to the yard at the next step so nobody panics."),
 ("global_avoid", ["cellar"], None, "You may go anywhere except the cellar."),
 ("exact_rest_avoid", ["porch"], 3, "Go to the porch exactly three times during your rounds."),
 ("delay_react", ["siren_on", "porch"], None, "When the siren is on, go to the porch; not necessarily right away, but eventually."),
]  # fmt: skip

EVENT_CASES: list[tuple[str, list[str], int | None, str]] = [
 ("delay_react", ["raining", "porch"], None, "Whenever it rains, head out to the porch sooner or later."),
 ("bounded_react", ["guest_arrived", "greeting"], 2, "As soon as a guest arrives, greet them within two steps."),
 ("prompt_react", ["temp_low", "fan_on"], None, "If the temperature falls too low, the fan must be on at the next step."),
 ("prompt_react", ["doorbell_pressed", "robot_stopped"], None, "When someone presses the bell, stop at the next step."),
 ("bounded_react", ["smoke_detected", "hall"], 3, "When the smoke detector goes off, go to the hall within 3 steps."),
 ("instant_react", ["fan_on", "temp_low"], None, "The fan only runs when the temperature is low."),
 ("prompt_react", ["box_on_belt", "robot_stopped"], None, "Once a box is on the packing belt, stop at the next step."),
 ("future_avoid", ["siren_on", "hatch_open"], None, "Once the siren is on, the hatch must never be opened from then on."),
 ("prompt_react", ["call_pressed", "siren_on"], None, "Whenever the call button is pressed, the siren must be on at the next step."),
 ("bounded_react", ["tray_picked_up", "hall"], 2, "After you pick up the hot tray, go to the hall within 2 steps."),
 # "stop by" names a place: no order to stop
 ("visit", ["porch", "hall"], None, "Stop by the porch and the hall; I do not mind the order."),
]  # fmt: skip


def _syms(text: str) -> list[str]:
    return text.split(" ")


@pytest.mark.parametrize("family,args,n,sentence", CASES, ids=[c[3] for c in CASES])
def test_eighth_round_phrasing_is_translated_to_its_family(
    family: str, args: list[str], n: int | None, sentence: str
) -> None:
    KIT.reads_as(sentence, family, args, n)


@pytest.mark.parametrize("family,args,n,sentence", EVENT_CASES, ids=[c[3] for c in EVENT_CASES])
def test_events_said_in_free_words_are_grounded(
    family: str, args: list[str], n: int | None, sentence: str
) -> None:
    EVENTS.reads_as(sentence, family, args, n)


@pytest.mark.parametrize(
    "sentence",
    [
        # a converse said alone: "only then" of no rule
        "The lamp is only on right after a step where the lever was pulled.",
        # "never" inside an event phrase with no time after it: future or same step, unsaid
        "Once the siren is on, the hatch must never be opened.",
        # a place repeated next to itself is no sequence
        "Drive to the yard and then the yard.",
        # a sentence after the rule that refers back is no explanation
        "Go to the yard, then the roof. Never go back.",
        # "only if ..." after the rule restricts it: no reason, and its condition is unread
        "Go to the yard. Only if needed.",
    ],
)  # fmt: skip
def test_eighth_round_cases_fail_rather_than_guess(sentence: str) -> None:
    KIT.fails(sentence)


def test_a_noun_named_in_full_keeps_its_head() -> None:
    # "hatch" is a noun of hatch_open: "the hatch sensor" is another thing, not the hatch
    EVENTS.fails("Whenever the hatch sensor is open, go to the hall.")


def test_explanations_keep_sentences_that_refer_to_what_was_named() -> None:
    said = _syms("P1 THEN P2 STOP NOT AGAIN STOP")
    assert explanations(said) == said  # a return refers back: kept
    assert explanations(_syms("NOT P1 STOP NOT MUST STOP")) == _syms("NOT P1 STOP")
    assert explanations(_syms("NOT MUST STOP NOT P1")) == _syms("NOT MUST STOP NOT P1")
    # "both" refers to a list only where two places were named
    assert explanations(_syms("P1 AND P2 STOP ANY")) == _syms("P1 AND P2 STOP ANY")
    assert explanations(_syms("P1 LE_2 STOP ANY")) == _syms("P1 LE_2 STOP")


def test_a_task_is_dropped_only_when_a_later_clause_awaits_it() -> None:
    awaited = _syms("P1 COMMA AND NOT P2 UNTIL P1")
    assert tasks_awaited(awaited, frozenset({"P1"})) == _syms("NOT P2 UNTIL P1")
    assert tasks_awaited(awaited, frozenset()) == awaited  # a place: a visit of its own
    other = _syms("P1 COMMA AND NOT P2 UNTIL P3")
    assert tasks_awaited(other, frozenset({"P1"})) == other


def test_a_converse_with_other_names_is_not_read_as_the_rule_s() -> None:
    pair = _syms("WHENEVER P1 COMMA P2 NEXT COMMA AND P2 ONLY NEXT AFTER P1")
    assert converse(pair) == _syms("P2 NEXT IFF P1")
    other = _syms("WHENEVER P1 COMMA P2 NEXT COMMA AND P2 ONLY NEXT AFTER P3")
    assert converse(other) == other
