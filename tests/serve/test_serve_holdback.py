"""Incremental streaming with a hold-back buffer: the upstream streams, the service releases each
chunk only once checked, and no refused text ever reaches the client."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
from fake_openai_server import FakeOpenAIServer
from serve_helpers import TOOLS, tool_call
from stream_helpers import (
    FALLBACK,
    NO_MARKUP,
    min_words,
    read_events,
    stream_guard,
    streamed,
    words,
)

from governor.guard import Guard
from governor.serve import create_app
from governor.serve.local import serving

CLEAN = "Hello there, friend. This reply is fine and plain. It ends here."


@pytest.fixture
def make(tmp_path: Path, server: FakeOpenAIServer) -> Iterator[Any]:
    """Serve a streaming guard with the given text checks; yields a maker of base urls."""
    made: list[Guard] = []

    def serve(overlays: list[dict[str, Any]], **stream: Any) -> Guard:
        guard = stream_guard(tmp_path, server.url, overlays, **stream)
        made.append(guard)
        return guard

    yield serve
    for guard in made:
        guard.backend.close()  # type: ignore[attr-defined]


def post(url: str, messages: list[Any], session: str, **more: Any) -> httpx.Response:
    body = {
        "model": "m",
        "messages": messages,
        "metadata": {"governor_session": session},
        "stream": True,
        **more,
    }
    return httpx.post(f"{url}/v1/chat/completions", json=body, timeout=10)


def saved_reply(guard: Guard, session: str, within_s: float = 5.0) -> str:
    """The last assistant message the session's trajectory committed: a streamed reply is
    committed just after its ``[DONE]`` went out, so a client may read it a moment before."""
    deadline = time.monotonic() + within_s
    while True:
        messages = guard.session(session).state.messages
        said = [m.content or "" for m in messages if m.role == "assistant"]
        if said or time.monotonic() > deadline:
            return said[-1] if said else ""
        time.sleep(0.02)


def test_the_openai_client_reads_chunks_released_while_the_upstream_streams(
    make: Any, server: FakeOpenAIServer
) -> None:
    guard = make([NO_MARKUP], chunk_tokens=4)
    server.script("/chat/completions", streamed(*words(CLEAN)))
    with serving(create_app(guard)) as url:
        c = openai.OpenAI(base_url=f"{url}/v1", api_key="x", max_retries=0)
        stream = c.chat.completions.create(
            model="m",
            messages=[{"role": "user", "content": "hi"}],
            metadata={"governor_session": "s"},
            stream=True,
        )
        chunks = list(stream)
        reply = saved_reply(guard, "s")
    pieces = [ch.choices[0].delta.content for ch in chunks if ch.choices[0].delta.content]
    assert "".join(pieces) == CLEAN and len(pieces) >= 3
    governor = chunks[-1].model_extra["governor"]
    assert chunks[-1].choices[0].finish_reason == "stop" and governor["kind"] == "execute"
    released = governor["stream"]["chunks"]
    assert len(released) >= 2 and all(c["admitted"] for c in released)
    assert governor["stream"]["refused"] is None
    assert server.requests_to("/chat/completions")[0].body["stream"] is True
    assert reply == CLEAN


@pytest.mark.parametrize(
    "text",
    [
        "All good so far. Still all good here. And then it ends with <script>",
        "A fine start to this. Then a middle with <b> inside it and more words after. End.",
        "One two three four five six <i> seven eight nine ten eleven twelve.",
    ],
    ids=["last-chunk", "mid-sentence", "no-sentence-end"],
)
def test_forbidden_text_never_reaches_the_client(
    make: Any, server: FakeOpenAIServer, text: str
) -> None:
    guard = make([NO_MARKUP], chunk_tokens=3)
    # the first chunk passes, so text is out before the refusal: no regeneration, the fallback
    server.script("/chat/completions", streamed(*words(text)), streamed(*words(CLEAN)))
    with serving(create_app(guard)) as url:
        response = post(url, [{"role": "user", "content": "hi"}], "f")
    texts, calls, summary, done = read_events(response.text)
    assert not any("<" in t for t in texts) and calls == [] and done
    said = "".join(texts)
    assert said.endswith(FALLBACK) and len(said) > len(FALLBACK)
    assert text.startswith(said.removesuffix(FALLBACK).rstrip())
    assert summary is not None and summary["kind"] == "fallback"
    refused, chunks = summary["stream"]["refused"], summary["stream"]["chunks"]
    assert refused["by"] == ["no_markup"]
    assert refused["chunk"] == sum(c["admitted"] for c in chunks)  # the first chunk held back
    assert len(server.requests_to("/chat/completions")) == 1  # no regeneration once text is out
    assert saved_reply(guard, "f") == said  # the trajectory holds what the client saw
    records = guard.store.records("f")  # persisted like every decision, with the stream's part
    (record,) = [r for r in records if r["type"] == "decision"]
    assert records[-1]["type"] == "delivered"  # committed once wholly sent
    assert record["extra"]["reply"]["content"] == said
    assert record["extra"]["stream"]["refused"] == refused


def test_a_refused_first_chunk_regenerates_before_anything_is_released(
    make: Any, server: FakeOpenAIServer
) -> None:
    guard = make([NO_MARKUP])
    server.script("/chat/completions", streamed(*words("<b>Bold</b> start. Then more.")), streamed(*words(CLEAN)))  # fmt: skip
    with serving(create_app(guard)) as url:
        response = post(url, [{"role": "user", "content": "hi"}], "r")
    texts, _, summary, done = read_events(response.text)
    assert "".join(texts) == CLEAN and done
    assert summary is not None and summary["regenerations"] == 1 and summary["kind"] == "execute"
    assert len(server.requests_to("/chat/completions")) == 2


def test_tool_call_arguments_are_held_until_the_whole_call_is_judged(
    make: Any, server: FakeOpenAIServer
) -> None:
    guard = make([NO_MARKUP])
    read = tool_call("c1", "read_secret", key="db")
    args = ['{"to": "x@y.z", ', '"body": "the secret ', 's3cr3t"}']
    said = "Sending it now. Here goes."
    email = streamed(*words(said), calls=(("c2", "send_email", args),))
    server.script("/chat/completions", read, email)
    messages: list[Any] = [{"role": "user", "content": "read the secret"}]
    with serving(create_app(guard)) as url:
        first = post(url, messages, "t", tools=TOOLS)
        _, calls, _, _ = read_events(first.text)
        assert [c["function"]["name"] for c in calls] == ["read_secret"]
        call = {k: v for k, v in calls[0].items() if k != "index"}
        messages += [
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "c1", "content": "s3cr3t"},
            {"role": "user", "content": "email it"},
        ]
        second = post(url, messages, "t", tools=TOOLS)
    texts, calls, summary, done = read_events(second.text)
    assert calls == [] and "s3cr3t" not in second.text.split('"governor"')[0] and done
    # the text before the call passed the text checks and went out; the call never did, and
    # once text is out a refusal ends in the fallback (no regeneration)
    refusal = 'I did not run that action: it would break the rule "never call send_email after read_secret".'
    assert "".join(texts) == "Sending it now. " + refusal
    assert summary is not None and summary["fallback"] is True and summary["regenerations"] == 0
    assert summary["stream"]["refused"]["by"] == ["no_exfiltration"]
    assert len(server.requests_to("/chat/completions")) == 2


def test_a_tool_call_that_passes_is_released_in_one_chunk(
    make: Any, server: FakeOpenAIServer
) -> None:
    guard = make([NO_MARKUP])
    args = ['{"key"', ': "db"}']
    server.script("/chat/completions", streamed(calls=(("c1", "read_secret", args),)))
    with serving(create_app(guard)) as url:
        response = post(url, [{"role": "user", "content": "read it"}], "o", tools=TOOLS)
    texts, calls, summary, _ = read_events(response.text)
    assert texts == [] and len(calls) == 1 and calls[0]["function"]["arguments"] == '{"key": "db"}'
    assert summary is not None and summary["kind"] == "execute"


def test_an_upstream_that_dies_mid_stream_ends_with_the_fallback(
    make: Any, server: FakeOpenAIServer
) -> None:
    guard = make([NO_MARKUP], chunk_tokens=2)
    text = "This part arrives in time. This part never does arrive here at all."
    server.script("/chat/completions", streamed(*words(text), truncate=True))
    with serving(create_app(guard)) as url:
        response = post(url, [{"role": "user", "content": "hi"}], "d")
    texts, _, summary, done = read_events(response.text)
    said = "".join(texts)
    assert said.endswith(FALLBACK) and "never" not in said and done
    assert summary is not None and summary["fallback"] is True and summary["errors"]
    assert saved_reply(guard, "d") == said


def test_a_reply_admitted_on_every_prefix_can_fail_a_whole_reply_check_at_the_end(
    make: Any, server: FakeOpenAIServer
) -> None:
    guard = make([NO_MARKUP, min_words(12)])
    server.script("/chat/completions", streamed(*words("Yes. Sure thing. Fine by me. Last one.")))
    with serving(create_app(guard)) as url:
        response = post(url, [{"role": "user", "content": "hi"}], "w")
    texts, _, summary, _ = read_events(response.text)
    said = "".join(texts)
    assert said.startswith("Yes. ") and "Last one." not in said and said.endswith(FALLBACK)
    assert summary is not None and summary["stream"]["refused"]["by"] == ["long_enough"]
    assert all(c["admitted"] for c in summary["stream"]["chunks"])


def test_a_check_that_declares_no_prefix_judgement_holds_the_whole_reply(
    make: Any, server: FakeOpenAIServer
) -> None:
    bounded = {**min_words(2), "name": "between", "bounds": {"min": 2, "max": 80}}
    guard = make([bounded])
    server.script("/chat/completions", streamed(*words(CLEAN)))
    with serving(create_app(guard)) as url:
        response = post(url, [{"role": "user", "content": "hi"}], "h")
    texts, _, summary, _ = read_events(response.text)
    assert "".join(texts) == CLEAN
    assert summary is not None and summary["stream"]["chunks"] == []  # nothing judged early
    assert response.headers["X-Governor-Decision"] == "execute"  # judged before the first byte


def test_a_client_that_stops_reading_leaves_a_session_that_goes_on(
    make: Any, server: FakeOpenAIServer
) -> None:
    guard = make([NO_MARKUP], chunk_tokens=2)
    server.script("/chat/completions", streamed(*words(CLEAN), event_s=0.02))
    user: list[Any] = [{"role": "user", "content": "hi"}]
    with serving(create_app(guard)) as url:
        body = {
            "model": "m",
            "messages": user,
            "metadata": {"governor_session": "gone"},
            "stream": True,
        }
        with httpx.stream("POST", f"{url}/v1/chat/completions", json=body, timeout=10) as r:
            next(r.iter_lines())  # the first event, then the client goes away
        # the step still ends and commits the whole reply; the next call waits for it
        later = [*user, {"role": "assistant", "content": CLEAN}, {"role": "user", "content": "ok"}]
        body = {"model": "m", "messages": later, "metadata": {"governor_session": "gone"}}
        assert httpx.post(f"{url}/v1/chat/completions", json=body, timeout=10).status_code == 200
    assert [m.content for m in guard.session("gone").state.messages][:3] == ["hi", CLEAN, "ok"]
