"""Rules of the seventh round, on the shape of a sentence rather than its cue phrases: reasons
("because ...", "..., since ...", "so that ..."), framing and politeness ("Could you please ...",
"The rule is: ...", "Just so you know, ..."), facts said of a place as the reason of a rule
("the vault is being cleaned, so keep out of it"), frames of the whole run ("all night long",
"for as long as you are running"), a consequence after ", so" that restates the rule, returns
said with leaving ("don't go back into A between leaving it and reaching B"), a rule said each
way, and the cases that must fail rather than guess (a fact alone, clauses that contradict each
other, a converse said alone). None of the sentences is taken from a benchmark set; each is
checked equivalent to its family's formula."""

from __future__ import annotations

import pytest
from phrasing_kit import Phrasings

from governor.ltl.english import lexicon as lx
from governor.ltl.english.grounding.asides import without_asides
from governor.ltl.english.translate import translate_offline

PLACES = [
    "yard", "cellar", "tool_shed", "porters_lodge", "roof", "vault", "attic", "room_12", "room_14",
]  # fmt: skip
PROPS = [
    "siren_on", "lamp_on", "courier_arrived", "gate_closed", "hatch_open", "lever_pulled",
    "door_open", "alarm_on", "guest_present", "leak_detected", "pass_visible",
]  # fmt: skip
KIT = Phrasings(PLACES, PROPS)
DOMAIN = KIT.domain

