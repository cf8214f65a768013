"""Phrasings of the pattern families read by the rules of the third round: cue phrases ("keep
well clear of", "rules out", "at the very next time step"), clause readings ("b when a, and only
then", "reach B, but not before A", "the office must not be entered after the lab has been"),
and references ("it does not ring", "until you have", "once there, go to B", "nor C before B").
Sentences written for these tests, each checked equivalent to the family's formula over one
place at a time; and sentences that must fail rather than be read wrongly."""

from __future__ import annotations

import pytest
from phrasing_kit import Phrasings

from governor.ltl.english.grammar.clauses import clean, read_clause
from governor.ltl.english.translate import translate_offline
from governor.papers.ltl_translate import equivalent, intended

PLACES = ["forge", "mill", "granary", "well_house"]
PROPS = ["bell", "low_fuel", "lamp_bright", "gate_signal"]
KIT = Phrasings(PLACES, PROPS)
DOMAIN = KIT.domain
CASES: list[tuple[str, list[str], int | None, str]] = [
    ("global_avoid", ["forge", "mill"], None, "Keep well clear of the forge and the mill, throughout."),
    ("future_avoid", ["forge", "mill"], None, "Visiting the forge rules out any later visit to the mill."),
    ("future_avoid", ["granary", "mill"], None, "The mill must not be visited at any point after the granary has been."),
    ("prompt_react", ["bell", "mill"], None, "Every time the bell rings, proceed to the mill at the very next time step."),
    ("prompt_react", ["bell", "forge"], None, "The moment the bell rings, be in the forge at the next step - every time."),
    ("bound_delay", ["bell", "granary"], None, "Whenever the bell rings, be in the granary at the next step, and whenever it does not ring, stay out of the granary at the next step."),
    ("bound_delay", ["lamp_bright", "mill"], None, "If the lamp is bright now, be at the mill at the next step; if it is not bright now, do not be at the mill at the next step."),
    ("bound_delay", ["gate_signal", "forge"], None, "One step after each gate signal you must be at the forge, and one step after any step without a gate signal you must not be at the forge."),
    ("bound_delay", ["bell", "well_house"], None, "The next step finds you at the well house if and only if the bell rings at this one."),
    ("bound_delay", ["bell", "lamp_bright"], None, "The lamp is bright at step t+1 exactly when the bell rings at step t."),
    ("bound_react", ["granary", "lamp_bright"], None, "The lamp is bright when you are in the granary, and only then."),
    ("bound_react", ["mill", "lamp_bright"], None, "The lamp must be bright when you are in the mill and dim when you are anywhere else."),
    ("delay_react", ["low_fuel", "well_house"], None, "Whenever the fuel is low, you must sooner or later reach the well house."),
    ("bounded_react", ["low_fuel", "forge"], 3, "When the fuel is low, get to the forge within 3 steps - each and every time."),
    ("wait", ["mill", "lamp_bright"], None, "Hold at the mill until the lamp turns bright."),
    ("ordered_visit", ["granary", "forge"], None, "Reach the forge, but not before you have been to the granary, which is also required."),
    ("ordered_visit", ["mill", "forge"], None, "Visit the mill and only after that the forge."),
    ("ordered_visit", ["mill", "granary", "forge"], None, "Go to the mill, the granary and the forge. The granary must not be entered before the mill, nor the forge before the granary."),
    ("ordered_visit", ["forge", "mill"], None, "The forge must be reached first; the mill is off limits until then, and it has to be visited afterwards."),
    ("ordered_visit", ["forge", "mill", "granary"], None, "Go to the forge, the mill and the granary, in that order with no skipping ahead."),
    ("past_avoid", ["mill", "granary"], None, "Not until you have been to the granary may you go into the mill; be sure to go to the granary."),
    ("past_avoid", ["mill", "forge"], None, "Reach the forge at some point, and avoid the mill until you have done so."),
    ("past_avoid", ["mill", "forge"], None, "Go to the forge. Before that, the mill is forbidden."),
    ("past_avoid", ["mill", "well_house"], None, "No visits to the mill until after the well house - and the well house has to be visited."),
    ("sequenced_visit", ["forge", "mill", "granary"], None, "Walk to the forge; once you have been there, go on to the mill, and after that to the granary."),
    ("sequenced_visit", ["forge", "mill"], None, "Visit the forge. Once there, go to the mill."),
    ("strictly_ordered_visit", ["forge", "mill", "granary"], None, "Pass through the forge, the mill and the granary in sequence: you cannot enter the mill before the forge or the granary before the mill, and you cannot revisit the forge before the mill or the mill before the granary."),
    ("strictly_ordered_visit", ["forge", "mill"], None, "Reach the forge, then the mill. The mill is forbidden until the forge has been visited, and the forge may not be re-entered before the mill is reached."),
    ("strictly_ordered_visit", ["forge", "mill", "granary"], None, "Visit the forge, the mill and the granary in order, with a single entry to each before moving to the next, and no visit to any of them before its turn."),
    ("patrolling", ["forge", "mill"], None, "Circulate between the forge and the mill for as long as the mission runs, visiting each of them again and again."),
    ("patrolling", ["forge", "mill"], None, "Visit the forge and the mill time and time again, without ever stopping."),
    ("visit", ["forge", "mill"], None, "Each of the forge and the mill has to be reached sometime during the mission."),
    ("upper_rest_avoid", ["mill"], 1, "Enter the mill once at the very most, if at all."),
    ("upper_rest_avoid", ["mill"], 2, "The mill can be entered up to two times, but not more."),
    ("upper_rest_avoid", ["forge"], 4, "Limit yourself to four trips to the forge at most."),
    ("exact_rest_avoid", ["granary"], 2, "Go to the granary twice, and only twice."),
    ("exact_rest_avoid", ["granary"], 1, "Visit the granary one time only, and do visit it."),
    ("exact_rest_avoid", ["forge"], 2, "The forge should be visited two times, not more, not less."),
]  # fmt: skip


