"""Replaying a client's history at once gives what committing it message by message gives: every
rule's formulas, verdicts, labels, position, running sums and provenance index, over seeded
random histories of text, tool calls, results and user confirmations, under two policies whose
propositions read every source (tools, sums, the user, results, provenance)."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from guard_helpers import ROOT

from governor.backends.scripted import ScriptedBackend
from governor.bench.service.workload import TOOL_NAMES, bench_policy
from governor.core import (
    CommitFailure,
    Constraint,
    Decision,
    DecisionKind,
    Step,
    Trajectory,
    Verdict,
)
from governor.guard import Guard, load_policy
from governor.guard.constraints import ToolLTLConstraint, ToolMonitorState
from governor.guard.exchange import Conversation, History, conversation_from, reply_of
from governor.guard.session_state import SessionState, state_from_json, state_to_json

SUPPORT_TOOLS = ("lookup_order", "read_customer_record", "verify_identity", "refund", "send_email")


def guard_of(name: str) -> Guard:
    if name == "support":
        policy = load_policy(ROOT / "examples" / "policies" / "support.yaml")
    else:
        policy = bench_policy("ltl", "http://127.0.0.1:9/v1")
    return Guard(policy, ScriptedBackend([]))


def history(seed: int, tools: tuple[str, ...], n: int = 160) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    out: list[dict[str, Any]] = [{"role": "user", "content": "hello, order A-17 to ann@x.org"}]
    calls: list[str] = []
    for k in range(n):
        roll = rng.random()
        if calls and roll < 0.5:  # the results of the last reply's calls
            for cid in calls:
                status = rng.choice(["verified", "FAILED"])
                out.append({"role": "tool", "tool_call_id": cid, "content": json.dumps({"status": status, "order_id": f"B-{k}"})})  # fmt: skip
            calls = []
        elif roll < 0.65:
            said = rng.choice(["yes go ahead", "no", "confirm", "what about order C-9?"])
            out.append({"role": "user", "content": said})
        elif roll < 0.8:
            out.append({"role": "assistant", "content": f"reply {k}"})
            calls = []
        else:
            calls = [f"c{k}_{j}" for j in range(rng.choice([1, 1, 2]))]
            made = [
                {
                    "id": cid,
                    "type": "function",
                    "function": {
                        "name": rng.choice(tools),
                        "arguments": json.dumps(
                            {
                                "amount": rng.choice([5, 60, "x", -1]),
                                "order_id": rng.choice(["A-17", "Z-1"]),
                                "to": rng.choice(["ann@x.org", "eve@y.org"]),
                            }
                        ),
                    },
                }
                for cid in calls
            ]
            content = rng.choice([None, "doing it"])
            out.append({"role": "assistant", "content": content, "tool_calls": made})
    return out


def one_by_one(guard: Guard, messages: tuple[Any, ...]) -> dict[str, Any]:
    """The memory after committing each assistant message through the observer, in turn."""
    observer = guard.observer
    traj = Trajectory(
        Conversation(()), memory={c.name: c.initial_state(None) for c in observer.constraints}
    )
    for i, m in enumerate(messages):
        if m.role != "assistant":
            continue
        before = Trajectory(Conversation(History(messages, i)), memory=traj.memory)
        decision = Decision(DecisionKind.EXECUTE, reply_of(m), reason="executed")
        traj = observer.commit(before, decision, Conversation(History(messages, i + 1)))
    return dict(traj.memory)


@pytest.mark.parametrize("name", ["support", "bench"])
@pytest.mark.parametrize("seed", range(6))
def test_a_replayed_history_is_the_history_committed_one_by_one(name: str, seed: int) -> None:
    guard = guard_of(name)
    messages = conversation_from(history(seed, SUPPORT_TOOLS if name == "support" else TOOL_NAMES))
    expected = one_by_one(guard, messages)
    session = guard.session(f"replay-{seed}")
    traj, t, claims = session._catch_up(messages, None)
    assert t == sum(m.role == "assistant" for m in messages) == len(claims)
    rules = [c for c in guard.observer.constraints if isinstance(c, ToolLTLConstraint)]
    assert rules
    for c in rules:
        got, want = traj.memory[c.name], expected[c.name]
        assert isinstance(got, ToolMonitorState) and isinstance(want, ToolMonitorState)
        assert got.monitors == want.monitors, c.name
        assert dict(got.sums) == dict(want.sums) and got.seen == want.seen, c.name
    # and what is saved of both is the same
    constraints = guard.observer.constraints
    saved = [
        state_to_json(SessionState(messages, memory, t=t), constraints)
        for memory in (dict(traj.memory), expected)
    ]
    assert saved[0] == saved[1]
    assert state_from_json(saved[0], constraints).memory.keys() == expected.keys()


def test_a_replay_continues_from_a_saved_state_and_keeps_a_lost_one() -> None:
    guard = guard_of("bench")
    messages = conversation_from(history(11, TOOL_NAMES))
    rule = next(c for c in guard.observer.constraints if isinstance(c, ToolLTLConstraint))
    at = [i for i, m in enumerate(messages) if m.role == "assistant"]
    half = len(at) // 2
    whole = rule.replay(None, messages, at)
    first = rule.replay(None, messages, at[:half])
    assert rule.replay(first, messages, at[half:]) == whole
    lost = CommitFailure("ValueError: lost")
    assert rule.replay(lost, messages, at) is lost
    failed = rule.replay("not a state", messages, at)
    assert isinstance(failed, CommitFailure) and "expected a ToolMonitorState" in failed.error


class Counting(Constraint):
    """A stateful constraint of another kind: counts the executed actions, notes the tools."""

    name = "counting"

    def check(self, traj: Trajectory, action: Any) -> Verdict:
        return Verdict.allow(self.name)

    def commit(self, traj: Trajectory, step: Step) -> Any:
        count, _ = traj.memory.get(self.name) or (0, ())
        return count + 1, tuple(step.observation.tools)


def test_another_kind_of_stateful_constraint_is_committed_message_by_message() -> None:
    guard = guard_of("bench")
    guard.observer.constraints = (*guard.observer.constraints, Counting())
    messages = conversation_from(history(5, TOOL_NAMES))
    expected = one_by_one(guard, messages)
    traj, t, _ = guard.session("other")._catch_up(messages, [{"name": "search"}])
    assert traj.memory["counting"] == (t, ({"name": "search"},))
    rules = [c.name for c in guard.observer.constraints if isinstance(c, ToolLTLConstraint)]
    assert all(traj.memory[n] == expected[n] for n in rules)


@pytest.mark.parametrize("name", ["support", "bench"])
@pytest.mark.parametrize("seed", range(3))
def test_a_commit_after_checks_of_other_candidates_is_the_plain_commit(
    name: str, seed: int
) -> None:
    """A rule reuses the labels its check predicted for the committed action; checking other
    candidates (and the calls of each alone) first changes nothing the commit keeps."""
    guard = guard_of(name)
    messages = conversation_from(history(seed, SUPPORT_TOOLS if name == "support" else TOOL_NAMES))
    expected = one_by_one(guard_of(name), messages)
    observer = guard.observer
    replies = [reply_of(m) for m in messages if m.role == "assistant"]
    traj = Trajectory(
        Conversation(()), memory={c.name: c.initial_state(None) for c in observer.constraints}
    )
    for k, (i, m) in enumerate((i, m) for i, m in enumerate(messages) if m.role == "assistant"):
        before = Trajectory(Conversation(History(messages, i)), memory=traj.memory)
        executed = reply_of(m)
        others = [replies[(k + 1) % len(replies)], replies[(k + 7) % len(replies)]]
        for candidate in [others[0], executed, others[1]][: 1 + k % 3]:
            observer.verdicts(before, candidate)
        decision = Decision(DecisionKind.EXECUTE, executed, reason="executed")
        traj = observer.commit(before, decision, Conversation(History(messages, i + 1)))
    rules = [c for c in observer.constraints if isinstance(c, ToolLTLConstraint)]
    assert any(c._predicted is not None for c in rules)
    for c in rules:
        got, want = traj.memory[c.name], expected[c.name]
        assert got.monitors == want.monitors, c.name
        assert dict(got.sums) == dict(want.sums) and got.seen == want.seen, c.name
        assert got.sums is not want.sums
