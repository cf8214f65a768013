"""Agent middleware for LangChain 1.x (``langchain``, the ``[langchain]`` extra).

:class:`GovernorMiddleware` goes in ``create_agent(..., middleware=[...])`` and wraps:

- each model call: the user turns new since the last call join the session first (rules over user
  turns read them); a text reply (no tool calls) is then judged by the policy's checks on text
  and, when they refuse it, replaced by the policy's ``fallbacks.default`` text; the reply's
  ``response_metadata["governor"]`` carries the decision;
- each tool call: judged before it runs (:class:`~.tool_judge.ToolJudge`: the policy's rules over
  the session's calls and results, then committed); a refused call does not run, and its result
  is an error ``ToolMessage`` whose text names the rules (the model reads it); an allowed call runs
  and its result joins the session.

Both the sync (``invoke``) and async (``ainvoke``) agent paths are wrapped; the sync one runs the
judge with ``asyncio.run``, so it must not be called inside a running event loop (as the
facade's ``*_sync`` calls). A session is one conversation: a fixed id, or a function of the run's
context object (``agent.invoke(..., context=...)``). No model call is made by the guard
(:class:`~.tool_judge.JudgeOnly`). Imports ``langchain``, ``langchain_core`` and ``langgraph``, the
guard's facade and :mod:`.tool_judge`.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeVar

from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, ToolMessage
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.types import Command

from governor.guard import Guard, SyncInLoopError
from governor.integrations.tool_judge import Judgement, Judges, ToolJudge

T = TypeVar("T")
SessionOf = str | Callable[[Any], str]
"""A session id, or a function of the run's context object."""
ModelHandler = Callable[[ModelRequest], ModelResponse]
ToolHandler = Callable[[ToolCallRequest], ToolMessage | Command[Any]]


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content blocks
        return " ".join(b if isinstance(b, str) else str(b.get("text", "")) for b in content if b)
    return json.dumps(content, default=str)


_SYNC = threading.Lock()
"""Serialises the sync path's judging (a graph may run tool calls in several threads; each
``asyncio.run`` has its own event loop, and a judge's lock must not be awaited from two)."""


def _run(make: Callable[[], Coroutine[Any, Any, T]]) -> T:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        with _SYNC:
            return asyncio.run(make())
    raise SyncInLoopError(
        "GovernorMiddleware: expected the sync agent path (invoke) outside a running event loop,"
        " found one running; use `await agent.ainvoke(...)` there"
    )


class GovernorMiddleware(AgentMiddleware):
    """The middleware of one guard (see the module doc)."""

    def __init__(self, guard: Guard, session: SessionOf) -> None:
        super().__init__()
        self.guard = guard
        self.session = session
        self._judges = Judges(guard)

    @property
    def name(self) -> str:
        return "governor"

    def judge(self, context: Any) -> ToolJudge:
        """The judge of the session the run's ``context`` belongs to."""
        return self._judges(
            self.session if isinstance(self.session, str) else self.session(context)
        )

    # ------------------------------------------------------------------ the model call

    def wrap_model_call(self, request: ModelRequest, handler: ModelHandler) -> ModelResponse:
        judge = self.judge(request.runtime.context if request.runtime else None)
        _run(lambda: self._hear(judge, request.messages))
        response = handler(request)
        return _run(lambda: self._judge_reply(judge, response))

    async def awrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], Awaitable[ModelResponse]]
    ) -> ModelResponse:
        judge = self.judge(request.runtime.context if request.runtime else None)
        await self._hear(judge, request.messages)
        return await self._judge_reply(judge, await handler(request))

    async def _hear(self, judge: ToolJudge, messages: list[AnyMessage]) -> None:
        """Add the user turns not heard yet to the session."""
        for i, m in enumerate(messages):
            if isinstance(m, HumanMessage):
                await judge.hear({"role": "user", "content": _text(m.content)}, m.id or f"#{i}")

    async def _judge_reply(self, judge: ToolJudge, response: ModelResponse) -> ModelResponse:
        """A text reply judged; refused, it becomes the policy's default fallback text."""
        replies = [m for m in response.result if isinstance(m, AIMessage)]
        if len(replies) != 1 or replies[0].tool_calls:
            return response  # tool calls are judged one by one when they run
        reply = replies[0]
        judgement = await judge.judge_reply(_text(reply.content))
        meta = {**reply.response_metadata, "governor": judgement.decision()}
        if judgement.allowed:
            checked = reply.model_copy(update={"response_metadata": meta})
        else:
            text = self.guard.policy.fallbacks["default"]
            checked = reply.model_copy(update={"content": text, "response_metadata": meta})
        result = [checked if m is reply else m for m in response.result]
        return ModelResponse(result=result, structured_response=response.structured_response)

    # ------------------------------------------------------------------ each tool call

    def wrap_tool_call(
        self, request: ToolCallRequest, handler: ToolHandler
    ) -> ToolMessage | Command[Any]:
        judge = self.judge(request.runtime.context if request.runtime else None)
        call = request.tool_call
        judgement = _run(lambda: judge.before_call(call["name"], call["args"], call["id"]))
        if not judgement.allowed:
            return _refused(judgement, call)
        result = handler(request)
        _run(lambda: judge.after_call(judgement.call_id, _result_text(result)))
        return result

    async def awrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]],
    ) -> ToolMessage | Command[Any]:
        judge = self.judge(request.runtime.context if request.runtime else None)
        call = request.tool_call
        judgement = await judge.before_call(call["name"], call["args"], call["id"])
        if not judgement.allowed:
            return _refused(judgement, call)
        result = await handler(request)
        await judge.after_call(judgement.call_id, _result_text(result))
        return result


def _refused(judgement: Judgement, call: Any) -> ToolMessage:
    return ToolMessage(
        content=judgement.message,
        tool_call_id=call["id"] or judgement.call_id,
        name=call["name"],
        status="error",
        response_metadata={"governor": judgement.decision()},
    )


def _result_text(result: ToolMessage | Command[Any]) -> str:
    if isinstance(result, ToolMessage):
        return _text(result.content)
    return "[a command]"
