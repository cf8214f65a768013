"""Text checks resist evasion: markup written with look-alikes, invisible characters, entities or
Markdown structure is markup, and a reply of 3,000 emoji or one 5,000-character token is over 60
words."""

from __future__ import annotations

import pytest
from fake_openai_server import FakeOpenAIServer
from security_helpers import answer, ask, user

FALLBACK = "Sorry, I can't help with that."
MARKUP = {
    "fullwidth tag": "Your order \uff1cb\uff1eshipped\uff1c/b\uff1e today.",
    "zero-width inside a tag": "Your order <\u200bb>shipped</\u200bb> today.",
    "html entities": "Your order &lt;b&gt;shipped&lt;/b&gt; today.",
    "list": "Your order:\n- shipped today\n- arrives Friday",
    "table": "| order | status |\n|---|---|\n| A-1 | shipped |",
    "inline code": "Your order `A-1` shipped today.",
    "blockquote": "> Your order shipped today.",
}
LONG = {"3,000 emoji": "\U0001f600" * 3000, "one 5,000-character token": "a" * 5000}


@pytest.mark.parametrize("text", list(MARKUP.values()), ids=list(MARKUP))
def test_disguised_markup_is_refused(base: str, server: FakeOpenAIServer, text: str) -> None:
    server.script("/chat/completions", answer(text), answer(text))
    reply, _, _ = ask(base, "e-markup", user("where is my order?"))
    assert reply.choices[0].message.content == FALLBACK
    assert "no_markup" in {r["constraint"] for r in reply.model_extra["governor"]["rejected"]}


@pytest.mark.parametrize("text", list(LONG.values()), ids=list(LONG))
def test_long_tokens_and_emoji_runs_are_over_60_words(
    base: str, server: FakeOpenAIServer, text: str
) -> None:
    server.script("/chat/completions", answer(text), answer(text))
    reply, _, _ = ask(base, "e-long", user("say something"))
    assert reply.choices[0].message.content == FALLBACK
    rejected = {r["constraint"] for r in reply.model_extra["governor"]["rejected"]}
    assert "at_most_60_words" in rejected


def test_a_short_plain_reply_passes(base: str, server: FakeOpenAIServer) -> None:
    server.script("/chat/completions", answer("Your order A-1 shipped today; it arrives Friday."))
    reply, _, _ = ask(base, "e-plain", user("where is my order?"))
    assert reply.choices[0].message.content == "Your order A-1 shipped today; it arrives Friday."
