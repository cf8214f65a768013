"""Engagement gating, the refusal cooldown, operator acts and the state's JSON round trip."""

from __future__ import annotations

import json

import pytest
from supervision_kit import ListSink, supervisor

from governor.errors import ConfigError
from governor.supervision import (
    EngagementGate,
    GatingRule,
    PresenceClassifier,
    SupervisedSession,
    SupervisionKind,
    SupervisorState,
    TimeWindowClassifier,
)

PRESENT = {"people": 1}


def test_a_gating_rule_over_an_unknown_feature_is_refused_by_name() -> None:
    with pytest.raises(ConfigError, match="unknown feature 'noise_level'"):
        EngagementGate([PresenceClassifier()], [GatingRule("quiet", "noise_level < 3")])
    with pytest.raises(ConfigError, match="gating rule 'odd'"):
        EngagementGate([PresenceClassifier()], [GatingRule("odd", "people is 2")])


def test_not_engaging_is_a_traced_decision_naming_its_rule() -> None:
    sink = ListSink()
    session = SupervisedSession(supervisor(), trace=sink)
    turn = session.turn({"people": 0, "user_text": ""})
    assert turn.supervision.kind is SupervisionKind.WAIT and turn.reply is None
    assert turn.supervision.rule == "present" and turn.activity is None
    decision, extra = sink.records[-1]
    assert decision.kind.value == "defer" and "present" in decision.reason
    assert extra["supervision"]["kind"] == "wait"
    assert extra["supervision"]["blocked_by"] == ["present (user_present >= 1)"]
    # a missing feature fails the rule (fail closed)
    assert session.turn({"user_text": "hello"}).supervision.kind is SupervisionKind.WAIT
    assert session.turn({**PRESENT, "user_text": "hello"}).supervision.kind is SupervisionKind.ACT


def test_a_sustained_rule_ends_an_ongoing_interaction() -> None:
    session = SupervisedSession(supervisor())
    session.turn({**PRESENT, "user_text": "hi"})
    turn = session.turn({"people": 0})
    assert turn.supervision.kind is SupervisionKind.DISENGAGE
    assert not turn.supervision.state.engaged


def test_the_time_window_classifier() -> None:
    window = TimeWindowClassifier(17, 21)
    state = SupervisorState()
    assert window.classify({"hour": 18.5}, state) == {"in_window": 1.0}
    assert window.classify({"hour": 21.0}, state) == {"in_window": 0.0}
    assert window.classify({}, state) == {}
    with pytest.raises(ConfigError):
        TimeWindowClassifier(21, 17)


def test_repeated_refusals_stop_prompting_for_a_cooldown() -> None:
    session = SupervisedSession(supervisor())  # two refusals, three steps of cooldown
    kinds = [session.turn({**PRESENT, "user_text": "hi"}).supervision.kind]
    for _ in range(2):
        kinds.append(session.turn({**PRESENT, "refused": True}).supervision.kind)
    kinds += [session.turn(PRESENT).supervision.kind for _ in range(4)]
    act, wait, off = SupervisionKind.ACT, SupervisionKind.WAIT, SupervisionKind.DISENGAGE
    assert kinds == [act, act, off, wait, wait, wait, act]
    reasons = [t.supervision.reason for t in session.turns]
    assert "2 refusals in a row" in reasons[2] and "cooldown" in reasons[3]


def test_without_refusals_there_is_no_cooldown() -> None:
    session = SupervisedSession(supervisor())
    session.turn({**PRESENT, "refused": True})
    kinds = [session.turn({**PRESENT, "user_text": "ok"}).supervision.kind for _ in range(3)]
    assert kinds == [SupervisionKind.ACT] * 3


def test_operator_acts_are_audited_and_a_paused_session_does_not_engage() -> None:
    sink = ListSink()
    session = SupervisedSession(supervisor(), trace=sink)
    session.turn({**PRESENT, "user_text": "hi"})
    session.operate("pause", who="ms lee", why="fire drill")
    paused = session.turn({**PRESENT, "user_text": "I want to hurt myself."})
    assert paused.supervision.kind is SupervisionKind.WAIT and paused.reply is None
    assert "ms lee" in paused.supervision.reason
    session.operate("resume", who="ms lee", why="drill over")
    session.operate("set_mode", who="mr ortiz", why="he asked to draw", mode="creative")
    chosen = session.turn({**PRESENT, "user_text": "ok"})
    assert chosen.supervision.kind is SupervisionKind.OPERATOR and chosen.mode == "creative"
    assert "mr ortiz: he asked to draw" in chosen.supervision.reason
    session.operate("end", who="ms lee", why="pickup")
    assert session.turn(PRESENT).supervision.kind is SupervisionKind.END
    audit = session.state.audit
    assert [(a.kind.value, a.who, a.why) for a in audit] == [
        ("pause", "ms lee", "fire drill"),
        ("resume", "ms lee", "drill over"),
        ("set_mode", "mr ortiz", "he asked to draw"),
        ("end", "ms lee", "pickup"),
    ]
    assert all(a.at > 1e9 for a in audit) and audit[0].t == 1
    with pytest.raises(ConfigError, match="an open session"):
        session.operate("resume", who="ms lee", why="again")
    session.close()
    assert len(sink.episodes[-1]["audit"]) == 4


def test_an_operator_act_needs_who_why_and_a_known_mode() -> None:
    sup = supervisor()
    state = sup.start()
    with pytest.raises(ConfigError, match="who"):
        sup.operate(state, "pause", who=" ", why="x")
    with pytest.raises(ConfigError, match="'gym'"):
        sup.operate(state, "set_mode", who="a", why="b", mode="gym")
    with pytest.raises(ValueError):
        sup.operate(state, "reboot", who="a", why="b")


def test_an_operators_mode_that_breaks_a_rule_is_an_executed_oversight_violation() -> None:
    session = SupervisedSession(supervisor())
    session.turn({**PRESENT, "user_text": "hi"})
    session.operate("set_mode", who="sub", why="thought it would help", mode="small_talk")
    turn = session.turn({**PRESENT, "user_text": "I want to hurt myself."})
    assert turn.mode == "small_talk"
    broken = [v for v in turn.violations() if v.level == "oversight"]
    assert broken and not broken[0].blocked and broken[0].constraint == "mode_rules"


def test_the_state_round_trips_through_json() -> None:
    session = SupervisedSession(supervisor())
    for obs in (
        {**PRESENT, "user_text": "hi"},
        {**PRESENT, "user_text": "This is stupid. I hate this."},
        {**PRESENT, "refused": True},
    ):
        session.turn(obs)
    session.operate("set_mode", who="ms lee", why="quiet time", mode="silence")
    session.turn(PRESENT)
    state = session.state
    text = json.dumps(state.to_json())
    back = SupervisorState.from_json(json.loads(text))
    assert back == state
    assert back.monitor is not None and back.monitor.t == state.monitor.t > 0  # type: ignore[union-attr]
    # a session resumed from the stored state decides as the original would
    sup = session.supervisor
    obs = {**PRESENT, "user_text": "I want to draw."}
    assert sup.step(back, obs).mode == sup.step(state, obs).mode


@pytest.mark.parametrize(
    "broken",
    [{}, {"format": 1}, {**SupervisorState().to_json(), "engaged": "yes"}, [1, 2]],
)
def test_a_broken_state_record_is_refused(broken: object) -> None:
    with pytest.raises(ConfigError, match="supervisor state"):
        SupervisorState.from_json(broken)  # type: ignore[arg-type]
