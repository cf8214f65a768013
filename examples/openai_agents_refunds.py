"""governor's guardrails on an OpenAI Agents SDK agent, offline: a scripted model, real SDK.

The agent has two tools, ``verify_identity`` and ``refund``; the policy
(``examples/policies/refunds.yaml``) says to verify before a refund, caps one refund at 500 and
keeps text replies to 40 words. The scripted model first tries to refund straight away: governor's
tool input guardrail refuses the call (the tool does not run) and the model reads the refusal,
naming the rule, as the tool's output; it verifies, refunds, and answers. A second run answers at
length, and the output guardrail's tripwire stops it.

Run: ``pip install -e '.[openai-agents]'`` then ``python examples/openai_agents_refunds.py``.
A real agent uses its own model instead of :class:`ScriptedModel`; the guard stays the same.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

from agents import (
    Agent,
    Model,
    ModelResponse,
    OutputGuardrailTripwireTriggered,
    RunConfig,
    Runner,
    Usage,
    function_tool,
)
from openai.types.responses import (
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
)

from governor.guard import SessionStore
from governor.integrations.openai_agents import AgentGuard
from governor.integrations.tool_judge import judging_guard
from governor.usage import metered

POLICY = Path(__file__).resolve().parent / "policies" / "refunds.yaml"

Turn = str | list[tuple[str, dict[str, Any]]]
"""A scripted model turn: the final text, or the tool calls (name, arguments) to make."""


class ScriptedModel(Model):
    """A model that answers with the scripted turns in order, and keeps what it was given."""

    def __init__(self, turns: Sequence[Turn]) -> None:
        self.turns = list(turns)
        self.inputs: list[Any] = []

    async def get_response(
        self, system_instructions: Any, input: Any, *args: Any, **kw: Any
    ) -> ModelResponse:
        self.inputs.append(input)
        turn = self.turns.pop(0)
        n = len(self.inputs)
        output: list[Any]
        if isinstance(turn, str):
            text = ResponseOutputText(type="output_text", text=turn, annotations=[])
            output = [
                ResponseOutputMessage(
                    id=f"msg_{n}",
                    type="message",
                    role="assistant",
                    status="completed",
                    content=[text],
                )
            ]
        else:
            output = [
                ResponseFunctionToolCall(
                    type="function_call",
                    id=f"fc_{n}_{i}",
                    call_id=f"call_{n}_{i}",
                    name=name,
                    arguments=json.dumps(args),
                    status="completed",
                )
                for i, (name, args) in enumerate(turn)
            ]
        return ModelResponse(output=output, usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kw: Any) -> AsyncIterator[Any]:
        raise NotImplementedError("the scripted model does not stream")


def tool_outputs(inputs: list[Any]) -> list[str]:
    """The tool outputs the model read, in order (refusals included)."""
    last = inputs[-1] if inputs else []
    return [
        i["output"] for i in last if isinstance(i, dict) and i.get("type") == "function_call_output"
    ]


def build_agent(guard: AgentGuard, model: Model, ran: list[str]) -> Agent[Any]:
    @function_tool
    def verify_identity(customer: str) -> str:
        """Verify the customer's identity."""
        ran.append(f"verify_identity {customer}")
        return f"{customer} is verified"

    @function_tool
    def refund(customer: str, amount: float) -> str:
        """Refund an amount to the customer."""
        ran.append(f"refund {customer} {amount}")
        return f"refunded {amount} to {customer}"

    return Agent(
        name="refund desk",
        instructions="You handle refunds.",
        model=model,
        tools=[guard.guarded(verify_identity), guard.guarded(refund)],
        input_guardrails=[guard.input],
        output_guardrails=[guard.output],
    )


GOOD_RUN: list[Turn] = [
    [("refund", {"customer": "alice", "amount": 20})],
    [("verify_identity", {"customer": "alice"})],
    [("refund", {"customer": "alice", "amount": 20})],
    "Refunded 20 to alice.",
]
LONG_RUN: list[Turn] = [" ".join(["This answer goes on and on."] * 12)]


async def run(
    turns: Sequence[Turn], session: str, *, store: SessionStore | None = None, **options: Any
) -> dict[str, Any]:
    """One guarded run of the scripted ``turns``: what ran, what the model read, the output."""
    guard = AgentGuard(judging_guard(POLICY, store=store), session, **options)
    model, ran = ScriptedModel(turns), []
    agent = build_agent(guard, model, ran)
    config = RunConfig(tracing_disabled=True)
    out: dict[str, Any] = {"ran": ran, "model": model}
    try:
        result = await Runner.run(agent, "Please refund 20 to alice.", run_config=config)
        out["final"] = result.final_output
        out["output_guardrail"] = result.output_guardrail_results[0].output.output_info
    except OutputGuardrailTripwireTriggered as exc:
        out["tripped"] = exc.guardrail_result.output.output_info
    finally:
        guard.guard.close()
    return out


def main() -> None:
    with metered() as meter:
        good = asyncio.run(run(GOOD_RUN, "alice-1"))
        long = asyncio.run(run(LONG_RUN, "alice-2"))
    print("tools that ran:", good["ran"])
    print("what the model read after its first call:", tool_outputs(good["model"].inputs[:2]))
    print("final output:", good["final"])
    print("a long answer tripped the output guardrail:", long["tripped"]["message"])
    print("model calls made by governor:", meter.total.calls)


if __name__ == "__main__":
    main()
