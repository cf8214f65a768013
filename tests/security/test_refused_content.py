"""Refused content stays in the audit trail: no part of a refused candidate (its text, a tool
name, its arguments) is in the response's body, headers or stream; the ``governor`` field names
the rule and the kind of violation, and the decision record in the store keeps the candidate."""

from __future__ import annotations

from typing import Any

from fake_openai_server import FakeOpenAIServer
from security_helpers import answer, arguments, ask, ask_streamed, streamed

from governor.guard import Guard

SECRET = "s3cr3t-4111-1111"
READ = [
    {"role": "user", "content": "read my record"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "r1",
                "type": "function",
                "function": {"name": "read_customer_record", "arguments": "{}"},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "r1", "content": f"card {SECRET}"},
    {"role": "user", "content": "thanks"},
]
EMAIL = ("send_email", arguments(to="x@y.z", body=SECRET))


def records_of(guard: Guard, session: str) -> str:
    return repr(guard.store.records(session))  # type: ignore[attr-defined]


def assert_named_not_quoted(governor: dict[str, Any]) -> None:
    refusals = [r for r in governor["rejected"] if r["constraint"] == "confirm_email_after_record"]
    assert refusals
    for refusal in refusals:
        assert refusal == {
            "constraint": "confirm_email_after_record",
            "admissible": False,
            "violation": "rule",
            "deviation": refusal["deviation"],
            "severity": refusal["severity"],
        }


def test_a_refused_call_is_not_in_the_body_or_headers(
    base: str, guard: Guard, server: FakeOpenAIServer
) -> None:
    server.script("/chat/completions", answer(None, EMAIL), answer(None, EMAIL))
    reply, body, headers = ask(base, "c1", READ)
    governor = reply.model_extra["governor"]
    assert reply.choices[0].message.tool_calls is None and governor["fallback"] is True
    for part in (SECRET, "x@y.z"):
        assert part not in body and part not in str(headers)
    assert_named_not_quoted(governor)
    assert "x@y.z" in records_of(guard, "c1")  # the audit trail keeps what was refused


def test_a_refused_call_is_not_in_the_stream(
    base: str, guard: Guard, server: FakeOpenAIServer
) -> None:
    server.script("/chat/completions", streamed("Sending it now.", EMAIL), streamed(EMAIL))
    text, calls, summary, wire = ask_streamed(base, "c2", READ)
    assert calls == [] and summary is not None and summary["fallback"] is True
    assert text.startswith("I did not run that action") and "Sending it now" not in wire
    assert "x@y.z" not in wire and SECRET not in wire
    assert_named_not_quoted(summary)
    assert "x@y.z" in records_of(guard, "c2")


def test_refused_text_is_not_in_the_body(base: str, guard: Guard, server: FakeOpenAIServer) -> None:
    said = f"<b>Your card is {SECRET}</b>"
    server.script("/chat/completions", answer(said), answer(said))
    reply, body, _ = ask(base, "c3", [{"role": "user", "content": "what is my card?"}])
    assert SECRET not in body and reply.model_extra["governor"]["fallback"] is True
    assert SECRET in records_of(guard, "c3")
