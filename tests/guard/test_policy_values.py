"""The safety_value section of a guard policy: its errors, its English, and its constraint and
recovery through the Guard with a scripted upstream (the example policy's driving checkpoint)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from guard_helpers import ROOT, Conversation, call

from governor.backends.scripted import ScriptedBackend
from governor.cli.policy import describe
from governor.core import DecisionKind, Verdict
from governor.errors import ConfigError
from governor.files import load_mapping
from governor.guard import Guard, GuardReply, load_policy, policy_from_mapping
from governor.guard.spec import SafetyValueSpec
from governor.guard.value_constraint import DETAIL
from governor.safety_values import tasks

POLICY = ROOT / "examples" / "policies" / "safety_value.yaml"
SAFE_STATE = [1.0, 1.5, 0.0]  # the start of the track, heading down it
RISKY_STATE = [5.6, 1.5, -1.4]  # heading hard toward the right edge
ACTIONS = ("right", "straight", "left")


@pytest.fixture(scope="module")
def example() -> dict[str, Any]:
    return dict(load_mapping(POLICY))


@pytest.fixture(scope="module")
def spec() -> SafetyValueSpec:
    loaded = load_policy(POLICY).safety_value
    assert loaded is not None
    return loaded


def with_section(example: dict[str, Any], **changes: Any) -> dict[str, Any]:
    """The example policy with its safety_value section changed (a value None: key removed)."""
    section = {**example["safety_value"], **changes}
    return {**example, "safety_value": {k: v for k, v in section.items() if v is not None}}


def load(data: dict[str, Any]) -> Any:
    return policy_from_mapping(data, source="p.yaml", base_dir=POLICY.parent)


def q_of(spec: SafetyValueSpec, state: list[float]) -> np.ndarray:
    return np.asarray(spec.learned({"state": np.asarray(state)}))


# --------------------------------------------------------------------------- the section's errors


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"speed": 3}, "p.yaml: safety_value: unknown key(s) speed"),
        ({"tool": None}, "p.yaml: safety_value: missing key(s) tool"),
        ({"actions": ["right", "left"]}, "safety_value.actions: expected 3 values"),
        ({"actions": ["right", "right", "left"]}, "actions[1]: expected a value no other"),
        ({"actions": ["right", True, "left"]}, "actions[1]: expected a text or an integer"),
        ({"actions": "right"}, "safety_value.actions: expected a list"),
        ({"argument": "a..b"}, "safety_value.argument: expected a dotted path"),
        ({"observation": ""}, "safety_value.observation: expected non-empty text"),
        ({"margin": "high"}, "safety_value.margin: expected a finite number"),
        ({"recovery": "yes"}, "safety_value.recovery: expected true or false"),
        ({"tool": 3}, "safety_value.tool: expected non-empty text"),
        ({"checkpoint": "../checkpoints/nowhere"}, "safety_value.checkpoint: checkpoint: expected"),
        ({"env": "commerce"}, "was trained for env 'driving', expected env 'commerce'"),
    ],
)
def test_a_bad_section_is_a_config_error_naming_the_path(
    example: dict[str, Any], changes: dict[str, Any], message: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        load(with_section(example, **changes))
    assert message in str(caught.value)


def test_the_section_must_be_a_mapping(example: dict[str, Any]) -> None:
    with pytest.raises(ConfigError, match="safety_value: expected a mapping with keys name"):
        load({**example, "safety_value": ["steer"]})


def test_its_name_must_not_be_an_ltl_rule_s(example: dict[str, Any]) -> None:
    data = with_section(example, name="no_steer")
    data["propositions"] = {"steer": {"tool": "steer"}}
    data["ltl"] = [{"name": "no_steer", "formula": "G !steer"}]
    with pytest.raises(ConfigError, match=r"safety_value.name: expected a name no LTL rule"):
        load(data)


def test_it_cannot_stand_beside_a_supervision_section(example: dict[str, Any]) -> None:
    supervised = load_mapping(ROOT / "examples" / "policies" / "supervised.yaml")
    data = {**supervised, "safety_value": example["safety_value"]}
    base = ROOT / "examples" / "policies"
    with pytest.raises(ConfigError, match="expected no safety_value section beside a supervision"):
        policy_from_mapping(data, source="p.yaml", base_dir=base)


def _copy_checkpoint(tmp_path: Path, edit: Callable[[dict[str, Any]], None]) -> Path:
    out = tmp_path / "ckpt"
    shutil.copytree(POLICY.parent.parent / "checkpoints" / "driving_state", out)
    data = torch.load(out / "checkpoint.pt", weights_only=True)
    edit(data)
    torch.save(data, out / "checkpoint.pt")
    return out


def test_a_checkpoint_of_an_unregistered_env_names_the_registered_ones(
    example: dict[str, Any], tmp_path: Path
) -> None:
    out = _copy_checkpoint(tmp_path, lambda d: d.update(env="submarine"))
    data = with_section(example, checkpoint=str(out), env=None)
    with pytest.raises(ConfigError) as caught:
        load(data)
    text = str(caught.value)
    assert "safety_value.checkpoint" in text and "'submarine'" in text
    assert all(name in text for name in tasks.registered_tasks())


def test_with_no_task_registered_the_error_says_how_to_register_one(
    example: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tasks, "_REGISTRY", {})
    with pytest.raises(ConfigError, match=r"governor\.worlds\.driving\.task"):
        load(example)


def test_weights_that_do_not_fit_are_a_config_error(
    example: dict[str, Any], tmp_path: Path
) -> None:
    out = _copy_checkpoint(tmp_path, lambda d: d["state_dict"].pop(next(iter(d["state_dict"]))))
    with pytest.raises(ConfigError, match=r"safety_value\.checkpoint: .*weights do not fit"):
        load(with_section(example, checkpoint=str(out)))


def test_policy_check_says_the_section_in_english(spec: SafetyValueSpec) -> None:
    lines = "\n".join(describe(load_policy(POLICY)))
    assert f"Safety value {spec.name}: {spec.text}" in lines
    assert "judges every steer call: its action is direction, one of right (steer right)" in lines
    assert "Q(observation, action) > margin 0;" in lines and "driving, state model" in lines
    assert "observation: state in the JSON content of the latest tool message" in lines
    assert "the same call with the safest action (argmax Q) instead" in lines


# --------------------------------------------------------------------------- judging calls


def guard_of(replies: list[str], **changes: Any) -> tuple[Guard, ScriptedBackend]:
    data = with_section(dict(load_mapping(POLICY)), **changes)
    backend = ScriptedBackend(replies)
    return Guard.from_policy(load(data), backend=backend), backend


def drive(guard: Guard, state: Any, *, content: str | None = None) -> GuardReply:
    """A session that observed ``state`` (or a tool result of ``content``), asked to steer."""
    chat = Conversation()
    chat.user("drive")
    observe = {"id": "o1", "type": "function", "function": {"name": "observe", "arguments": "{}"}}
    chat.messages.append({"role": "assistant", "content": None, "tool_calls": [observe]})
    result = json.dumps({"state": state}) if content is None else content
    chat.messages.append({"role": "tool", "tool_call_id": "o1", "content": result})
    return guard.session("s").respond_sync(chat.messages)


def steer(direction: Any) -> str:
    return call("steer", direction=direction, speed="slow")


def refusals(out: GuardReply) -> list[Verdict]:
    """The refused verdicts of the step, descriptors and all (the decision keeps them; the
    summary names only the constraint and the kind of violation)."""
    found = [v for a in out.decision.attempts for row in a.verdicts for v in row]
    return [v for v in found if not v.admissible]


def directions(out: GuardReply) -> list[Any]:
    return [c.args().get("direction") for c in out.reply.tool_calls]


def test_a_safe_action_is_executed(spec: SafetyValueSpec) -> None:
    assert q_of(spec, SAFE_STATE)[1] > spec.margin
    guard, _ = guard_of([steer("straight")])
    out = drive(guard, SAFE_STATE)
    assert out.decision.kind is DecisionKind.EXECUTE and directions(out) == ["straight"]
    (kept,) = (v for v in out.decision.verdicts if v.constraint == "stay_on_road")
    assert "keeps the safety value" in kept.descriptor


def test_an_unsafe_action_is_replaced_by_the_safest_one(spec: SafetyValueSpec) -> None:
    q = q_of(spec, RISKY_STATE)
    assert q[1] <= spec.margin < q.max()
    guard, backend = guard_of([steer("straight")])
    out = drive(guard, RISKY_STATE)
    safest = ACTIONS[int(np.argmax(q))]
    assert out.decision.kind is DecisionKind.FALLBACK and directions(out) == [safest]
    assert out.reply.tool_calls[0].args()["speed"] == "slow"  # the rest of the call is kept
    assert out.summary["recovery"] is True and backend.remaining == 0
    (rejected,) = out.summary["rejected"]
    assert rejected["constraint"] == "stay_on_road" and rejected["violation"] == "safety_value"
    (refused,) = refusals(out)
    assert f"safety value {q[1]:.3f} <= margin 0.000" in refused.descriptor
    assert f"the safest action is direction='{safest}'" in refused.descriptor
    (refusal,) = (v for v in out.decision.verdicts if v.constraint == "stay_on_road")
    assert refusal.repair == out.reply  # the recovery travels in the refusal itself


def test_without_recovery_the_refusal_is_the_fallback_text(spec: SafetyValueSpec) -> None:
    guard, _ = guard_of([steer("straight")], recovery=False)
    out = drive(guard, RISKY_STATE)
    assert out.reply.tool_calls == () and out.summary["recovery"] is False
    assert out.reply.content is not None
    assert out.reply.content.startswith('I did not steer that way: it would break the rule "keep')
    # the text names the kind of violation; Q and the safest action stay in the record
    assert out.reply.content.endswith(
        "(the steer call leads toward failure: its safety value is at or below the margin)."
    )
    assert "safest" not in out.reply.content and "safety value -" not in out.reply.content
    assert "the safest action is" in refusals(out)[0].descriptor


@pytest.mark.parametrize(
    ("state", "content", "reason", "found"),
    [
        (None, "moved", "expected JSON content in the latest tool message", "found 'moved'"),
        # nested past the JSON reader's recursion: the same clear refusal, not an error
        (None, "[" * 100_000, "expected JSON content in the latest tool message", "found '[[[["),
        (None, '{"speed": 1}', "expected 3 finite numbers (the driving state) at state", "found nothing"),
        ([1.0, 1.5], None, "expected 3 finite numbers", "found [1.0, 1.5]"),
        ([1.0, "a", 0.0], None, "expected 3 finite numbers", "found [1.0, 'a', 0.0]"),
        ([1.0, True, 0.0], None, "expected 3 finite numbers", "found [1.0, True, 0.0]"),
    ],
)  # fmt: skip
def test_a_missing_or_malformed_observation_is_refused_with_the_reason(
    state: Any, content: str | None, reason: str, found: str
) -> None:
    guard, _ = guard_of([steer("straight")])
    out = drive(guard, state, content=content)
    assert out.reply.tool_calls == () and out.decision.kind is DecisionKind.FALLBACK
    (rejected,) = refusals(out)
    assert "refused unchecked" in rejected.descriptor and reason in rejected.descriptor
    assert f"{DETAIL}{found}" in rejected.descriptor  # what was found: in the record only
    assert reason in (out.reply.content or "") and "found" not in (out.reply.content or "")


def test_no_tool_result_before_the_call_is_refused() -> None:
    guard, _ = guard_of([steer("left")])
    out = guard.session("s").respond_sync([{"role": "user", "content": "drive"}])
    assert out.reply.tool_calls == ()
    assert "expected a tool message before the call, found none" in (out.reply.content or "")


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        (steer("hard-left"), f"direction: expected 'right' or 'straight' or 'left'{DETAIL}found 'hard-left'"),
        (steer(True), f"{DETAIL}found True"),
        (call("steer", speed="slow"), f"{DETAIL}found nothing"),
        (json.dumps({"tool_calls": [{"name": "steer", "arguments": {"direction": "left"}}] * 2}),
         "expected one steer call per reply (one observation, one action), found 2"),
    ],
)  # fmt: skip
def test_an_action_that_is_not_one_of_the_actions_is_refused(reply: str, reason: str) -> None:
    guard, _ = guard_of([reply])
    out = drive(guard, SAFE_STATE)
    assert out.reply.tool_calls == () and reason in refusals(out)[0].descriptor


def test_other_tools_and_text_replies_are_not_its_business() -> None:
    guard, _ = guard_of([call("observe")])
    s, chat = guard.session("s"), Conversation()
    first = s.respond_sync(chat.user("drive"))
    assert (
        first.decision.kind is DecisionKind.EXECUTE and first.reply.tool_calls[0].name == "observe"
    )
    chat.took(first, "not a state")
    assert s.check_sync("On my way.", messages=chat.messages).admissible


def test_a_q_that_is_not_finite_fails_the_check(monkeypatch: pytest.MonkeyPatch) -> None:
    guard, _ = guard_of([steer("straight")])
    learned = guard.policy.safety_value.learned  # type: ignore[union-attr]
    monkeypatch.setattr(type(learned), "__call__", lambda self, obs: np.array([np.nan, 0.0, 0.0]))
    out = drive(guard, SAFE_STATE)
    assert out.reply.tool_calls == () and out.decision.kind is DecisionKind.FALLBACK
    assert "expected a finite Q per action, found [nan, 0.0, 0.0]" in " ".join(out.decision.errors)
    assert out.reply.content == "Sorry, something went wrong on my side; I did not do anything."
