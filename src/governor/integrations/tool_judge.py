"""Judge a tool call before it runs, against the session's calls and results so far.

The integrations (the MCP gateway, the Agents SDK guardrails, the LangChain middleware) all do the
same thing, with the semantics of the service's ``/v1/checks``: :meth:`ToolJudge.before_call`
checks a proposed call (``GuardSession.check``: the policy's rules over the session's trajectory,
no model call) and, when every rule admits it, commits it (``GuardSession.commit``: the monitors
advance and the store keeps it) before the caller runs it; a refused call is not recorded and
must not run. :meth:`ToolJudge.after_call` adds the tool's result to the session's conversation
(a ``tool`` message, bounded by :data:`MAX_RESULT_CHARS`), and :meth:`ToolJudge.hear` a user's
turn, each saved with the next committed action, so rules over results and user turns see them;
:meth:`ToolJudge.judge_reply` judges (and, admitted, commits) the assistant's text reply by the
policy's checks on text. A policy's ``tools`` section refuses a call to a tool it does not
allow under the name ``tools``. Every failure to judge (a store that fails, arguments that
cannot be read) refuses the call: the judge fails closed.

The guard behind the integrations has no model (:class:`JudgeOnly`): it only checks and commits,
so a rule policy makes zero model calls. Imports the guard's facade, the backends' interface and
the error tree.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import uuid
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from governor.backends.base import Backend, ChatRequest, ChatResult
from governor.core import Verdict
from governor.errors import BackendError, GovernorError
from governor.guard import Guard, GuardPolicy, GuardSession, SessionStore, load_policy

log = logging.getLogger(__name__)

MAX_RESULT_CHARS = 16_384
"""The most characters of one tool result kept in the session's conversation."""
TOOLS_RULE = "tools"
"""The name a refusal by the policy's ``tools`` section carries."""
JUDGE_FAILED = "judge_failed"
"""The name a refusal carries when the call could not be judged (fail closed)."""
MAX_SESSIONS = 10_000
"""The most sessions whose judges an integration keeps in memory (the least recently used is
dropped first; its state stays in the store and is read again when it comes back)."""


class JudgeOnly(Backend):
    """The backend of a guard that only judges: every chat call is refused, never made."""

    name = "judge-only (no model)"

    def _chat(self, request: ChatRequest) -> ChatResult:
        raise BackendError(
            f"{self.name}: expected no model call (this guard only checks and commits tool"
            " calls), found a chat request"
        )


def judging_guard(policy: str | Path | GuardPolicy, *, store: SessionStore | None = None) -> Guard:
    """A guard of ``policy`` (a file or a loaded policy) with no model behind it."""
    loaded = policy if isinstance(policy, GuardPolicy) else load_policy(policy)
    return Guard(loaded, JudgeOnly(), store=store)


@dataclass(frozen=True)
class Judgement:
    """The guard's answer on one proposed tool call."""

    allowed: bool
    tool: str
    """The tool called; empty for a text reply."""
    call_id: str
    rules: tuple[str, ...] = ()
    """The rules that refused it (``tools`` for a tool the policy does not allow, ``judge_failed`` when it
    could not be judged)."""
    message: str = ""
    """Why it was refused, naming the rules; empty when allowed."""
    summary: Mapping[str, Any] = field(default_factory=dict)
    """The check's JSON summary (session, admissible, verdicts, rejected_by)."""

    def decision(self) -> dict[str, Any]:
        """Governor's decision on the call or reply, as a framework carries it (a message's
        metadata, a guardrail's ``output_info``)."""
        return {
            "allowed": self.allowed,
            "rules": list(self.rules),
            "message": self.message,
            "check": dict(self.summary),
        }


def refusal_message(tool: str | None, rules: Mapping[str, str]) -> str:
    """The text of a refusal: the call to ``tool`` (None: the reply), then each refusing rule's
    name and why."""
    said = "; ".join(
        f"rule {name}: {why}" if why else f"rule {name}" for name, why in rules.items()
    )
    what = "the reply" if tool is None else f"the call to {tool}"
    return f"governor refused {what}: {said}"


