"""Rules of the eleventh round, each checked on phrasings of no benchmark set. Precision first:
"Once you've been to A, go to B" presupposes the visit like "After you've been to A" (a
sequence, the reaction offered; "go to B once you have been to A" stays the reaction); "you must go to B (, but) only after A" makes B a task: the ordered visit
(past avoidance offered), where "go to B, but only after A" stays the past avoidance (the
ordered visit offered) and "you may enter B only after A" the past avoidance; "permanently" after a condition is from then on; a positive response "from then on"
with no "must" is no reaction (a lasting state or an unread negation: it fails); a fact about a
part of a place ("the cellar stairs are icy, so ...") is a reason, not a visit; "two visits from
you at the very most" is an upper count. Coverage: "it has to be <proposition>" after a
condition (the pronoun is the condition's subject); "then or at some later step"; "without
fail"; "whenever you like" as an aside between commas (one comma left); "do not, at any point,
enter A"; frames "during this shift", "during the inspection"; either order said as an
alternative ("one after the other or the other way round", "either way round"); "and only then
B, never the other way round"; an exact count said twice ("four
times: not three, not five, exactly four", "one single time, never a second time"); a reason
after ", since one ..."."""

from __future__ import annotations

import pytest
from phrasing_kit import Phrasings

from governor.ltl.english.translate import translate_offline

PLACES = ["mill", "barn", "silo", "jetty", "boathouse", "cellar"]
PROPS = ["horn_on", "lamp_on", "gate_closed", "pump_low", "pump_charging", "bell_rung", "door_shut"]
KIT = Phrasings(PLACES, PROPS)

CASES: list[tuple[str, list[str], int | None, str]] = [
 # "go to B, but only after A": B is a task
 ("ordered_visit", ["mill", "barn"], None, "You must go to the barn, but only after the mill."),
 ("ordered_visit", ["silo", "jetty"], None, "You must head to the jetty only after the silo."),
 ("ordered_visit", ["cellar", "boathouse"], None, "You have to get to the boathouse, but only after you have visited the cellar; stay out of the boathouse until you've been to the cellar."),
 ("past_avoid", ["barn", "mill"], None, "You may enter the barn only after the mill."),
 # "permanently" after a condition: from then on
 ("future_avoid", ["gate_closed", "barn"], None, "From the moment the gate is closed, the barn is permanently off limits."),
 ("future_avoid", ["horn_on", "silo"], None, "Once the horn is on, keep out of the silo permanently."),
 ("global_avoid", ["jetty"], None, "The jetty is permanently off limits."),
 # a fact about a part of a place is a reason
 ("upper_rest_avoid", ["cellar"], 2, "The cellar steps are slippery, so go into the cellar at most twice."),
 ("lower_rest_avoid", ["barn"], 2, "The barn door is heavy, so visit the barn at least twice."),
 # a count with its agent said
 ("upper_rest_avoid", ["silo"], 3, "The silo gets three visits from you at the very most."),
 ("lower_rest_avoid", ["jetty"], 2, "The jetty gets two visits from the robot at least."),
 # "it" is the condition's subject when a proposition follows
 ("delay_react", ["pump_low", "pump_charging"], None, "Whenever the pump is low, it must be charging at some point."),
 ("bounded_react", ["pump_low", "pump_charging"], 3, "When the pump is low, it should be charging within 3 steps."),
 # a later step, emphasis
 ("delay_react", ["bell_rung", "lamp_on"], None, "Whenever the bell is rung, the lamp is on then or at a later step."),
 ("delay_react", ["horn_on", "door_shut"], None, "Whenever the horn is on, the door is shut then or on some later turn."),
 ("prompt_react", ["bell_rung", "lamp_on"], None, "Whenever the bell is rung, the lamp is on at the next step, without fail."),
 ("prompt_react", ["horn_on", "barn"], None, "If the horn is on, be in the barn at the next step, no matter what."),
 # an unhurried aside between commas
 ("sequenced_visit", ["mill", "barn"], None, "Visit the mill and afterwards, whenever you want, the barn."),
 ("sequenced_visit", ["silo", "jetty"], None, "Reach the silo, and then, when it suits you, the jetty."),
 ("global_avoid", ["boathouse"], None, "Do not, at any point, go into the boathouse."),
 ("global_avoid", ["cellar"], None, "Don't, at any time, set foot in the cellar."),
 # frames of the run
 ("visit", ["mill", "barn"], None, "Make sure you get to the mill and the barn during this shift, in any order."),
 ("visit", ["silo"], None, "The silo must be reached at some point during the inspection."),
 # an exact count said twice
 ("exact_rest_avoid", ["barn"], 3, "Go to the barn three times: not two, not four, exactly three."),
 ("exact_rest_avoid", ["jetty"], 1, "Enter the jetty one single time, never a second time."),
 ("exact_rest_avoid", ["mill"], 1, "Visit the mill once, but never a second time."),
 # either order said as an alternative; an order said again after "only then"
 ("visit", ["mill", "barn"], None, "Reach the mill and the barn, one after the other or the other way round."),
 ("visit", ["silo", "jetty"], None, "Go to the silo and the jetty, either way round."),
 ("ordered_visit", ["mill", "barn"], None, "Visit the mill, and only then the barn, never the other way round."),
 ("ordered_visit", ["silo", "jetty"], None, "Go to the silo and only then the jetty, not the other way around."),
 # a reason after ", since one ..."
 ("lower_rest_avoid", ["silo"], 2, "Visit the silo twice or more, since one check won't do."),
]  # fmt: skip


