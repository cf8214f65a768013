"""Guardrails for the OpenAI Agents SDK (``openai-agents``, the ``[openai-agents]`` extra).

:class:`AgentGuard` turns a guard into the SDK's guardrails, each carrying governor's decision in
its ``output_info`` (``allowed``, ``rules``, ``message``, ``check``):

- ``tool_input`` (a tool input guardrail): judges each function-tool call before it runs
  (:class:`~.tool_judge.ToolJudge`: the policy's rules over the session's calls and results);
  a refused call does not run and the model reads governor's refusal, naming the rules, as the
  tool's output (``reject_content``; ``on_refusal="raise"`` halts the run instead);
- ``tool_output`` (a tool output guardrail): adds the tool's output to the session, so later
  calls are judged with it; it never rejects;
- ``input`` (an agent input guardrail, run before the agent starts): adds the user's latest turn
  to the session (rules over user turns read it); it never trips;
- ``output`` (an agent output guardrail): judges the final text by the policy's checks on text
  replies; the tripwire is pulled when they refuse it (the SDK raises
  ``OutputGuardrailTripwireTriggered``); an admitted reply is committed.

``guard.guarded(tool)`` adds the tool guardrails to a ``FunctionTool``; ``input_guardrails=
[guard.input]`` and ``output_guardrails=[guard.output]`` go on the ``Agent``. A session is one
conversation: a fixed id, or a function of the run's context object. No model call is made by the
guard (:class:`~.tool_judge.JudgeOnly`). Imports the ``agents`` package, the guard's facade and
:mod:`.tool_judge`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Literal

from agents import (
    Agent,
    FunctionTool,
    GuardrailFunctionOutput,
    InputGuardrail,
    OutputGuardrail,
    RunContextWrapper,
    ToolGuardrailFunctionOutput,
    ToolInputGuardrail,
    ToolInputGuardrailData,
    ToolOutputGuardrail,
    ToolOutputGuardrailData,
)

from governor.guard import Guard
from governor.integrations.tool_judge import Judges, ToolJudge

SessionOf = str | Callable[[Any], str]
"""A session id, or a function of the run's context object (``Runner.run(..., context=...)``)."""


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, default=str)


class AgentGuard:
    """The SDK guardrails of one guard (see the module doc)."""

    def __init__(
        self,
        guard: Guard,
        session: SessionOf,
        *,
        on_refusal: Literal["reject", "raise"] = "reject",
    ) -> None:
        self.guard = guard
        self.session = session
        self.on_refusal = on_refusal
        self._judges = Judges(guard)
        self.tool_input: ToolInputGuardrail[Any] = ToolInputGuardrail(
            self._tool_input, name="governor"
        )
        self.tool_output: ToolOutputGuardrail[Any] = ToolOutputGuardrail(
            self._tool_output, name="governor"
        )
        self.input: InputGuardrail[Any] = InputGuardrail(
            self._input, name="governor", run_in_parallel=False
        )
        self.output: OutputGuardrail[Any] = OutputGuardrail(self._output, name="governor")

    def judge(self, context: Any) -> ToolJudge:
        """The judge of the session the run's ``context`` belongs to."""
        return self._judges(
            self.session if isinstance(self.session, str) else self.session(context)
        )

    def guarded(self, tool: FunctionTool) -> FunctionTool:
        """``tool`` with governor's tool input and output guardrails added."""
        tool.tool_input_guardrails = [*(tool.tool_input_guardrails or []), self.tool_input]
        tool.tool_output_guardrails = [*(tool.tool_output_guardrails or []), self.tool_output]
        return tool

    async def _tool_input(self, data: ToolInputGuardrailData) -> ToolGuardrailFunctionOutput:
        ctx = data.context
        judge = self.judge(ctx.context)
        judgement = await judge.before_call(ctx.tool_name, ctx.tool_arguments, ctx.tool_call_id)
        info = judgement.decision()
        if judgement.allowed:
            return ToolGuardrailFunctionOutput.allow(info)
        if self.on_refusal == "raise":
            return ToolGuardrailFunctionOutput.raise_exception(info)
        return ToolGuardrailFunctionOutput.reject_content(judgement.message, info)

    async def _tool_output(self, data: ToolOutputGuardrailData) -> ToolGuardrailFunctionOutput:
        ctx = data.context
        await self.judge(ctx.context).after_call(ctx.tool_call_id, _text(data.output))
        return ToolGuardrailFunctionOutput.allow({"recorded": True})

    async def _input(
        self, ctx: RunContextWrapper[Any], agent: Agent[Any], given: str | list[Any]
    ) -> GuardrailFunctionOutput:
        said = given if isinstance(given, str) else _latest_user_text(given)
        if said is not None:
            await self.judge(ctx.context).hear({"role": "user", "content": said})
        return GuardrailFunctionOutput(
            output_info={"recorded": said is not None}, tripwire_triggered=False
        )

    async def _output(
        self, ctx: RunContextWrapper[Any], agent: Agent[Any], output: Any
    ) -> GuardrailFunctionOutput:
        judgement = await self.judge(ctx.context).judge_reply(_text(output))
        return GuardrailFunctionOutput(
            output_info=judgement.decision(), tripwire_triggered=not judgement.allowed
        )


def _latest_user_text(items: list[Any]) -> str | None:
    """The text of the last user item of a Responses-format input list."""
    for item in reversed(items):
        if isinstance(item, dict) and item.get("role") == "user":
            content = item.get("content")
            if isinstance(content, str):
                return content
            if isinstance(content, list):
                parts = [p.get("text", "") for p in content if isinstance(p, dict)]
                return " ".join(t for t in parts if isinstance(t, str))
    return None
