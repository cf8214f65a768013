"""governor's guardrails on a real OpenAI Agents SDK agent with a scripted model, offline.

The example ``examples/openai_agents_refunds.py`` is loaded and its runs checked: a refund before
verify_identity does not run and the model reads the refusal naming the rule; after verifying,
the refund runs; a long answer pulls the output guardrail's tripwire; ``on_refusal="raise"``
halts the run; the user's turn and the tools' outputs are kept in the session; no model call is
made by governor.
"""

from __future__ import annotations

import asyncio
from types import ModuleType

import pytest
from agents import ToolInputGuardrailTripwireTriggered
from examples_loader import load_example

from governor.guard import MemoryStore
from governor.usage import metered


@pytest.fixture(scope="module")
def example() -> ModuleType:
    return load_example("openai_agents_refunds.py")


def test_a_refused_call_does_not_run_and_the_model_reads_the_rule(example: ModuleType) -> None:
    store = MemoryStore()
    with metered() as meter:
        out = asyncio.run(example.run(example.GOOD_RUN, "s1", store=store))
    assert out["ran"] == ["verify_identity alice", "refund alice 20.0"]
    refusal = example.tool_outputs(out["model"].inputs[:2])
    assert len(refusal) == 1 and "rule verify_before_refund" in refusal[0]
    assert out["final"] == "Refunded 20 to alice."
    assert out["output_guardrail"]["allowed"] is True
    assert meter.total.calls == 0
    saved = store.load("s1")
    assert saved is not None
    kept = [(m["role"], m.get("content")) for m in saved["messages"]]
    assert kept[0] == ("user", "Please refund 20 to alice.")  # the input guardrail's record
    assert ("tool", "alice is verified") in kept  # the tool output guardrail's record
    assert kept[-1] == ("assistant", "Refunded 20 to alice.")  # the admitted final output
    calls = [
        m["tool_calls"][0]["function"]["name"] for m in saved["messages"] if m.get("tool_calls")
    ]
    assert calls == ["verify_identity", "refund"]  # the refused call was never committed


def test_a_long_answer_pulls_the_output_tripwire(example: ModuleType) -> None:
    out = asyncio.run(example.run(example.LONG_RUN, "s2"))
    assert "final" not in out
    assert out["tripped"]["allowed"] is False
    assert out["tripped"]["rules"] == ["short_reply"]


def test_on_refusal_raise_halts_the_run(example: ModuleType) -> None:
    with pytest.raises(ToolInputGuardrailTripwireTriggered) as caught:
        asyncio.run(example.run(example.GOOD_RUN, "s3", on_refusal="raise"))
    assert caught.value.output.output_info["rules"] == ["verify_before_refund"]


def test_the_example_runs(example: ModuleType, capsys: pytest.CaptureFixture[str]) -> None:
    example.main()
    printed = capsys.readouterr().out
    assert "tools that ran: ['verify_identity alice', 'refund alice 20.0']" in printed
    assert "model calls made by governor: 0" in printed