@pytest.mark.parametrize("family,args,n,sentence", CASES, ids=[c[3] for c in CASES])
def test_eleventh_round_phrasing_is_translated_to_its_family(
    family: str, args: list[str], n: int | None, sentence: str
) -> None:
    KIT.reads_as(sentence, family, args, n)


@pytest.mark.parametrize(
    "sentence",
    [
        # a positive response "from then on" with no "must": a lasting state or an unread negation
        "Once the horn is on, the cellar is permanently closed to you.",
        "Once the horn is on, the mill is closed to you from then on.",
        "When the gate is closed, the barn is shut for good.",
    ],
)  # fmt: skip
def test_eleventh_round_cases_fail_rather_than_guess(sentence: str) -> None:
    KIT.fails(sentence)


@pytest.mark.parametrize(
    "sentence,places",
    [
        ("Once you've been to the mill, head on to the barn at some point.", ("mill", "barn")),
        ("Once you have visited the silo, go to the jetty.", ("silo", "jetty")),
        ("Once you've been in the cellar, make for the boathouse eventually.", ("cellar", "boathouse")),
    ],
)  # fmt: skip
def test_once_a_visit_in_the_perfect_is_a_sequence_with_the_reaction_offered(
    sentence: str, places: tuple[str, str]
) -> None:
    t = translate_offline(sentence, KIT.domain)
    assert t.formula is not None, t.error
    KIT.reads_as(sentence, "sequenced_visit", list(places), None)
    assert t.ambiguous and [a.pattern for a in t.alternatives] == ["delay_react"]


def test_only_after_without_must_is_past_avoidance_with_the_order_offered() -> None:
    t = translate_offline("Go to the barn, but only after the mill.", KIT.domain)
    KIT.reads_as("Go to the barn, but only after the mill.", "past_avoid", ["barn", "mill"], None)
    assert "ordered_visit" in [a.pattern for a in t.alternatives]


def test_once_with_an_event_stays_a_reaction() -> None:
    KIT.reads_as("Once the horn is on, go to the barn.", "delay_react", ["horn_on", "barn"], None)
    KIT.reads_as("Whenever you have been to the mill, go to the barn eventually.", "delay_react",
                 ["mill", "barn"], None)  # fmt: skip
    KIT.reads_as("You have to go to the barn once you have been to the mill.", "delay_react",
                 ["mill", "barn"], None)  # fmt: skip
