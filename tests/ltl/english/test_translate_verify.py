"""The verification step: English back-translation per pattern and node, and violating examples
that really violate (checked with the monitor)."""

from __future__ import annotations

import pytest

from governor.ltl import Monitor, MonitorVerdict, parse
from governor.ltl import patterns as p
from governor.ltl.english.readback import english, pattern_of
from governor.ltl.english.translate import Translation, translate_offline
from governor.ltl.english.verify import verify_view
from governor.worlds.household.env import load_tasks
from governor.worlds.household.ltl_domain import household_domain

K, B, L = "agent_at(kitchen)", "agent_at(bathroom)", "agent_at(living_room)"
READINGS = [
    (p.global_avoidance(B), "global_avoid", "the agent must never be in the bathroom"),
    (
        p.future_avoidance(K, B),
        "future_avoid",
        "once the agent is in the kitchen, it must never be in the bathroom from then on",
    ),
    (
        p.delayed_reaction(K, L),
        "delay_react",
        "whenever the agent is in the kitchen, it must be in the living room then or later",
    ),
    (
        p.delayed_reaction("is_open(fridge)", "!is_open(fridge)"),
        "delay_react",
        "whenever the fridge is open, it must be closed then or later",
    ),
    (
        p.prompt_reaction(L, K),
        "prompt_react",
        "whenever the agent is in the living room, it must be in the kitchen at the next step",
    ),
    (
        p.instantaneous_reaction("is_open(microwave)", "!agent_at(bedroom)"),
        "instant_react",
        "whenever the microwave is open, the agent must not be in the bedroom at the same time",
    ),
    (
        p.precedence("is_grabbed(apple)", "is_in(apple, fridge)"),
        "precedence",
        "the apple must not be in the fridge before it has been held by the agent"
        " (neither has to happen)",
    ),
    (
        p.past_avoidance(B, K),
        "past_avoid",
        "the agent must not be in the bathroom before it has been in the kitchen,"
        " and the agent must be in the kitchen eventually",
    ),
    (
        p.wait(K, "is_switchedon(tv)"),
        "wait",
        "the agent must be in the kitchen until the tv is switched on,"
        " and the tv must be switched on eventually",
    ),
    (
        p.upper_restricted_avoidance(B, 2),
        "upper_rest_avoid",
        "the agent may be in the bathroom at most twice (an unbroken stretch counts once)",
    ),
    (
        p.upper_restricted_avoidance(B, 0),
        "upper_rest_avoid",
        "the agent must never be in the bathroom",
    ),
    (
        p.lower_restricted_avoidance("is_open(fridge)", 3),
        "lower_rest_avoid",
        "the fridge must be open at least 3 times (an unbroken stretch counts once)",
    ),
    (
        p.exact_restricted_avoidance(K, 2),
        "exact_rest_avoid",
        "the agent must be in the kitchen exactly twice (an unbroken stretch counts once)",
    ),
    (p.visit("is_in(pie, microwave)"), "visit", "the pie must be in the microwave at some point"),
    (p.bound_reaction("a", "b"), "bound_react", "`a` is true exactly when `b` is true"),
    (
        p.bound_delay("a", "b"),
        "bound_delay",
        "`b` is true at a step exactly when `a` is true at the step before",
    ),
    (p.global_avoidance("kitchen"), "global_avoid", "the agent must never be in the kitchen"),
]


@pytest.mark.parametrize(("formula", "name", "text"), READINGS)
def test_english_reads_each_pattern(formula: object, name: str, text: str) -> None:
    assert pattern_of(formula, household_domain()) == (name, text)  # type: ignore[arg-type]
    assert english(formula, household_domain()) == text  # type: ignore[arg-type]


