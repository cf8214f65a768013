"""Monitors and monitor sets: verdicts on hand traces, purity, alphabets, end of episode."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from ltl_oracle import ev, formulas, traces

from governor.errors import SpecError
from governor.ltl import patterns as p
from governor.ltl.monitor import Monitor, MonitorSet, MonitorVerdict, classify, worst
from governor.ltl.parser import parse
from governor.ltl.satisfiability import one_hot
from governor.ltl.syntax import FALSE

OK, PENDING, VIOLATED = MonitorVerdict.OK, MonitorVerdict.PENDING, MonitorVerdict.VIOLATED
ROOMS = ["bathroom", "bedroom", "kitchen", "living_room"]


def verdicts(monitor: Monitor, *rooms: str) -> list[MonitorVerdict]:
    state = monitor.start({rooms[0]})
    out = [state.verdict]
    for room in rooms[1:]:
        state = monitor.step(state, {room})
        out.append(state.verdict)
    return out


def test_delayed_reaction_is_pending_until_met() -> None:
    m = Monitor(
        p.delayed_reaction("kitchen", "living_room"), "react", "go to living room after kitchen"
    )
    assert verdicts(m, "bedroom", "kitchen", "bathroom", "living_room") == [
        OK,
        PENDING,
        PENDING,
        OK,
    ]


def test_global_avoidance_is_violated_for_good() -> None:
    m = Monitor(p.global_avoidance("kitchen"), "avoid")
    assert verdicts(m, "bedroom", "kitchen", "bedroom") == [OK, VIOLATED, VIOLATED]
    assert m.start({"kitchen"}).formula == FALSE


def test_past_avoidance_and_prompt_reaction() -> None:
    m = Monitor(p.past_avoidance("bathroom", "kitchen"), "before")
    assert verdicts(m, "bedroom", "kitchen", "bathroom") == [PENDING, OK, OK]
    assert verdicts(m, "bedroom", "bathroom") == [PENDING, VIOLATED]
    prompt = Monitor(p.prompt_reaction("living_room", "bedroom"), "prompt")
    assert verdicts(prompt, "kitchen", "living_room", "bedroom") == [OK, PENDING, OK]
    assert verdicts(prompt, "living_room", "kitchen") == [PENDING, VIOLATED]


def test_upper_restricted_avoidance_counts_visits() -> None:
    m = Monitor(p.upper_restricted_avoidance("bedroom", 2), "twice")
    trace = ["bedroom", "bedroom", "kitchen", "bedroom", "kitchen", "bedroom"]
    assert verdicts(m, *trace) == [OK, OK, OK, OK, OK, VIOLATED]


def test_past_time_constraint() -> None:
    # "enter the kitchen only if you have been to the bedroom": G(kitchen -> O bedroom)
    m = Monitor(parse("G(kitchen -> O bedroom)"), "past")
    assert verdicts(m, "bathroom", "bedroom", "kitchen") == [OK, OK, OK]
    assert verdicts(m, "bathroom", "kitchen") == [OK, VIOLATED]


def test_stepping_is_pure() -> None:
    m = Monitor(p.delayed_reaction("kitchen", "living_room"), "react")
    state = m.start({"kitchen"})
    what_if = m.step(state, {"living_room"})
    assert what_if.verdict is OK and state.verdict is PENDING
    assert m.step(state, {"living_room"}) == what_if
    assert state.t == 1 and what_if.t == 2 and what_if.labels == {"living_room"}


@settings(max_examples=150, deadline=None)
@given(formulas(), traces())
def test_verdicts_agree_with_the_semantics(f: object, w: list[frozenset[str]]) -> None:
    m = Monitor(f, "f")  # type: ignore[arg-type]
    state = m.start(w[0])
    for k in range(1, len(w) + 1):
        # OK exactly when the prefix read so far satisfies the formula
        assert (state.verdict is OK) == ev(f, w[:k])  # type: ignore[arg-type]
        if k < len(w):
            state = m.step(state, w[k])


def test_alphabet_finds_unsatisfiable_states_early() -> None:
    # "visit the kitchen" after "never the kitchen once you were in the bedroom": doomed in the
    # bedroom, though the progressed formula is not syntactically false
    f = parse("F kitchen & G(bedroom -> G !kitchen)")
    plain = Monitor(f, "plain")
    rooms = Monitor(f, "rooms", alphabet=one_hot(ROOMS))
    assert plain.start({"bedroom"}).verdict is PENDING
    assert rooms.start({"bedroom"}).verdict is VIOLATED
    assert rooms.start({"bathroom"}).verdict is PENDING
    doomed = parse("X a & X !a & !end")  # not syntactically false
    assert classify(doomed) is PENDING and classify(doomed, [{"a"}, set()]) is VIOLATED
    assert Monitor(parse("a | X X false"), "x").start(set()).verdict is VIOLATED  # simplified


def test_monitor_set_names_each_verdict() -> None:
    specs = [
        ("react", "go to living room after kitchen", p.delayed_reaction("kitchen", "living_room")),
        ("avoid", "never enter the bathroom", "G !bathroom"),
        ("order", "bedroom before kitchen", p.precedence("bedroom", "kitchen")),
    ]
    ms = MonitorSet.from_specs(specs)
    assert ms.names == ("react", "avoid", "order") and len(ms) == 3
    assert ms["avoid"].text == "never enter the bathroom"
    state = ms.start({"kitchen"})
    assert dict(zip(state.names, state.verdicts, strict=True)) == {
        "react": PENDING,
        "avoid": OK,
        "order": VIOLATED,
    }
    assert state.violated == ("order",) and state.pending == ("react",)
    assert state.verdict is VIOLATED
    assert state["react"].verdict is PENDING
    assert ms.final_verdicts(state) == {"react": VIOLATED, "avoid": OK, "order": VIOLATED}
    later = ms.step(state, {"living_room"})
    assert later.pending == () and later.t == 2 and state.t == 1


def test_monitor_set_errors() -> None:
    with pytest.raises(SpecError, match="distinct names"):
        MonitorSet.from_specs([("x", "", "a"), ("x", "", "b")])
    with pytest.raises(SpecError, match=r"\(name, text, formula\)"):
        MonitorSet.from_specs([("x", "a")])  # type: ignore[list-item]
    with pytest.raises(SpecError, match="at column"):
        MonitorSet.from_specs([("x", "", "G(a ->")])
    ms = MonitorSet.from_specs([("x", "", "a")])
    other = MonitorSet.from_specs([("y", "", "a")])
    with pytest.raises(SpecError, match="expected a state of monitors"):
        ms.step(other.start(set()), set())
    with pytest.raises(TypeError, match="expected a set of label strings"):
        ms.start("kitchen")  # type: ignore[arg-type]
    with pytest.raises(KeyError, match="expected one of x"):
        ms.start(set())["y"]


def test_worst() -> None:
    assert worst([OK, PENDING]) is PENDING and worst([]) is OK and worst([VIOLATED, OK]) is VIOLATED