CASES: list[tuple[str, list[str], int | None, str]] = [
 # reasons
 ("global_avoid", ["vault"], None, "Never enter the vault, because the gold is kept there."),
 ("global_avoid", ["vault"], None, "Because the floor is wet, stay out of the vault."),
 ("global_avoid", ["vault"], None, "Keep out of the vault, as it is being repainted."),
 ("global_avoid", ["vault"], None, "Stay away from the vault, since the cellar and the yard are flooded."),
 ("visit", ["yard"], None, "Go to the yard so that the courier can find you."),
 ("past_avoid", ["roof", "yard"], None, "Do not go on the roof before the yard, because the ladder is kept in the cellar."),
 ("delay_react", ["siren_on", "yard"], None, "When the siren is on, go to the yard eventually, since that is where everyone meets."),
 ("instant_react", ["door_open", "alarm_on"], None, "The alarm is on whenever the door is open, because intruders might come in."),
 # framing
 ("global_avoid", ["vault"], None, "Could you please stay out of the vault?"),
 ("global_avoid", ["vault"], None, "Can you keep out of the vault?"),
 ("global_avoid", ["vault"], None, "The rule is: never go into the vault."),
 ("global_avoid", ["vault"], None, "Here's what I need: keep out of the vault."),
 ("global_avoid", ["vault"], None, "I'd appreciate it if you never entered the vault."),
 ("global_avoid", ["vault"], None, "Just so you know, the vault is off limits."),
 ("visit", ["attic"], None, "Please get to the attic at some point, if you can."),
 ("visit", ["attic"], None, "Find your way up to the attic, thanks."),
 # facts
 ("global_avoid", ["vault"], None, "The vault is being cleaned, so keep out of it."),
 ("global_avoid", ["vault", "attic"], None, "The vault and the attic are storage rooms: never go into the vault or the attic."),
 ("global_avoid", ["vault"], None, "The vault is off limits to you; never set foot in it."),
 ("global_avoid", ["vault"], None, "The robot never enters the vault."),
 ("global_avoid", ["vault"], None, "Our rover is not allowed to enter the vault."),
 # frames
 ("patrolling", ["yard", "roof"], None, "Patrol the yard and the roof over and over, for as long as you are running."),
 ("patrolling", ["yard"], None, "Go to the yard time after time, all night long."),
 ("patrolling", ["cellar"], None, "Again and again, go down to the cellar. Never let it be your last visit."),
 ("lower_rest_avoid", ["attic"], 3, "Look in on the attic at least three times during the night."),
 ("upper_rest_avoid", ["attic"], 2, "I don't want you in the attic any more than twice."),
 ("visit", ["cellar", "roof"], None, "Do not finish your shift without having been in the cellar and on the roof."),
 ("visit", ["yard", "roof"], None, "Check the yard and the roof, whichever is nearer first."),
 ("future_avoid", ["siren_on", "cellar"], None, "Once the siren is on, stay out of the cellar for the rest of the day."),
 ("future_avoid", ["siren_on", "cellar"], None, "If the siren goes off, keep out of the cellar from that moment onwards."),
 ("delay_react", ["siren_on", "yard"], None, "If the siren is on, go to the yard, then or at some later point."),
 ("prompt_react", ["door_open", "alarm_on"], None, "Whenever the door is open, the alarm is on at the next step, not later."),
 ("bounded_react", ["door_open", "alarm_on"], 2, "If the door is open, the alarm must be on right then or within two steps."),
 ("instant_react", ["door_open", "alarm_on"], None, "Any moment the door is open, the alarm must be on."),
 ("wait", ["yard", "courier_arrived"], None, "Hang around in the yard until the courier arrives."),
 ("wait", ["cellar", "courier_arrived"], None, "Keep the robot in the cellar until the courier arrives."),
 # strict pairs
 ("strictly_ordered_visit", ["yard", "roof"], None, "Go to the yard once, then to the roof. Do not go onto the roof first, and don't go back into the yard between leaving it and reaching the roof."),
 ("strictly_ordered_visit", ["cellar", "attic"], None, "Visit the cellar one time, then head on to the attic. Don't reach the attic before the cellar, and once you've left the cellar don't go back in until you've been to the attic."),
 ("strictly_ordered_visit", ["yard", "cellar"], None, "The robot visits the yard once and then the cellar, never reaching the cellar first and never re-entering the yard after leaving it until it has been to the cellar."),
 # sequenced / permission / so
 ("sequenced_visit", ["yard", "roof"], None, "I want you in the yard and then, some time later, on the roof."),
 ("sequenced_visit", ["cellar", "attic"], None, "Go down to the cellar and, later on, up to the attic. You are allowed to be in the attic before the cellar too."),
 ("delay_react", ["siren_on", "yard"], None, "Each time the siren is on, you must end up in the yard eventually, so go to the yard at some point after."),
 # both ways
 ("bound_delay", ["yard", "roof"], None, "Being in the yard now means being on the roof at the next step, and being on the roof at the next step means being in the yard now."),
 ("bound_delay", ["door_open", "alarm_on"], None, "The alarm is on one step after the door is open, and only one step after the door is open."),
 ("bounded_react", ["siren_on", "roof"], 3, "If the siren is on, go up to the roof, and be there within 3 steps."),
    # asides, continued rules, event words, plural room numbers, restated contrasts
    ("global_avoid", ["vault"], None, 'Stay out of the "vault" at all times.'),
    ("global_avoid", ["vault"], None, "The vault - that's where the money is - must never be entered."),
    ("global_avoid", ["vault"], None, "Just a heads up: the vault is off limits."),
    ("visit", ["yard", "cellar"], None, "Visit the yard (and the cellar)."),
    ("future_avoid", ["siren_on", "cellar"], None, "If the siren goes off, the cellar becomes off limits. Never enter it after that."),
    ("future_avoid", ["guest_present", "vault"], None, "If a guest ever shows up, keep out of the vault from then on."),
    ("bounded_react", ["leak_detected", "cellar"], 4, "When someone reports a leak, go down to the cellar within four steps."),
    ("instant_react", ["roof", "pass_visible"], None, "You must have your pass showing whenever you are on the roof."),
    ("global_avoid", ["room_12", "room_14"], None, "Rooms 12 and 14 are quarantined: under no circumstances go into room 12 or room 14."),
    ("bound_delay", ["door_open", "alarm_on"], None, "The alarm is on at the next step precisely when the door is open; when the door is not open, the alarm is not on at the next step."),
    ("bound_delay", ["door_open", "alarm_on"], None, "The alarm is on in the step right after the door is open, and the alarm being on always means the door was open one step before."),
    # other voices: a rule said in two short sentences, a question answered by "then"
    ("sequenced_visit", ["yard", "roof"], None, "Yard first. Roof after that. Whatever else you do in between is up to you."),
    ("delay_react", ["siren_on", "yard"], None, "Siren on? Then sooner or later you head to the yard."),
    ("prompt_react", ["door_open", "alarm_on"], None, "The instant the door opens, the alarm has to be on at the next step."),
    ("upper_rest_avoid", ["cellar"], 2, "Two trips to the cellar, max."),
    ("bounded_react", ["siren_on", "yard"], 3, "Once the siren is on, you've got three steps to reach the yard."),
    ("global_avoid", ["vault", "attic"], None, "Our rover must keep out of the vault, and out of the attic too, because both are unsafe."),
    ("global_avoid", ["cellar"], None, "For safety reasons, do not go down into the cellar."),
    # rules stated as facts about the robot
    ("patrolling", ["yard", "roof"], None, "The guard bot loops between the yard and the roof for the whole level."),
    ("global_avoid", ["vault"], None, "The robot keeps out of the vault."),
    ("patrolling", ["yard", "cellar"], None, "The robot keeps visiting the yard and the cellar."),
    ("past_avoid", ["vault", "courier_arrived"], None, "Dispatch says: no entering the vault until the courier has arrived, and he will arrive."),
]  # fmt: skip


