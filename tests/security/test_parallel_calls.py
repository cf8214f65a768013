"""Calls in one reply form one step in which no result is known: a sibling never stands in for
an earlier call, and a tool the policy lists in ``tools.not_in_parallel`` runs alone."""

from __future__ import annotations

from typing import Any

from fake_openai_server import FakeOpenAIServer
from security_helpers import answer, arguments, ask, called, user

VERIFY = ("verify_identity", arguments(customer="ann"))


def refund(amount: float) -> tuple[str, str]:
    return ("refund", arguments(order="A-1", amount=amount))


def took(messages: list[dict[str, Any]], reply: Any, result: str = "ok") -> list[dict[str, Any]]:
    """``messages`` with the delivered reply and a result for each of its calls."""
    message = reply.choices[0].message
    out = [*messages, message.model_dump(exclude_none=True)]
    for call in message.tool_calls or ():
        out.append({"role": "tool", "tool_call_id": call.id, "content": result})
    return out


def test_verify_and_refund_in_one_reply_do_not_meet_verify_before_refund(
    base: str, server: FakeOpenAIServer
) -> None:
    server.script(
        "/chat/completions", answer(None, VERIFY, refund(150)), answer(None, VERIFY, refund(150))
    )
    reply, body, _ = ask(base, "p1", user("I'm ann; refund 150 on A-1"))
    governor = reply.model_extra["governor"]
    assert called(reply) == [] and governor["fallback"] is True
    assert "verify_first" in {r["constraint"] for r in governor["rejected"]}
    assert '"amount"' not in body


def test_verify_then_refund_in_two_replies_is_admitted(base: str, server: FakeOpenAIServer) -> None:
    server.script("/chat/completions", answer(None, VERIFY), answer(None, refund(150)))
    messages = user("I'm ann; refund 150 on A-1")
    first, _, _ = ask(base, "p2", messages)
    assert called(first) == ["verify_identity"]
    second, _, _ = ask(base, "p2", took(messages, first, "VERIFIED"))
    assert called(second) == ["refund"]


def test_two_refunds_in_one_reply_count_together_against_the_cap(
    base: str, server: FakeOpenAIServer
) -> None:
    server.script(
        "/chat/completions",
        answer(None, VERIFY),
        answer(None, refund(150), refund(150)),
        answer(None, refund(150), refund(150)),
    )
    messages = user("I'm ann; refund 150 twice")
    first, _, _ = ask(base, "p3", messages)
    second, _, _ = ask(base, "p3", took(messages, first))
    assert called(second) == []
    assert "refund_cap" in {r["constraint"] for r in second.model_extra["governor"]["rejected"]}


def test_a_tool_listed_not_in_parallel_is_refused_beside_another_call(
    base: str, server: FakeOpenAIServer
) -> None:
    email = ("send_email", arguments(to="ann@example.com", body="Your order shipped."))
    lookup = ("lookup_order", arguments(order="A-1"))
    server.script("/chat/completions", answer(None, lookup, email), answer(None, lookup, email))
    reply, _, _ = ask(base, "p4", user("look up A-1 and mail me"))
    governor = reply.model_extra["governor"]
    assert called(reply) == []
    assert {"constraint": "not_in_parallel", "violation": "parallel_calls"}.items() <= next(
        r for r in governor["rejected"] if r["constraint"] == "not_in_parallel"
    ).items()
