"""Every part of a reply is judged by the checks of its kind: the text beside a tool call by the
text checks (no markup, at most 60 words), plain and streamed, wherever the call comes."""

from __future__ import annotations

from fake_openai_server import FakeOpenAIServer
from security_helpers import answer, arguments, ask, ask_streamed, called, streamed, user

LONG = " ".join(["word"] * 120)
BESIDE = f"<script>alert(1)</script> **Here** is your order. {LONG}"
LOOKUP = ("lookup_order", arguments(order="A-1"))
FALLBACK = "Sorry, I can't help with that."


def test_text_beside_a_tool_call_is_judged_by_the_text_checks(
    base: str, server: FakeOpenAIServer
) -> None:
    server.script("/chat/completions", answer(BESIDE, LOOKUP), answer(BESIDE, LOOKUP))
    reply, body, _ = ask(base, "s1", user("where is my order A-1?"))
    governor = reply.model_extra["governor"]
    assert called(reply) == [] and reply.choices[0].message.content == FALLBACK
    assert {r["constraint"] for r in governor["rejected"]} == {"no_markup", "at_most_60_words"}
    assert "<script>" not in body and "word word" not in body


def test_the_same_call_with_plain_short_text_goes_through(
    base: str, server: FakeOpenAIServer
) -> None:
    server.script("/chat/completions", answer("Let me look that up.", LOOKUP))
    reply, _, _ = ask(base, "s2", user("where is my order A-1?"))
    assert called(reply) == ["lookup_order"]
    assert reply.choices[0].message.content == "Let me look that up."


def test_streamed_a_tool_call_before_the_text_does_not_let_the_text_pass(
    base: str, server: FakeOpenAIServer
) -> None:
    server.script("/chat/completions", streamed(LOOKUP, BESIDE), streamed(LOOKUP, BESIDE))
    text, calls, summary, wire = ask_streamed(base, "s3", user("where is my order A-1?"))
    assert calls == [] and "<script>" not in wire and text == FALLBACK
    assert summary is not None and summary["fallback"] is True


def test_streamed_markup_in_the_last_sentence_before_a_call_is_never_released(
    base: str, server: FakeOpenAIServer
) -> None:
    server.script(
        "/chat/completions",
        streamed("Your order is on its way. ", "It left **today**.", LOOKUP),
    )
    text, calls, summary, wire = ask_streamed(base, "s4", user("where is my order A-1?"))
    assert calls == [] and "**today**" not in wire and "today" not in text
    assert summary is not None and summary["fallback"] is True
    assert text.startswith("Your order is on its way.")  # judged and released before the rest
