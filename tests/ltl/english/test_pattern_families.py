"""The clause grammar on every pattern family: translations checked equivalent to the family's
formula (exactly, over one place at a time), the reading conventions, and ambiguity."""

from __future__ import annotations

from typing import Any

import pytest

from governor.ltl import parse
from governor.ltl import patterns as p
from governor.ltl.english.domain_file import user_domain
from governor.ltl.english.grammar.readings import LANG2LTL
from governor.ltl.english.translate import translate_offline
from governor.ltl.progression import holds
from governor.papers.ltl_translate import equivalent, intended

PLACES = ["depot", "tower", "quay", "mess_hall"]
PROPS = ["siren", "intruder_seen", "gate_open"]
# (family, args, n, sentence): written for these tests, not taken from the data sets
CASES: list[tuple[str, list[str], int | None, str]] = [
    ("visit", ["depot", "quay"], None, "Go to the depot and the quay."),
    ("visit", ["tower"], None, "Eventually reach the tower."),
    ("sequenced_visit", ["depot", "tower", "quay"], None, "First the depot, then the tower, and finally the quay."),
    ("sequenced_visit", ["quay", "mess_hall"], None, "Visit the quay and afterwards the mess hall."),
    ("ordered_visit", ["tower", "depot", "quay"], None, "Visit the tower, the depot and the quay in this order."),
    ("ordered_visit", ["depot", "quay"], None, "Go to the depot, then the quay, but never enter the quay before the depot."),
    ("strictly_ordered_visit", ["depot", "tower"], None, "Visit the depot exactly once, then the tower."),
    ("strictly_ordered_visit", ["quay", "tower", "depot"], None, "Go to the quay, the tower and the depot in order, each only once."),
    ("patrolling", ["tower", "quay"], None, "Keep visiting the tower and the quay."),
    ("patrolling", ["depot"], None, "Patrol the depot forever."),
    ("global_avoid", ["tower", "quay"], None, "Never go to the tower or the quay."),
    ("global_avoid", ["mess_hall"], None, "The mess hall is off limits."),
    ("future_avoid", ["depot", "quay"], None, "Once you have visited the depot, never go to the quay again."),
    ("future_avoid", ["tower", "depot"], None, "After the tower, stay out of the depot."),
    ("past_avoid", ["quay", "depot"], None, "Don't go to the quay until you have been to the depot."),
    ("past_avoid", ["tower", "mess_hall"], None, "Only enter the tower after the mess hall."),
    ("upper_rest_avoid", ["quay"], 2, "Visit the quay at most twice."),
    ("upper_rest_avoid", ["depot"], 1, "Never go to the depot more than once."),
    ("lower_rest_avoid", ["tower"], 3, "Go to the tower at least three times."),
    ("lower_rest_avoid", ["quay"], 2, "Enter the quay no fewer than 2 times."),
    ("exact_rest_avoid", ["depot"], 2, "Visit the depot exactly twice."),
    ("exact_rest_avoid", ["tower"], 1, "Enter the tower precisely one time."),
    ("instant_react", ["siren", "tower"], None, "Whenever the siren sounds, you must be in the tower at the same time."),
    ("instant_react", ["quay", "gate_open"], None, "While you are on the quay, the gate must be open."),
    ("delay_react", ["depot", "tower"], None, "You must go to the tower after you visit the depot."),
    ("delay_react", ["intruder_seen", "mess_hall"], None, "If you see an intruder, go to the mess hall eventually."),
    ("prompt_react", ["quay", "depot"], None, "Whenever you reach the quay, go to the depot immediately."),
    ("prompt_react", ["siren", "tower"], None, "When the siren goes off, be in the tower at the next step."),
    ("bound_react", ["siren", "tower"], None, "You are in the tower if and only if the siren is on."),
    ("bound_react", ["quay", "gate_open"], None, "The gate is open exactly when you are on the quay."),
    ("bound_delay", ["depot", "quay"], None, "You are on the quay at the next step if and only if you are in the depot now."),
    ("bound_delay", ["siren", "gate_open"], None, "The gate is open at the next step exactly when the siren sounds now."),
    ("bounded_react", ["depot", "tower"], 3, "Whenever you reach the depot, get to the tower within 3 steps."),
    ("bounded_react", ["intruder_seen", "quay"], 2, "As soon as you see an intruder, reach the quay within two steps."),
    ("wait", ["tower", "intruder_seen"], None, "Stay in the tower until you see an intruder."),
    ("wait", ["depot", "siren"], None, "Don't leave the depot until the siren sounds."),
]  # fmt: skip


