"""governor as an AgentDojo defense: a pipeline element that judges each tool call before it runs.

:class:`GovernedToolsExecutor` takes the place of AgentDojo's ``ToolsExecutor`` in an
``AgentPipeline`` (inside its ``ToolsExecutionLoop``), with any of its LLMs::

    from agentdojo.agent_pipeline import AgentPipeline, InitQuery, SystemMessage, ToolsExecutionLoop
    from governor.integrations.agentdojo import GovernedToolsExecutor

    guard = GovernedToolsExecutor.from_policy("examples/policies/agentdojo/banking.yaml")
    pipeline = AgentPipeline([SystemMessage(prompt), InitQuery(), llm,
                              ToolsExecutionLoop([guard, llm])])

Each assistant message with tool calls is judged by the policy's checks given the run so far (the
system prompt, the user's task, the calls that ran and their results). A reply refused as a whole
is judged call by call: the calls refused on their own are not run, and the agent receives, as
each one's tool result, the refusal naming the rule (recovery, not a dead stop); the others run.
In the run's history a refused call is rewritten as ``governor_refused(tool=NAME)`` (same id), so
the history, and AgentDojo's scoring that reads the calls in it, holds only calls that ran. The
calls that ran are committed, so the monitors progress over what happened. The run's state
lives in the pipeline's ``extra_args`` (one run, one trajectory); the element counts the calls it
judged, their time and its refusals. No model is called. Needs the ``[agentdojo]`` extra.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from agentdojo.agent_pipeline.base_pipeline_element import BasePipelineElement
from agentdojo.agent_pipeline.tool_execution import ToolsExecutor
from agentdojo.functions_runtime import EmptyEnv, Env, FunctionCall, FunctionsRuntime
from agentdojo.types import (
    ChatMessage,
    ChatToolResultMessage,
    get_text_content_as_str,
    text_content_block_from_string,
)

from governor.backends.scripted import ScriptedBackend
from governor.core import Decision, DecisionKind, Trajectory, Verdict
from governor.guard import Guard, GuardPolicy, load_policy
from governor.guard.exchange import Conversation, Message, Reply, ToolCall

REFUSED_CALL = "governor_refused"
"""The name a refused call takes in the run's history (its argument ``tool`` names the tool)."""
STATE_KEY = "governor"
_EMPTY = EmptyEnv()
"""The key of the run's state in the pipeline's ``extra_args``."""
REFUSAL = (
    'governor refused this call: it would break the rule "{text}" ({rule}). It was not run;'
    " go on with the user's task without it."
)


@dataclass
class Judged:
    """What the element did: calls judged, refusals (tool, rules), seconds per judged reply."""

    calls: int = 0
    refusals: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)
    seconds: list[float] = field(default_factory=list)


@dataclass(frozen=True)
class _Run:
    traj: Trajectory
    consumed: int  # AgentDojo messages read into ``traj``
    ids: tuple[str, ...] = ()  # the ids of the calls that ran in the last reply


def _text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return get_text_content_as_str(list(content))


def _call_id(call: FunctionCall, index: int, step: int) -> str:
    return call.id or f"call_{step}_{index}"


def _tool_call(call: FunctionCall, ident: str) -> ToolCall:
    return ToolCall(ident, call.function, json.dumps(dict(call.args), default=str))


