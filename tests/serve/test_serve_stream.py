"""Streaming releases only checked text: the admitted reply in sentence chunks, or the fallback."""

from __future__ import annotations

import asyncio
from typing import Any

import openai
from fake_openai_server import FakeOpenAIServer
from serve_helpers import TOOLS, text, tool_call

from governor.guard.release import sentences


def collect(chunks: Any) -> tuple[list[str], list[Any], list[Any]]:
    pieces, calls, finals = [], [], []
    for chunk in chunks:
        choice = chunk.choices[0]
        if choice.delta.content:
            pieces.append(choice.delta.content)
        if choice.delta.tool_calls:
            calls += choice.delta.tool_calls
        if choice.finish_reason:
            finals.append(chunk)
    return pieces, calls, finals


def test_sentences_cut_at_sentence_ends_and_join_back() -> None:
    text = "Hello there. How are you?\nFine!  Good"
    assert sentences(text) == ["Hello there. ", "How are you?\n", "Fine!  ", "Good"]
    assert "".join(sentences(text)) == text and sentences("") == []


def test_an_admitted_reply_streams_in_sentences_then_the_summary(
    base: str, server: FakeOpenAIServer
) -> None:
    said = "Sure. I can help with that! What do you need?"
    server.script("/chat/completions", text(said))
    c = openai.OpenAI(base_url=f"{base}/v1", api_key="x", max_retries=0)
    stream = c.chat.completions.create(
        model="m",
        messages=[{"role": "user", "content": "hi"}],
        metadata={"governor_session": "s"},
        stream=True,
    )
    pieces, calls, finals = collect(stream)
    assert "".join(pieces) == said and len(pieces) == 3 and calls == []
    (last,) = finals
    assert last.choices[0].finish_reason == "stop"
    assert last.model_extra["governor"]["kind"] == "execute"


def test_a_refused_reply_streams_the_fallback_and_nothing_unchecked(
    base: str, server: FakeOpenAIServer
) -> None:
    leak = "Emailing the secret s3cr3t now."
    server.script(
        "/chat/completions",
        tool_call("c1", "read_secret", key="db"),
        *(tool_call(f"c{i}", "send_email", leak, to="x", body="s3cr3t") for i in (2, 3, 4)),
    )
    c = openai.OpenAI(base_url=f"{base}/v1", api_key="x", max_retries=0)
    messages: list[Any] = [{"role": "user", "content": "read the secret"}]
    first = c.chat.completions.create(
        model="m", messages=messages, tools=TOOLS, metadata={"governor_session": "a"}
    )  # type: ignore[arg-type]
    call = first.choices[0].message.tool_calls[0]  # type: ignore[index]
    messages += [
        first.choices[0].message.model_dump(exclude_none=True),
        {"role": "tool", "tool_call_id": call.id, "content": "s3cr3t"},
        {"role": "user", "content": "email it"},
    ]
    with c.chat.completions.with_streaming_response.create(
        model="m",
        messages=messages,
        tools=TOOLS,
        metadata={"governor_session": "a"},
        stream=True,  # type: ignore[arg-type]
    ) as response:
        raw = "".join(response.iter_text())
    assert "s3cr3t" not in raw.split('"governor"')[0] and leak not in raw
    assert '"tool_calls":[' not in raw.split('"governor"')[0]
    assert raw.rstrip().endswith("data: [DONE]")
    stream = c.chat.completions.create(
        model="m",
        messages=[{"role": "user", "content": "x"}],
        metadata={"governor_session": "b"},
        stream=True,
    )
    collect(stream)  # a second stream on another session works after the refusal


def test_a_refused_reply_streams_the_fallback_text(base: str, server: FakeOpenAIServer) -> None:
    server.script(
        "/chat/completions",
        *(tool_call(f"t{i}", "transfer_funds", "Sending 10 now.", amount=10) for i in range(3)),
    )

    async def run() -> tuple[list[str], list[Any], list[Any]]:
        async with openai.AsyncOpenAI(base_url=f"{base}/v1", api_key="x", max_retries=0) as c:
            stream = await c.chat.completions.create(
                model="m",
                messages=[{"role": "user", "content": "send ann 10"}],
                tools=TOOLS,  # type: ignore[arg-type]
                metadata={"governor_session": "async"},
                stream=True,
            )
            return collect([chunk async for chunk in stream])

    pieces, calls, finals = asyncio.run(run())
    assert "".join(pieces) == (
        'I did not run that action: it would break the rule "call verify_identity before'
        ' transfer_funds".'
    )
    assert calls == [] and finals[0].choices[0].finish_reason == "stop"
    assert finals[0].model_extra["governor"]["fallback"] is True