@pytest.mark.parametrize("family,args,n,sentence", CASES, ids=[c[3] for c in CASES])
def test_seventh_round_phrasing_is_translated_to_its_family(
    family: str, args: list[str], n: int | None, sentence: str
) -> None:
    KIT.reads_as(sentence, family, args, n)


@pytest.mark.parametrize(
    "sentence,kept",
    [
        ("Never enter the vault, because the gold is kept there.", "never enter the vault ."),
        ("Because it is wet, stay out of the vault.", "stay out of the vault ."),
        ("Could you please stay out of the vault?", "stay out of the vault ."),
        ("The rule is: avoid the vault, thanks.", "avoid the vault ."),
        ("Avoid the vault because it is wet, and go to the yard.", "avoid the vault , and go to the yard ."),
        # "since" is a reason only after a comma, before a subject; elsewhere a time
        ("Never enter the vault since visiting the yard.", "never enter the vault since visiting the yard ."),
    ],
)  # fmt: skip
def test_asides_are_removed_and_the_rule_kept(sentence: str, kept: str) -> None:
    assert " ".join(without_asides(lx.tokens(sentence))) == kept


@pytest.mark.parametrize(
    "sentence",
    [
        # a fact alone is no visit
        "The vault is closed.",
        # clauses that contradict each other: one of them is read wrongly
        "Go into the vault, come out, and head to the roof, without ever entering the roof "
        "beforehand and without going back into the vault on the way.",
        "The yard and the roof: under no circumstances go into the yard or the roof.",
        # a converse said alone is not "if b, a at the next step"
        "Being on the roof at the next step means being in the yard now.",
        # a parenthesis that only names a place: a description, not a visit
        "Stay out of the vault (the one behind the cellar) at all times.",
        # "never B after that" after a condition it does not continue: after the siren, or the yard?
        "If the siren goes off, go to the yard. Never enter the cellar after that.",
    ],
)
def test_what_the_seventh_round_rules_cannot_read_fails(sentence: str) -> None:
    t = translate_offline(sentence, DOMAIN)
    assert t.formula is None, t.formula


def test_a_contradiction_names_the_formula_it_found() -> None:
    t = translate_offline("Visit the vault, but never set foot in the vault.", DOMAIN)
    assert t.formula is None and t.error is not None and "contradiction" in t.error


def test_a_consequence_that_adds_a_place_is_kept() -> None:
    t = translate_offline(
        "Whenever the siren is on, go to the yard, so go to the roof too.", DOMAIN
    )
    assert t.formula is not None and "roof" in str(t.formula)
