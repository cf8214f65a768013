"""The supervisor in the guard: the policy's supervision section, the supervisor deciding each
``respond`` over a scripted upstream, its state persisted with the session, operator acts."""

from __future__ import annotations

import copy
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml
from guard_helpers import ROOT

from governor.backends.scripted import ScriptedBackend
from governor.cli import main
from governor.config import ObserverConfig
from governor.errors import ConfigError
from governor.guard import Guard, GuardPolicy, SqliteStore, load_policy, policy_from_mapping

SUPERVISED = ROOT / "examples" / "policies" / "supervised.yaml"
CRISIS_TEXT = "I'm worried about you. Please call a crisis line now."
QUICK = ObserverConfig(n_candidates=1, max_regenerations=1, time_budget_s=None)


def example() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(SUPERVISED.read_text(encoding="utf-8"))
    return data


def quick(policy: GuardPolicy) -> GuardPolicy:
    """``policy`` with one candidate, one regeneration, no time budget (no thread)."""
    return replace(policy, observer=QUICK)


def guard_of(
    data: dict[str, Any] | None = None, replies: list[Any] | None = None, **kw: Any
) -> tuple[Guard, ScriptedBackend]:
    policy = quick(policy_from_mapping(data or example(), source="policy.yaml", base_dir=ROOT))
    backend = ScriptedBackend(replies or [])
    return Guard.from_policy(policy, backend=backend, **kw), backend


def with_(change: dict[str, Any], where: str = "supervision") -> dict[str, Any]:
    data = copy.deepcopy(example())
    data[where] = {**data[where], **change} if where in data else change
    return data


