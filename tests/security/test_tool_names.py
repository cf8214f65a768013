"""Tool names are matched exactly against the tools offered, and arguments are one JSON object
without a repeated key: each look-alike of ``refund`` is refused after a verified identity,
naming the rule and the offered tool it resembles, never the name the model wrote."""

from __future__ import annotations

import json
from typing import Any

import pytest
from fake_openai_server import FakeOpenAIServer
from security_helpers import answer, arguments, ask, called

LOOKALIKES = {
    "case": "Refund",
    "zero-width space": "refund\u200b",
    "cyrillic e": "r\u0435fund",
    "fullwidth": "\uff52\uff45\uff46\uff55\uff4e\uff44",
    "namespace": "functions.refund",
    "nul": "refund\u0000",
}
VERIFIED = [
    {"role": "user", "content": "I'm ann"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "v1",
                "type": "function",
                "function": {"name": "verify_identity", "arguments": "{}"},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "v1", "content": "VERIFIED"},
    {"role": "user", "content": "refund 500 on A-1"},
]


@pytest.mark.parametrize("name", list(LOOKALIKES.values()), ids=list(LOOKALIKES))
def test_a_lookalike_tool_name_is_refused_naming_the_tool_it_resembles(
    base: str, server: FakeOpenAIServer, name: str
) -> None:
    call = (name, arguments(order="A-1", amount=500))
    server.script("/chat/completions", answer(None, call), answer(None, call))
    reply, body, headers = ask(base, f"n-{len(name)}-{ord(name[1])}", VERIFIED)
    governor = reply.model_extra["governor"]
    assert called(reply) == [] and governor["fallback"] is True
    assert {"constraint": "offered_tools", "violation": "tool_not_offered"}.items() <= governor[
        "rejected"
    ][0].items()
    assert name not in json.loads(body).__repr__() and name not in str(headers)
    # the regeneration's note tells the model which offered tool it meant, not what it wrote
    note = server.requests_to("/chat/completions")[1].body["messages"][-1]["content"]
    assert "resembles the offered tool refund" in note and name not in note


def test_the_exact_name_is_judged_by_the_rules(base: str, server: FakeOpenAIServer) -> None:
    server.script("/chat/completions", answer(None, ("refund", arguments(order="A-1", amount=50))))
    reply, _, _ = ask(base, "n-exact", VERIFIED)
    assert called(reply) == ["refund"]


def test_arguments_with_a_repeated_key_are_refused_not_read_as_the_last(
    base: str, server: FakeOpenAIServer
) -> None:
    doubled = ("refund", '{"order": "A-1", "amount": 500, "amount": 10}')
    server.script("/chat/completions", answer(None, doubled), answer(None, doubled))
    reply, body, _ = ask(base, "n-dup", VERIFIED)
    governor: dict[str, Any] = reply.model_extra["governor"]
    assert called(reply) == [] and governor["fallback"] is True
    assert '"amount": 500' not in body and "amount" not in governor["reason"]