class ToolJudge:
    """Check-and-commit of the tool calls of one session (see the module doc). Calls on one
    judge are serialised, so a call is judged against every call allowed before it."""

    def __init__(self, guard: Guard, session_id: str) -> None:
        self.guard = guard
        self.session: GuardSession = guard.session(session_id)
        self._messages: list[dict[str, Any]] | None = None
        self._lock = asyncio.Lock()
        self.heard: set[str] = set()
        """The keys of the messages :meth:`hear` added (a framework's message ids)."""

    async def before_call(
        self, tool: str, arguments: Mapping[str, Any] | str | None, call_id: str | None = None
    ) -> Judgement:
        """Judge the call of ``tool`` with ``arguments`` (a mapping or its JSON text); when it is
        allowed it is committed before this returns, and the caller runs it."""
        call_id = call_id or f"call_{uuid.uuid4().hex[:16]}"
        if not self.guard.policy.tools.allows(tool):
            why = f"the policy does not allow the tool {tool!r}"
            return Judgement(
                False, tool, call_id, (TOOLS_RULE,), refusal_message(tool, {TOOLS_RULE: why})
            )
        async with self._lock:
            try:
                return await self._judge(tool, arguments, call_id)
            except GovernorError as exc:
                self._messages = None  # read the session again on the next call
                log.warning("tool call %s could not be judged: %s", tool, exc)
                why = f"the call could not be judged, so it is refused ({exc})"
                return Judgement(
                    False,
                    tool,
                    call_id,
                    (JUDGE_FAILED,),
                    refusal_message(tool, {JUDGE_FAILED: why}),
                )

    async def after_call(self, call_id: str, result: str) -> None:
        """Add the result of the allowed call ``call_id`` to the session's conversation."""
        await self.hear({"role": "tool", "tool_call_id": call_id, "content": result})

    async def hear(self, message: Mapping[str, Any], key: str | None = None) -> None:
        """Add a user or tool message to the session's conversation (its text cut at
        :data:`MAX_RESULT_CHARS`): rules over user turns and results read it. A message whose
        ``key`` was heard before is not added again."""
        if key is not None:
            if key in self.heard:
                return
            self.heard.add(key)
        said = str(message.get("content") or "")
        if len(said) > MAX_RESULT_CHARS:
            said = said[:MAX_RESULT_CHARS] + " [cut]"
        async with self._lock:
            messages = await self._history()
            messages.append({**message, "content": said})

    async def judge_reply(self, text: str) -> Judgement:
        """Judge the assistant's text reply by the policy's checks on text (``checks.assistant``);
        when admitted it is committed. Refusals name the rules, as for a tool call."""
        async with self._lock:
            try:
                return await self._check_commit({"role": "assistant", "content": text}, None, "")
            except GovernorError as exc:
                self._messages = None
                why = f"the reply could not be judged, so it is refused ({exc})"
                return Judgement(
                    False, "", "", (JUDGE_FAILED,), refusal_message(None, {JUDGE_FAILED: why})
                )

    async def _history(self) -> list[dict[str, Any]]:
        if self._messages is None:
            state = await asyncio.get_running_loop().run_in_executor(
                self.guard.executor, lambda: self.session.state
            )
            self._messages = [m.to_dict() for m in state.messages]
        return self._messages

    async def _judge(
        self, tool: str, arguments: Mapping[str, Any] | str | None, call_id: str
    ) -> Judgement:
        if isinstance(arguments, str):  # JSON text; none at all (a tool without parameters): {}
            args = arguments if arguments.strip() else "{}"
        else:
            args = json.dumps(dict(arguments or {}))
        candidate = {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": call_id, "type": "function", "function": {"name": tool, "arguments": args}}
            ],
        }
        return await self._check_commit(candidate, tool, call_id)

    async def _check_commit(
        self, candidate: Mapping[str, Any], tool: str | None, call_id: str
    ) -> Judgement:
        """Check ``candidate`` (a call of ``tool``; None: a text reply), commit it if admitted."""
        messages = await self._history()
        # The framework runs the call by its exact name, so the tool it names is offered; the
        # policy's ``tools`` section was applied before (:meth:`before_call`).
        offered = [{"type": "function", "function": {"name": tool}}] if tool else None
        checked = await self.session.check(candidate, messages=messages, tools=offered, inline=True)
        result = checked
        if checked.admissible:
            result = await self.session.commit(candidate, messages=messages, tools=offered)
            messages.append(dict(candidate))
            # (not admissible now: another instance moved a shared session on in between)
        if not result.admissible:
            why = _refusing(result.verdicts)
            message = refusal_message(tool, why)
            return Judgement(False, tool or "", call_id, tuple(why), message, result.summary)
        return Judgement(True, tool or "", call_id, summary=checked.summary)


def _refusing(verdicts: Sequence[Verdict]) -> dict[str, str]:
    """Each refusing constraint's name and why."""
    return {v.constraint: v.error or v.descriptor for v in verdicts if not v.admissible}


class Judges:
    """The judges of one guard's sessions, by session id (the :data:`MAX_SESSIONS` most recently
    used are kept)."""

    def __init__(self, guard: Guard) -> None:
        self.guard = guard
        self._judges: OrderedDict[str, ToolJudge] = OrderedDict()
        self._lock = threading.Lock()

    def __call__(self, session_id: str) -> ToolJudge:
        """The judge of ``session_id``."""
        with self._lock:
            found = self._judges.pop(session_id, None)
            if found is None:
                found = ToolJudge(self.guard, session_id)
            self._judges[session_id] = found
            while len(self._judges) > MAX_SESSIONS:
                self._judges.popitem(last=False)
            return found