def present(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` with the default classifiers (presence among them) on user input."""
    data["checks"] = {"assistant": ["overlays", "ltl"]}
    return data


def mode_change(mode: str, **change: Any) -> dict[str, Any]:
    data = copy.deepcopy(example())
    data["supervision"]["modes"][mode] = {**data["supervision"]["modes"][mode], **change}
    return data


# --------------------------------------------------------------------------- the policy


BAD = [
    (
        with_({"graph": {**example()["supervision"]["graph"], "small_talk": ["dancing"]}}),
        "policy.yaml: supervision.graph: mode graph edge: expected one of ['small_talk',"
        " 'breathing', 'silence', 'crisis'], found 'dancing'",
    ),
    (
        with_(
            {
                "graph": {
                    "small_talk": ["silence"],
                    "silence": ["small_talk"],
                    "crisis": ["silence"],
                    "breathing": ["small_talk"],
                },
                "entries": ["small_talk"],
            }
        ),
        "policy.yaml: supervision.graph: mode graph: mode 'breathing' is unreachable",
    ),
    (
        with_({"graph": {**example()["supervision"]["graph"], "crisis": []}}),
        "policy.yaml: supervision.graph: mode graph: mode 'crisis' is a dead end",
    ),
    (
        present(
            with_(
                {
                    "gating": [
                        {"name": "here", "when": "user_present >= 1"},
                        {"name": "calm", "when": "heart_rate < 100"},
                    ]
                }
            )
        ),
        "policy.yaml: supervision.gating[1]: gating rule 'calm': unknown feature 'heart_rate';"
        " expected one the classifiers provide: crisis_statement, others_talking, people,"
        " refusals, user_affect, user_present",
    ),
    (
        with_({"gating": [{"name": "here", "when": "user_present >= 1"}]}),
        "policy.yaml: supervision.gating[0]: gating rule 'here': unknown feature 'user_present';"
        " expected one the classifiers provide: crisis_statement, refusals, user_affect",
    ),
    (
        with_({"select": [{"when": "boredom > 0.5", "mode": "breathing"}]}),
        "policy.yaml: supervision.select[0]: unknown feature 'boredom'",
    ),
    (
        with_({"rules": [{"name": "r", "formula": "G(mode_dancing -> mode_crisis)"}]}),
        "policy.yaml: supervision.rules[0]: mode rule 'r': unknown proposition 'mode_dancing'",
    ),
    (
        with_(
            {
                "overrides": [
                    {"kind": "threshold", "name": "o", "when": "pulse > 1", "mode": "crisis"}
                ]
            }
        ),
        "policy.yaml: supervision.overrides[0]: override 'o': unknown feature 'pulse'",
    ),
    (
        with_({"overrides": [{"kind": "teleport", "mode": "crisis"}]}),
        "policy.yaml: supervision.overrides[0].kind: expected threshold or escalating_affect or"
        " perseveration, found 'teleport'",
    ),
    (
        with_({"colour": "blue"}),
        "policy.yaml: supervision: unknown key(s) colour; expected some of modes",
    ),
    (
        mode_change("breathing", volume=3),
        "policy.yaml: supervision.modes.breathing: unknown key(s) volume",
    ),
    (
        with_({"limits": {"max_refusals": 0}}),
        "policy.yaml: supervision.limits: max_refusals",
    ),
    (
        with_({"safe_mode": "nap"}),
        "policy.yaml: supervision.safe_mode: safe mode: expected one of",
    ),
    (
        with_({"user": ["affect", "mind_reading"]}, where="checks"),
        "policy.yaml: checks.user[1]: expected one of presence, time_window, affect, refusals,"
        " crisis, found 'mind_reading'",
    ),
    (
        mode_change("crisis", ltl=[{"name": "x", "formula": "G !danger"}]),
        "policy.yaml: supervision.modes.crisis.ltl[0].formula: undeclared proposition(s) danger",
    ),
]


@pytest.mark.parametrize(("data", "message"), BAD, ids=[m[:60] for _, m in BAD])
def test_a_bad_supervision_section_is_refused_naming_the_place(
    data: dict[str, Any], message: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        policy_from_mapping(data, source="policy.yaml", base_dir=ROOT)
    assert str(caught.value).startswith(message), str(caught.value)


def test_the_example_loads_and_policy_check_says_it_in_english(
    capsys: pytest.CaptureFixture[str],
) -> None:
    spec = load_policy(SUPERVISED).supervision
    assert spec is not None and [m.name for m in spec.modes] == [
        "small_talk", "breathing", "silence", "crisis"]  # fmt: skip
    assert spec.classifiers == ("affect", "crisis", "refusals")
    assert main(["policy", "check", str(SUPERVISED)]) == 0
    out = capsys.readouterr().out
    assert "Supervision: 4 mode(s); starts in small_talk" in out
    assert "  after crisis: silence" in out
    assert "says its fixed text, no model" in out
    assert "crisis_protocol: a crisis statement starts the crisis protocol" in out
    assert "whenever `crisis_statement` is true, `mode_crisis` must be true" in out
    assert "crisis_statement: force mode to crisis when crisis_statement >= 1" in out
    assert "Refusals: after 2 in a row, no prompting for 3 step(s)" in out


def test_a_policy_without_supervision_has_none() -> None:
    assert load_policy(ROOT / "examples" / "policies" / "smalltalk.yaml").supervision is None


# --------------------------------------------------------------------------- respond


def test_a_crisis_statement_forces_the_crisis_mode_naming_the_rule() -> None:
    guard, backend = guard_of(replies=["That sounds lovely, what did you see?", CRISIS_TEXT])
    s = guard.session("c")
    msgs: list[Any] = [{"role": "user", "content": "I went for a walk by the river today"}]
    first = s.respond_sync(msgs)
    assert first.summary["supervision"]["kind"] == "act"
    assert first.summary["supervision"]["mode"] == "small_talk"
    msgs += [first.message, {"role": "user", "content": "honestly I want to die"}]
    second = s.respond_sync(msgs)
    sup = second.summary["supervision"]
    assert (sup["kind"], sup["mode"], sup["rule"]) == ("override", "crisis", "crisis_statement")
    assert sup["override"] == {"rule": "crisis_statement", "action": "force_mode"}
    assert second.reply.content == CRISIS_TEXT and second.summary["llm"]["calls"] == 1
    # the crisis mode asked the upstream under its own system prompt
    assert "may be in danger" in backend.requests[-1][0].content
    assert "small talk" in backend.requests[0][0].content
    record = guard.store.records("c")[-1]
    assert record["extra"]["supervision"]["rule"] == "crisis_statement"
    assert record["extra"]["level"] == "activity"


def test_a_wait_calls_no_upstream_and_says_the_fallback_text() -> None:
    data = present(with_({"gating": [{"name": "someone_here", "when": "user_present >= 1"}]}))
    guard, backend = guard_of(data, replies=["never said"])
    out = guard.session("w").respond_sync([{"role": "user", "content": "hello?"}])
    sup = out.summary["supervision"]
    assert (sup["kind"], sup["mode"], sup["rule"]) == ("wait", None, "someone_here")
    assert backend.requests == [] and out.summary["llm"]["calls"] == 0
    assert out.reply.content == "Oh nice. How about you?"  # the policy's default text
    assert out.decision.kind.value == "defer"


def test_a_bad_reply_inside_a_mode_is_an_activity_violation_a_blocked_mode_an_oversight_one() -> (
    None
):
    # no selection choices: the selector proposes small talk, the mode rules must block it
    data = with_({"select": [], "entries": ["small_talk", "breathing", "silence", "crisis"]})
    long = "Try to breathe in deeply, hold it, then let it all out slowly and count to ten."
    guard, _ = guard_of(data, replies=[long, "I am here with you."])
    out = guard.session("v").respond_sync(
        [{"role": "user", "content": "I HATE this, it is awful, terrible, I am furious!!"}]
    )
    sup = out.summary["supervision"]
    assert sup["kind"] == "act" and sup["mode"] == "breathing"
    levels = {(v["level"], v["constraint"]) for v in sup["violations"]}
    assert ("oversight", "mode_rules") in levels  # small talk was proposed and blocked
    assert any(level == "activity" for level, _ in levels)  # the long reply was rejected
    assert out.reply.content == "I am here with you."


def test_a_silent_mode_says_its_text_without_a_model() -> None:
    data = with_(
        {"initial": "silence", "entries": ["silence", "crisis"], "default_mode": "silence"}
    )
    guard, backend = guard_of(data)
    out = guard.session("q").respond_sync([{"role": "user", "content": "hi"}])
    assert out.summary["supervision"]["mode"] == "silence"
    assert out.reply.content == "I'm here if you want to talk." and backend.requests == []


# --------------------------------------------------------------------------- persisted


def test_the_mode_and_the_cooldown_survive_a_restart(tmp_path: Path) -> None:
    db = tmp_path / "sessions.db"
    guard, backend = guard_of(replies=["Sure, take your time."], store=SqliteStore(db))
    s = guard.session("r")
    msgs: list[Any] = []
    for said in ("leave me alone", "go away"):
        msgs.append({"role": "user", "content": said})
        out = s.respond_sync(msgs)
        msgs.append(out.message)
    assert out.summary["supervision"]["kind"] == "disengage"
    assert out.summary["supervision"]["rule"] == "refusal_cooldown"
    assert len(backend.requests) == 1  # only the first refusal reached a mode
    guard.close()

    again, backend2 = guard_of(replies=["unused"], store=SqliteStore(db))
    state = again.session("r").state.supervisor
    assert state is not None and state.cooldown_until == 5 and state.t == 2
    msgs.append({"role": "user", "content": "hmm"})
    out = again.session("r").respond_sync(msgs)
    sup = out.summary["supervision"]
    assert (sup["kind"], sup["rule"]) == ("wait", "refusal_cooldown")
    assert "3 step(s) left" in sup["reason"] and backend2.requests == []
    again.close()


def test_operator_set_mode_and_release_are_audited_and_honoured(tmp_path: Path) -> None:
    db = tmp_path / "sessions.db"
    guard, backend = guard_of(replies=["In... and out.", "Nice, tell me more!"],
                              store=SqliteStore(db))  # fmt: skip
    s = guard.session("o")
    state = s.operate_sync("set_mode", who="ms. kay", why="calm down first", mode="breathing")
    assert state.supervisor is not None and state.supervisor.operator_mode == "breathing"
    msgs: list[Any] = [{"role": "user", "content": "what a great day"}]
    out = s.respond_sync(msgs)
    sup = out.summary["supervision"]
    assert (sup["kind"], sup["mode"], sup["rule"]) == ("operator", "breathing", "operator")
    assert "ms. kay" in sup["reason"] and "slow breath" in backend.requests[0][0].content
    guard.close()

    again, _ = guard_of(replies=["Nice, tell me more!"], store=SqliteStore(db))
    s2 = again.session("o")
    s2.operate_sync("release", who="ms. kay", why="better now")
    msgs += [out.message, {"role": "user", "content": "I saw a heron by the lake"}]
    out = s2.respond_sync(msgs)
    assert out.summary["supervision"]["kind"] == "act"
    audit = s2.state.supervisor.audit  # type: ignore[union-attr]
    assert [(a.kind.value, a.who, a.mode) for a in audit] == [
        ("set_mode", "ms. kay", "breathing"), ("release", "ms. kay", None)]  # fmt: skip
    assert [a.kind.value for a in s2.state.acts] == ["set_mode", "release"]
    kinds = [r.get("type") for r in again.store.records("o")]
    assert kinds.count("operator") == 2
    with pytest.raises(ConfigError, match=r"expected one of .*found 'dancing'"):
        s2.operate_sync("set_mode", who="x", why="y", mode="dancing")
    again.close()


def test_a_guard_without_modes_still_refuses_set_mode() -> None:
    policy = quick(load_policy(ROOT / "examples" / "policies" / "smalltalk.yaml"))
    guard = Guard.from_policy(policy, backend=ScriptedBackend([]))
    with pytest.raises(ConfigError, match="this guard's policy has no modes"):
        guard.session("n").operate_sync("set_mode", who="x", why="y", mode="breathing")


def test_a_paused_supervised_session_waits_naming_the_operator() -> None:
    guard, backend = guard_of(replies=["unused"])
    s = guard.session("p")
    s.operate_sync("pause", who="dr. lee", why="review")
    out = s.respond_sync([{"role": "user", "content": "hi"}])
    assert out.summary["kind"] == "paused" and backend.requests == []
    sup = out.summary["supervision"]
    assert (sup["kind"], sup["rule"]) == ("wait", "operator") and "dr. lee" in sup["reason"]
