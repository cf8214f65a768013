"""governor's middleware on a real LangChain 1.x agent with a scripted chat model, offline.

The example ``examples/langchain_refunds.py`` is loaded and its runs checked, sync and async: a
refund before verify_identity does not run and the model reads an error tool message naming the
rule; after verifying, the refund runs; a long answer becomes the fallback text with the decision
in its metadata; the user's turn and the tools' results are kept in the session; no model call is
made by governor.
"""

from __future__ import annotations

import asyncio
from types import ModuleType

import pytest
from examples_loader import load_example
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, ToolMessage

from governor.guard import MemoryStore
from governor.integrations.langchain import GovernorMiddleware
from governor.integrations.tool_judge import judging_guard
from governor.usage import metered


@pytest.fixture(scope="module")
def example() -> ModuleType:
    return load_example("langchain_refunds.py")


def test_a_refused_call_does_not_run_and_the_model_reads_the_rule(example: ModuleType) -> None:
    store = MemoryStore()
    with metered() as meter:
        out = example.run(example.GOOD_RUN, "s1", store=store)
    assert out["ran"] == ["verify_identity alice", "refund alice 20.0"]
    tools = [m for m in out["messages"] if isinstance(m, ToolMessage)]
    assert tools[0].status == "error" and "rule verify_before_refund" in tools[0].content
    assert tools[0].response_metadata["governor"]["rules"] == ["verify_before_refund"]
    assert [t.status for t in tools[1:]] == ["success", "success"]
    final = out["messages"][-1]
    assert final.content == "Refunded 20 to alice."
    assert final.response_metadata["governor"]["allowed"] is True
    assert meter.total.calls == 0
    saved = store.load("s1")
    assert saved is not None
    kept = [(m["role"], m.get("content")) for m in saved["messages"]]
    assert kept[0] == ("user", "Refund 20 to alice.")
    assert ("tool", "alice is verified") in kept
    assert kept[-1] == ("assistant", "Refunded 20 to alice.")
    calls = [
        m["tool_calls"][0]["function"]["name"] for m in saved["messages"] if m.get("tool_calls")
    ]
    assert calls == ["verify_identity", "refund"]  # the refused call was never committed


def test_a_refused_reply_becomes_the_fallback_text(example: ModuleType) -> None:
    out = example.run(example.LONG_RUN, "s2")
    final = out["messages"][-1]
    assert final.content == "Sorry, I can't do that."
    assert final.response_metadata["governor"]["rules"] == ["short_reply"]


def test_the_async_agent_is_guarded_the_same_way(example: ModuleType) -> None:
    ran: list[str] = []

    def refund(customer: str, amount: float) -> str:
        """Refund an amount to the customer."""
        ran.append(customer)
        return "done"

    guard = judging_guard(example.POLICY)
    agent = create_agent(
        model=example.ScriptedChatModel(
            messages=iter([example.call("refund", 1, customer="bob", amount=5), AIMessage("ok")])
        ),
        tools=[refund],
        middleware=[GovernorMiddleware(guard, lambda context: context["user"])],
    )
    try:
        state = asyncio.run(
            agent.ainvoke({"messages": [{"role": "user", "content": "hi"}]}, context={"user": "u"})
        )
    finally:
        guard.close()
    assert ran == []
    refused = [m for m in state["messages"] if isinstance(m, ToolMessage)]
    assert refused[0].status == "error" and "verify_before_refund" in refused[0].content


def test_the_example_runs(example: ModuleType, capsys: pytest.CaptureFixture[str]) -> None:
    example.main()
    printed = capsys.readouterr().out
    assert "tools that ran: ['verify_identity alice', 'refund alice 20.0']" in printed
    assert "a long answer became: Sorry, I can't do that." in printed
    assert "model calls made by governor: 0" in printed
