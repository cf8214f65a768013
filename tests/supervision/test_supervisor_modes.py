"""Modes, the mode graph, the mode rules, overrides and the two levels of violation."""

from __future__ import annotations

import pytest
from supervision_kit import NAMES, ListSink, mode, supervisor

from governor.errors import ConfigError
from governor.supervision import (
    ConditionSelector,
    FixedSelector,
    ModeGraph,
    SupervisedSession,
    SupervisionKind,
    Supervisor,
    ThresholdOverride,
)

PRESENT = {"people": 1}


def test_an_unreachable_mode_is_refused_by_name() -> None:
    modes = [mode("a"), mode("b"), mode("island")]
    with pytest.raises(ConfigError, match="'island' is unreachable"):
        ModeGraph(modes, {"a": ["b"], "b": ["a"]}, "a")


def test_a_dead_end_mode_is_refused_by_name() -> None:
    modes = [mode("a"), mode("b"), mode("trap")]
    with pytest.raises(ConfigError, match="'trap' is a dead end"):
        ModeGraph(modes, {"a": ["b", "trap"], "b": ["a"]}, "a")
    # a cycle that never returns is a dead end too
    modes = [mode("a"), mode("b"), mode("c")]
    with pytest.raises(ConfigError, match="dead end"):
        ModeGraph(modes, {"a": ["b"], "b": ["c"], "c": ["b"]}, "a")


def test_an_edge_to_an_unknown_mode_is_refused() -> None:
    with pytest.raises(ConfigError, match="'nowhere'"):
        ModeGraph([mode("a")], {"a": ["nowhere"]}, "a")


def test_a_mode_rule_over_an_unknown_proposition_is_refused_by_name() -> None:
    g = ModeGraph([mode("a"), mode("b")], {"a": ["b"], "b": ["a"]}, "a")
    with pytest.raises(ConfigError, match="'mode_c'"):
        Supervisor(g, FixedSelector("a"), rules=[("r", "", "G(mode_c -> mode_a)")])
    with pytest.raises(ConfigError, match="unknown feature 'stress'"):
        Supervisor(g, FixedSelector("a"), propositions={"stressed": "stress > 1"})


def test_an_override_over_an_unknown_feature_is_refused_by_name() -> None:
    g = ModeGraph([mode("a")], {}, "a")
    with pytest.raises(ConfigError, match="unknown feature 'pulse'"):
        Supervisor(g, FixedSelector("a"), overrides=[ThresholdOverride("fast", "pulse > 120", "a")])


def test_the_selector_picks_by_state_and_the_mode_observer_speaks() -> None:
    session = SupervisedSession(supervisor())
    first = session.turn({**PRESENT, "user_text": "Hi, how are you?"})
    assert first.supervision.kind is SupervisionKind.ACT and first.mode == "small_talk"
    assert first.reply == "[small_talk]"
    upset = session.turn({**PRESENT, "user_text": "No. Stop asking me.", "affect": -0.45})
    assert upset.mode == "creative"


def test_a_mode_rule_blocks_the_preferred_mode_as_an_oversight_violation() -> None:
    session = SupervisedSession(supervisor())
    session.turn({**PRESENT, "user_text": "Hi there."})
    session.turn({**PRESENT, "user_text": "I'm fine."})
    # silence first (an operator's choice), then an escalated turn: breathing is preferred, but
    # "breathing may only follow small talk or creative" forbids it right after silence
    session.operate("set_mode", who="ms lee", why="let him sit", mode="silence")
    session.turn({**PRESENT, "user_text": "ok"})
    session.operate("release", who="ms lee", why="back to the robot")
    turn = session.turn({**PRESENT, "user_text": "This is stupid. I hate this."})
    assert turn.mode != "breathing"
    oversight = [v for v in turn.violations() if v.level == "oversight"]
    assert [(v.constraint, v.mode) for v in oversight] == [("mode_rules", "breathing")]
    assert "breathing may only follow" in oversight[0].descriptor


def test_bad_behaviour_inside_a_mode_is_an_activity_violation() -> None:
    chatty = mode(
        "small_talk",
        "What happened? Why are you upset? Tell me everything about it, every detail, now?",
        "I'm here.",
        overlays=True,
    )
    sink = ListSink()
    session = SupervisedSession(supervisor(modes={"small_talk": chatty}), trace=sink)
    session.turn({**PRESENT, "user_text": "Hi."})
    turn = session.turn({**PRESENT, "user_text": "I hate this. Leave me alone!", "affect": -0.2})
    # the escalated user's turn: the question-heavy reply is refused, and so is "I'm here.",
    # since the last turns already prompted too often (pacing): the mode's fallback is silent
    assert turn.mode == "small_talk" and turn.reply == "[silence]"
    levels = {v.level for v in turn.violations()}
    assert levels == {"activity"}
    names = {v.constraint for v in turn.violations()}
    assert {"escalated_questions", "escalated_pacing"} <= names
    assert {r[1]["level"] for r in sink.records} == {"oversight", "activity"}
    activity = [extra for _, extra in sink.records if extra["level"] == "activity"][-1]
    assert any(v["constraint"] == "escalated_questions" for v in activity["violations"])


def test_a_crisis_statement_forces_the_crisis_protocol_and_names_the_rule() -> None:
    session = SupervisedSession(supervisor())
    session.turn({**PRESENT, "user_text": "I like drawing."})
    turn = session.turn({**PRESENT, "user_text": "I want to hurt myself."})
    sup = turn.supervision
    assert sup.kind is SupervisionKind.OVERRIDE and turn.mode == "crisis"
    assert sup.rule == "crisis_statement" and sup.override is not None
    assert "crisis_statement" in sup.reason


def test_a_perseverative_loop_is_interrupted_and_the_line_ends() -> None:
    session = SupervisedSession(supervisor())
    turns = [session.turn({**PRESENT, "user_text": "I want my tablet back."}) for _ in range(3)]
    assert [t.supervision.kind for t in turns[:2]] == [SupervisionKind.ACT] * 2
    last = turns[-1].supervision
    assert last.kind is SupervisionKind.OVERRIDE and last.rule == "perseveration"
    assert last.override is not None and last.override.action == "interrupt"
    assert last.ends_line and turns[-1].mode == "breathing"
    assert session.traj is not None and session.traj.t == 0  # the activity started afresh


def test_escalating_affect_forces_a_calming_mode() -> None:
    session = SupervisedSession(supervisor())
    session.turn({**PRESENT, "user_text": "That was fun!", "affect": 0.5})
    turn = session.turn({**PRESENT, "user_text": "whatever", "affect": -0.7})
    assert turn.supervision.rule == "escalating_affect" and turn.mode == "breathing"


def test_a_selector_over_unknown_modes_is_refused() -> None:
    g = ModeGraph([mode("a")], {}, "a")
    with pytest.raises(ConfigError, match="'b'"):
        Supervisor(g, ConditionSelector(("a", "b"), [], "a"))
    assert NAMES[0] == "small_talk"
