"""governor's middleware on a LangChain 1.x agent, offline: a scripted chat model, real LangChain.

The agent has two tools, ``verify_identity`` and ``refund``; the policy
(``examples/policies/refunds.yaml``) says to verify before a refund, caps one refund at 500 and
keeps text replies to 40 words. The scripted model first tries to refund straight away: the
middleware refuses the call (the tool does not run) and the model reads an error tool message
naming the rule; it verifies, refunds, and answers. A second run answers at length: the reply is
replaced by the policy's fallback text.

Run: ``pip install -e '.[langchain]'`` then ``python examples/langchain_refunds.py``. A real agent
passes its own chat model instead of :class:`ScriptedChatModel`; the middleware stays the same.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import tool

from governor.guard import SessionStore
from governor.integrations.langchain import GovernorMiddleware
from governor.integrations.tool_judge import judging_guard
from governor.usage import metered

POLICY = Path(__file__).resolve().parent / "policies" / "refunds.yaml"


class ScriptedChatModel(GenericFakeChatModel):
    """LangChain's fake chat model (the scripted replies in order), with tools bound as-is."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self


def call(name: str, n: int, **args: Any) -> AIMessage:
    """A scripted reply that calls one tool."""
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": f"call_{n}"}])


GOOD_RUN = [
    call("refund", 1, customer="alice", amount=20),
    call("verify_identity", 2, customer="alice"),
    call("refund", 3, customer="alice", amount=20),
    AIMessage(content="Refunded 20 to alice."),
]
LONG_RUN = [AIMessage(content=" ".join(["This answer goes on and on."] * 12))]


def run(
    replies: Sequence[AIMessage], session: str, *, store: SessionStore | None = None
) -> dict[str, Any]:
    """One guarded run of the scripted ``replies``: what ran and the messages of the run."""
    ran: list[str] = []

    @tool
    def verify_identity(customer: str) -> str:
        """Verify the customer's identity."""
        ran.append(f"verify_identity {customer}")
        return f"{customer} is verified"

    @tool
    def refund(customer: str, amount: float) -> str:
        """Refund an amount to the customer."""
        ran.append(f"refund {customer} {amount}")
        return f"refunded {amount} to {customer}"

    guard = judging_guard(POLICY, store=store)
    try:
        agent = create_agent(
            model=ScriptedChatModel(messages=iter(replies)),
            tools=[verify_identity, refund],
            middleware=[GovernorMiddleware(guard, session)],
        )
        state = agent.invoke({"messages": [{"role": "user", "content": "Refund 20 to alice."}]})
    finally:
        guard.close()
    return {"ran": ran, "messages": state["messages"]}


def main() -> None:
    with metered() as meter:
        good = run(GOOD_RUN, "alice-1")
        long = run(LONG_RUN, "alice-2")
    print("tools that ran:", good["ran"])
    refused = [
        m.content for m in good["messages"] if isinstance(m, ToolMessage) and m.status == "error"
    ]
    print("what the model read after its first call:", refused)
    print("final answer:", good["messages"][-1].content)
    print("a long answer became:", long["messages"][-1].content)
    print("model calls made by governor:", meter.total.calls)


if __name__ == "__main__":
    main()
