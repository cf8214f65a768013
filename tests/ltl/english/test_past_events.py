"""Past-tense conditions are events ("if you have closed the fridge": the closing), not states
that may already hold at the start."""

from __future__ import annotations

from governor.ltl import Monitor, MonitorVerdict, parse
from governor.ltl.english.grammar.readings import PAST_EVENT
from governor.ltl.english.translate import translate_offline
from governor.worlds.household.ltl_domain import household_domain

CLOSED = "if you have closed the fridge you have to go to the bathroom later"


def _final(formula: object, trace: list[set[str]]) -> MonitorVerdict:
    monitor = Monitor(formula, "event")  # type: ignore[arg-type]
    state = monitor.initial
    for step in trace:
        state = monitor.step(state, frozenset(step))
    return Monitor.final_verdict(state)


def test_have_closed_is_the_closing_event() -> None:
    t = translate_offline(CLOSED, household_domain())
    assert t.formula == parse("G(!is_open(fridge) & Y is_open(fridge) -> F agent_at(bathroom))")
    assert t.reading is not None and PAST_EVENT in t.reading


def test_the_obligation_does_not_fire_when_the_fridge_starts_closed() -> None:
    t = translate_offline(CLOSED, household_domain())
    kitchen = "agent_at(kitchen)"
    never_touched = [{kitchen}, {kitchen}, {kitchen}]
    assert _final(t.formula, never_touched) is MonitorVerdict.OK
    closed_then = [{kitchen, "is_open(fridge)"}, {kitchen}, {kitchen}]
    assert _final(t.formula, closed_then) is MonitorVerdict.VIOLATED
    assert _final(t.formula, [*closed_then, {"agent_at(bathroom)"}]) is MonitorVerdict.OK
    # the state reading would fire at once: the fridge is closed at the start
    state_reading = parse("G(!is_open(fridge) -> F agent_at(bathroom))")
    assert _final(state_reading, never_touched) is MonitorVerdict.VIOLATED


def test_present_tense_and_places_stay_states() -> None:
    domain = household_domain()
    t = translate_offline("if you open the fridge you need to close the fridge later", domain)
    assert t.formula == parse("G(is_open(fridge) -> F !is_open(fridge))")
    t = translate_offline("once you have visited the kitchen, go to the bathroom later", domain)
    assert t.formula == parse("F(agent_at(kitchen) & F agent_at(bathroom))")  # a sequence
    assert t.reading is not None and PAST_EVENT not in t.reading