def record(family: str, args: list[str], n: int | None) -> dict[str, Any]:
    return {"family": family, "args": args, "n": n, "places": PLACES, "props": PROPS}


DOMAIN = user_domain("test", PROPS, PLACES)


@pytest.mark.parametrize("family,args,n,sentence", CASES, ids=[c[3] for c in CASES])
def test_each_family_is_translated_to_its_formula(
    family: str, args: list[str], n: int | None, sentence: str
) -> None:
    t = translate_offline(sentence, DOMAIN)
    assert t.formula is not None, t.error
    rec = record(family, args, n)
    assert equivalent(intended(rec), t.formula, rec), f"{t.formula} is not {intended(rec)}"
    assert t.reading and t.pattern


def test_every_family_is_covered() -> None:
    assert {c[0] for c in CASES} == set(p.PATTERNS) - {"precedence"}


def test_go_to_b_after_c_obliges_b() -> None:
    """The reported case: a reaction G(C -> F B), not the precedence !B W C."""
    domain = user_domain("test", [], ["b_room", "c_room"])
    t = translate_offline("you must go to B room after you visit C room", domain)
    assert t.formula == parse("G(agent_at(c_room) -> F agent_at(b_room))")
    assert t.pattern == "delay_react"
    # after C, a trace that never reaches B violates it
    assert not holds(t.formula, [{"agent_at(c_room)"}, {"agent_at(c_room)"}])


def test_equivalence_check_tells_families_apart() -> None:
    rec = record("past_avoid", ["quay", "depot"], None)
    weak = p.precedence("agent_at(depot)", "agent_at(quay)")
    assert not equivalent(intended(rec), weak, rec)
    assert equivalent(intended(rec), parse("!agent_at(quay) U agent_at(depot)"), rec)


def test_readings_name_the_conventions() -> None:
    t = translate_offline("Don't go to the quay until you have been to the depot.", DOMAIN)
    assert t.reading is not None and "strong until" in t.reading
    t = translate_offline("Visit the quay at most twice.", DOMAIN)
    assert t.reading is not None and "a visit is entering" in t.reading
    t = translate_offline("After the siren sounds, never enter the tower.", DOMAIN)
    assert t.formula == p.future_avoidance("siren", "agent_at(tower)")
    assert t.reading is not None and "Safety Chip's form" in t.reading
    lang = translate_offline("After the siren sounds, never enter the tower.", DOMAIN, LANG2LTL)
    assert lang.formula == parse("G(siren -> WX G !agent_at(tower))")
    assert lang.reading is not None and "Lang2LTL's form" in lang.reading
    # the two conventions differ when the trigger and the avoided state can hold together
    assert holds(lang.formula, [{"siren", "agent_at(tower)"}])
    assert not holds(t.formula, [{"siren", "agent_at(tower)"}])


def test_an_ambiguous_sentence_offers_both_readings() -> None:
    t = translate_offline("Visit the depot, the tower and the quay in this order.", DOMAIN)
    assert t.ambiguous and t.pattern == "ordered_visit"
    (alt,) = t.alternatives
    assert alt.pattern == "sequenced_visit" and "sequenced" in alt.reading
    assert alt.formula == p.sequenced_visit("agent_at(depot)", "agent_at(tower)", "agent_at(quay)")
    t = translate_offline("Visit the depot twice.", DOMAIN)
    assert t.ambiguous and t.pattern == "exact_rest_avoid"
    assert [a.pattern for a in t.alternatives] == ["lower_rest_avoid"]
    plain = translate_offline("Visit the depot at least twice.", DOMAIN)
    assert not plain.ambiguous and plain.alternatives == ()


def test_bounded_reaction_semantics() -> None:
    f = p.bounded_reaction("a", "b", 2)
    assert holds(f, [{"a"}, set(), {"b"}])
    assert not holds(f, [{"a"}, set(), set(), {"b"}])
    assert not holds(f, [{"a"}, set()])  # the steps must exist
    assert holds(f, [{"a", "b"}])


def test_unreadable_sentences_fail_with_the_reason() -> None:
    t = translate_offline("Visit the depot or maybe the tower, whichever.", DOMAIN)
    assert t.formula is None and t.error is not None and "no template" in t.error
    t = translate_offline("Go to the moon.", DOMAIN)
    assert t.formula is None and t.error is not None