class GovernedToolsExecutor(BasePipelineElement):
    """AgentDojo's tool executor behind a governor policy (see the module doc)."""

    name = "governor"

    def __init__(self, guard: Guard, inner: ToolsExecutor | None = None) -> None:
        self.guard = guard
        self.observer = guard.observer
        self.texts = {r.name: r.text for r in guard.policy.ltl}
        self.inner = inner or ToolsExecutor()
        self.judged = Judged()

    @classmethod
    def from_policy(cls, policy: str | Path | GuardPolicy) -> GovernedToolsExecutor:
        loaded = policy if isinstance(policy, GuardPolicy) else load_policy(policy)
        return cls(Guard.from_policy(loaded, backend=ScriptedBackend([])))

    def close(self) -> None:
        self.guard.close()

    # ------------------------------------------------------------------ the pipeline element

    def query(
        self,
        query: str,
        runtime: FunctionsRuntime,
        env: Env = _EMPTY,
        messages: Sequence[ChatMessage] = (),
        extra_args: dict = {},  # noqa: B006 (AgentDojo's signature; never mutated here)
    ) -> tuple[str, FunctionsRuntime, Env, Sequence[ChatMessage], dict]:
        if not messages or messages[-1]["role"] != "assistant" or not messages[-1]["tool_calls"]:
            return query, runtime, env, messages, extra_args
        run = extra_args.get(STATE_KEY)
        if not isinstance(run, _Run) or run.consumed >= len(messages):
            run = _Run(self._start(runtime), 0)
        traj = self._catch_up(run, messages[:-1])
        step = len(messages)
        calls = list(messages[-1]["tool_calls"] or [])
        ids = [_call_id(c, i, step) for i, c in enumerate(calls)]
        start = time.perf_counter()
        refused = self._refused(traj, [_tool_call(c, i) for c, i in zip(calls, ids, strict=True)])
        self.judged.seconds.append(time.perf_counter() - start)
        self.judged.calls += len(calls)
        ran = [k for k in range(len(calls)) if k not in refused]
        # run the admitted calls with AgentDojo's own executor
        admitted = {**messages[-1], "tool_calls": [calls[k] for k in ran]}
        results: list[ChatMessage] = []
        if ran:
            _, runtime, env, out, _ = self.inner.query(
                query, runtime, env, [*messages[:-1], admitted], extra_args
            )
            results = list(out[len(messages) :])
        by_call = dict(zip(ran, results, strict=True))
        merged: list[ChatMessage] = []
        for k, call in enumerate(calls):
            if k in refused:
                rules = refused[k]
                self.judged.refusals.append((call.function, rules))
                text = REFUSAL.format(rule=", ".join(rules),
                                      text="; ".join(self.texts.get(r, r) for r in rules))  # fmt: skip
                merged.append(ChatToolResultMessage(
                    role="tool", content=[text_content_block_from_string("")],
                    tool_call_id=call.id, tool_call=call, error=text))  # fmt: skip
            else:
                merged.append(by_call[k])
        # commit what ran, with the results it returned
        reply = Reply(None, tuple(_tool_call(calls[k], ids[k]) for k in ran))
        msg = Message("assistant", _text(messages[-1].get("content")), reply.tool_calls)
        if ran:
            decision = Decision(DecisionKind.EXECUTE, reply, reason="run by AgentDojo")
            traj = self.observer.commit(traj, decision, traj.observation.then(msg))
            for k in ran:
                r = by_call[k]
                content = r.get("error") or _text(r.get("content"))
                tool = Message("tool", content, (), ids[k])
                traj = replace(traj, observation=traj.observation.then(tool))
        last = messages[-1]
        if refused:  # the history records what ran: a refused call becomes governor_refused
            shown = [
                FunctionCall(function=REFUSED_CALL, args={"tool": c.function}, id=c.id)
                if k in refused
                else c
                for k, c in enumerate(calls)
            ]
            last = {**last, "tool_calls": shown}
            for k in refused:
                merged[k] = {**merged[k], "tool_call": shown[k]}
        new_messages = [*messages[:-1], last, *merged]
        state = _Run(traj, len(new_messages), tuple(ids[k] for k in ran))
        return query, runtime, env, new_messages, {**extra_args, STATE_KEY: state}

    # ------------------------------------------------------------------ judging

    def _start(self, runtime: FunctionsRuntime) -> Trajectory:
        """A new run's trajectory: the tools offered are the runtime's functions."""
        memory = {c.name: c.initial_state(None) for c in self.observer.constraints}
        offered = tuple({"type": "function", "function": {"name": n}} for n in runtime.functions)
        return Trajectory(Conversation((), offered), memory=memory)

    def _catch_up(self, run: _Run, messages: Sequence[ChatMessage]) -> Trajectory:
        """``run``'s trajectory with the messages it has not read (system, user, and an
        assistant message the executor did not see, committed as executed)."""
        traj = run.traj
        for m in messages[run.consumed :]:
            role = m["role"]
            if role == "assistant":
                calls = tuple(
                    _tool_call(c, _call_id(c, i, -1)) for i, c in enumerate(m["tool_calls"] or [])
                )
                reply = Reply(_text(m.get("content")) or None, calls)
                if not calls and reply.content is None:
                    continue
                decision = Decision(DecisionKind.EXECUTE, reply, reason="seen by the executor")
                traj = self.observer.commit(traj, decision, traj.observation.then(reply.message()))
                continue
            if role == "tool":
                continue  # results of calls this element did not run are not the run's
            message = Message(role, _text(m.get("content")))
            traj = replace(traj, observation=traj.observation.then(message))
        return traj

    def _refused(self, traj: Trajectory, calls: list[ToolCall]) -> dict[int, tuple[str, ...]]:
        """The calls not to run, each with the rules that refuse it."""

        def bad(verdicts: Sequence[Verdict]) -> tuple[str, ...]:
            return tuple(v.constraint for v in verdicts if not v.admissible)

        whole = bad(self.observer.verdicts(traj, Reply(None, tuple(calls))))
        if not whole:
            return {}
        out: dict[int, tuple[str, ...]] = {}
        for k, call in enumerate(calls):
            alone = bad(self.observer.verdicts(traj, Reply(None, (call,))))
            if alone:
                out[k] = alone
        if not out:  # refused only together: none runs
            return dict.fromkeys(range(len(calls)), whole)
        kept = [c for k, c in enumerate(calls) if k not in out]
        if kept and bad(self.observer.verdicts(traj, Reply(None, tuple(kept)))):
            return dict.fromkeys(range(len(calls)), whole)
        return out
