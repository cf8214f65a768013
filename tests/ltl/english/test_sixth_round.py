"""Rules of the sixth round: "goes off" said of a device that sounds, a proposition said negated
("the lever is not pulled") read as "not" before its placeholder, "never b afterwards" / "no
more b" after a condition (future avoidance), a subject's event awaited by "until he does" /
"which it must" / "is going to", a phrasal verb said first ("hand over the ticket"), a
possessive place name, an indefinite noun that names no place, an elided contrast ("open
whenever ..., and shut whenever not ..."), a noun modifying an event's subject, restated counts,
time frames and repetition, and the cases that must fail rather than guess. None of the
sentences is taken from a benchmark set; each is checked equivalent to its family's formula."""

from __future__ import annotations

import pytest
from phrasing_kit import Phrasings

from governor.ltl.english.grounding.lift import lift
from governor.ltl.english.translate import translate_offline

PLACES = ["yard", "cellar", "tool_shed", "porters_lodge", "roof"]
PROPS = [
    "siren_on", "lamp_on", "courier_arrived", "buyer_paid", "ticket_handed_over", "gate_closed",
    "parcel_sent", "pressure_high", "valve_open", "tank_full", "tank_emptied", "hatch_open",
    "cart_present", "guest_arrived", "bell_playing", "lever_pulled",
]  # fmt: skip
KIT = Phrasings(PLACES, PROPS)
DOMAIN = KIT.domain

CASES: list[tuple[str, list[str], int | None, str]] = [
    ("delay_react", ["siren_on", "yard"], None, "Whenever the siren goes off, go to the yard at some point."),
    ("prompt_react", ["siren_on", "cellar"], None, "If the siren goes off, you must be in the cellar at the next step."),
    ("future_avoid", ["siren_on", "cellar"], None, "Once the siren is on, never go down to the cellar after that."),
    ("future_avoid", ["gate_closed", "parcel_sent"], None, "Once the gate closes, no more parcels may be sent."),
    ("future_avoid", ["siren_on", "roof"], None, "If the siren goes off, keep off the roof from then on."),
    ("past_avoid", ["cellar", "courier_arrived"], None, "The courier is going to arrive; stay out of the cellar until he does."),
    ("past_avoid", ["roof", "courier_arrived"], None, "The courier has to turn up eventually; until she does, keep off the roof."),
    ("past_avoid", ["roof", "lamp_on"], None, "Keep away from the roof until the lamp comes on, which it must."),
    ("past_avoid", ["cellar", "siren_on"], None, "Hold off on entering the cellar until the siren is on, and the siren has to sound at some point."),
    ("past_avoid", ["ticket_handed_over", "buyer_paid"], None, "Do not hand over the ticket until the buyer has paid, and the buyer must pay."),
    ("patrolling", ["porters_lodge"], None, "Check the porter's lodge again and again."),
    ("patrolling", ["yard", "cellar"], None, "Go back and forth between the yard and the cellar without end."),
    ("patrolling", ["yard", "roof"], None, "See that the yard and the roof each get visited repeatedly, never just once and done."),
    ("visit", ["yard", "cellar"], None, "Make the rounds of the yard and the cellar."),
    ("visit", ["yard", "roof"], None, "Reach the yard and the roof; which one comes first is up to you."),
    ("visit", ["yard", "cellar", "roof"], None, "The yard, the cellar and the roof must all be seen during the trip."),
    ("visit", ["yard", "roof"], None, "Please check the yard and the roof before the day is over, in no particular order."),
    ("sequenced_visit", ["yard", "cellar"], None, "Go to the yard, then to the cellar; you may pass other places on the way."),
    ("sequenced_visit", ["yard", "roof", "cellar"], None, "Check the yard; once you have checked it, go to the roof, and after that the cellar."),
    ("exact_rest_avoid", ["roof"], 2, "Climb onto the roof exactly two times: not one, not three."),
    ("bound_react", ["yard", "lamp_on"], None, "Keep the lamp on exactly during the times you are in the yard."),
    ("bound_react", ["cart_present", "hatch_open"], None, "The hatch should be open whenever a cart is present, and shut whenever no cart is present."),
    ("bound_react", ["siren_on", "cellar"], None, "Whenever the siren is on, be in the cellar, and whenever the siren is off, do not be in the cellar."),
    ("bounded_react", ["pressure_high", "valve_open"], 3, "If the pressure gets too high, the valve needs to be open within 3 steps."),
    ("instant_react", ["roof", "lamp_on"], None, "Whenever you are on the roof, the lamp needs to be on."),
    ("delay_react", ["tank_full", "tank_emptied"], None, "Whenever the water tank is full, it needs to be emptied at some point after that."),
    ("prompt_react", ["guest_arrived", "bell_playing"], None, "If someone shows up at the gate, the bell must play at the very next step."),
    ("prompt_react", ["yard", "roof"], None, "Whenever you are in the yard, be on the roof right afterwards, at the next step."),
    ("wait", ["lamp_on", "yard"], None, "Keep the lamp on until you reach the yard."),
    ("bound_delay", ["lever_pulled", "hatch_open"], None, "If the lever is pulled now, the hatch is open one step later; if the lever is not pulled now, the hatch must not be open one step later."),
    ("bound_delay", ["lever_pulled", "roof"], None, "Whenever the lever is pulled, be on the roof at the next step, and whenever the lever is not pulled, stay off the roof at the next step."),
]  # fmt: skip


@pytest.mark.parametrize("family,args,n,sentence", CASES, ids=[c[3] for c in CASES])
def test_sixth_round_phrasing_is_translated_to_its_family(
    family: str, args: list[str], n: int | None, sentence: str
) -> None:
    KIT.reads_as(sentence, family, args, n)


def test_goes_off_says_a_sounder_is_on_and_a_lamp_is_off() -> None:
    siren = lift("the siren goes off", DOMAIN)
    lamp = lift("the lamp goes off", DOMAIN)
    assert [str(p.formula) for p in siren.phrases] == ["siren_on"] and "not" not in siren.text
    assert [str(p.formula) for p in lamp.phrases] == ["lamp_on"] and "not P1" in lamp.text


def test_a_proposition_said_negated_is_its_placeholder_after_not() -> None:
    lifted = lift("if the lever is not pulled now", DOMAIN)
    assert [str(p.formula) for p in lifted.phrases] == ["lever_pulled"]
    assert "not P1" in lifted.text


def test_an_indefinite_noun_names_no_place_said_before() -> None:
    lifted = lift("visit the tool shed and the yard, never entering a shed before the yard", DOMAIN)
    assert {str(p.formula) for p in lifted.phrases} == {"agent_at(tool_shed)", "agent_at(yard)"}
    assert "a shed" in lifted.text  # "a shed" is no particular shed: not the tool shed


def test_an_elided_predicate_is_read_only_as_a_contrast() -> None:
    contrast = lift("the hatch is open when a cart is present, and shut otherwise", DOMAIN)
    assert "not P1" in contrast.text
    same = lift("the hatch is open when a cart is present, and ajar otherwise", DOMAIN)
    assert "ajar" in same.text  # the same family again says nothing new: left unread


@pytest.mark.parametrize(
    "sentence",
    [
        # a negated condition with "from then on": no order of visits, no rule reads it
        "If the lamp goes off, never enter the cellar from then on.",
        # a frame that names an event of no proposition is no filler
        "Stay in the yard during the storm, in no particular order.",
    ],
)
def test_what_the_sixth_round_rules_cannot_read_fails(sentence: str) -> None:
    t = translate_offline(sentence, DOMAIN)
    assert t.formula is None, t.formula