def test_english_reads_every_other_node() -> None:
    got = english(parse("X a | Y b & H c"), household_domain())
    assert (
        got
        == "at the next step, `a` is true; or at the previous step, `b` is true; and at every step so far, `c` is true"
    )
    got = english(
        parse("(a R b) & (a S b) & WX a & Z b & O c & F(a & b) & !(a | X b)"), household_domain()
    )
    for part in (
        "`b` is true up to and including the first step where `a` is true, or forever",
        "`b` is true at some step so far, and `a` is true at every step after it",
        "at the next step, if there is one, `a` is true",
        "at the previous step, if there was one, `b` is true",
        "at some step so far, `c` is true",
        "at some step from now on, `a` is true and `b` is true",
        "it is not the case that (`a` is true; or at the next step, `b` is true)",
    ):
        assert part in got
    assert english(parse("true"), household_domain()) == "always true"
    assert english(parse("is_on(pillow, sofa) -> a W b"), household_domain()) == (
        "if the pillow is on the sofa, then (`a` is true until `b` is true, or forever)"
    )


def test_every_counterexample_violates_its_formula() -> None:
    """Over every distinct constraint of every task: the example trace is rejected by the
    monitor at the step the view names; formulas without one forbid nothing in the domain."""
    vacuous = set()
    for task in load_tasks():
        domain = household_domain(task, extra_objects=("chicken", "cutlet"))
        sentences = {c for group in task.constraints.values() for c in group}
        for sentence in sorted(sentences):
            t = translate_offline(sentence, domain)
            view = verify_view(t, domain)
            assert view["formula"] == str(t.formula) and view["english"]
            assert t.formula is not None and view["verified"] is False
            if view["counterexample"] is None:
                vacuous.add(sentence)
                continue
            trace = [frozenset(step) for step in view["counterexample"]]
            assert all(step <= t.formula.atom_labels() for step in trace)
            monitor = Monitor(t.formula, "c")
            state = monitor.initial
            verdicts = []
            for labels in trace:
                state = monitor.step(state, labels)
                verdicts.append(state.verdict)
            assert Monitor.final_verdict(state) is MonitorVerdict.VIOLATED
            at = view["violated_at"]
            if at < len(trace):
                assert verdicts[at] is MonitorVerdict.VIOLATED
                assert MonitorVerdict.VIOLATED not in verdicts[:at]
    # the sofa is in the living room, and "go back to the living room" holds when you are there
    assert vacuous == {
        "you have to go to livingroom later if you have been to sofa",
        "go to sofa means you have to visit livingroom in the future",
        "go to living room means you have to go back to living room in the future",
    }


def test_the_view_of_a_before_constraint() -> None:
    """ "a before b" is the authors' past avoidance (strong until) by default; the weak
    precedence and the ordered visit are offered as the other readings."""
    domain = household_domain("rooms/0_2")
    t = translate_offline("you have to enter bathroom before living room", domain)
    view = verify_view(t, domain)
    assert view["formula"] == "!agent_at(living_room) U agent_at(bathroom)"
    assert view["prefix"] == "U ! agent_at(living_room) agent_at(bathroom)"
    # shortest violation: the trace ends before the bathroom was ever entered
    assert view["counterexample"] == [[]] and view["violated_at"] == 1
    assert view["pattern"] == "past_avoid" and view["method"] == "offline"
    assert t.ambiguous and [a.pattern for a in t.alternatives] == ["ordered_visit", "precedence"]
    assert str(t.alternatives[1].formula) == "!agent_at(living_room) W agent_at(bathroom)"
    assert t.reading is not None and "strong until" in t.reading
    assert view["grounding"] == {"enter bathroom": "agent_at(bathroom)", "living room": L}


def test_views_flag_failures_and_formulas_that_forbid_everything() -> None:
    domain = household_domain()
    failed = verify_view(translate_offline("be nice", domain), domain)
    assert failed["formula"] is None and failed["error"] and failed["counterexample"] is None
    nowhere = parse(" & ".join(f"G !{r}" for r in domain.rooms))
    view = verify_view(Translation("stay nowhere", nowhere), domain)
    assert "forbids everything" in " ".join(view["notes"])