@pytest.mark.parametrize("family,args,n,sentence", CASES, ids=[c[3] for c in CASES])
def test_fresh_phrasing_is_translated_to_its_family(
    family: str, args: list[str], n: int | None, sentence: str
) -> None:
    KIT.reads_as(sentence, family, args, n)


@pytest.mark.parametrize(
    "sentence",
    [
        "If the bell rings, go to the forge; otherwise go to the mill.",
        "Go to the forge when the bell rings, and the mill otherwise.",
    ],
)
def test_an_alternative_branch_is_a_clear_failure(sentence: str) -> None:
    """ "otherwise" with its own place is not the converse of the condition: no formula."""
    t = translate_offline(sentence, DOMAIN)
    assert t.formula is None and t.error


@pytest.mark.parametrize(
    "symbols",
    [["P1", "BEFORE", "P1"], ["P1", "IF", "P1"], ["NOT", "UNTIL", "P1", "COMMA", "P1"]],
)
def test_a_place_is_never_read_against_itself(symbols: list[str]) -> None:
    """ "Go to A. Before that, ..." resolves to A: no clause reads "A before A"."""
    assert read_clause(clean(symbols, {"P1"})) is None


def test_only_after_that_with_may_is_a_permission() -> None:
    """ "only after that may you enter B" permits B: past avoidance, B not required."""
    t = translate_offline("Go to the forge, and only after that may you enter the mill.", DOMAIN)
    rec = KIT.record("past_avoid", ["mill", "forge"], None)
    assert t.formula is not None and equivalent(intended(rec), t.formula, rec), t.formula


def test_once_there_is_not_a_count() -> None:
    t = translate_offline("Visit the forge. Once there, go to the mill.", DOMAIN)
    assert t.pattern == "sequenced_visit", (t.pattern, t.formula)
