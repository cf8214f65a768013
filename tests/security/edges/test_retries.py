"""Retries and disconnects: a session survives what clients do in normal use (docs/security.md,
"Retries, disconnects and policy changes"). Through the official ``openai`` client against
``governor serve`` in front of the scripted upstream."""

from __future__ import annotations

import time
from typing import Any

import openai
import pytest
from edge_helpers import ALICE_KEY, admin_get, client, owner_prefix
from fake_openai_server import FakeOpenAIServer, Reply
from serve_helpers import answer, text

HI = [{"role": "user", "content": "hi"}]


def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    return {"object": "chat.completion.chunk", "model": "fake-model", "choices": [choice]}


def slow_stream(*sentences: str, event_s: float) -> Reply:
    """An upstream answer streamed a sentence at a time, ``event_s`` apart."""
    events: list[Any] = [chunk({"role": "assistant", "content": ""})]
    events += [chunk({"content": s}) for s in sentences]
    events += [chunk({}, "stop"), "[DONE]"]
    return Reply(events=tuple(events), event_s=event_s)


def test_the_same_request_sent_again_gets_the_committed_reply(
    base: str, server: FakeOpenAIServer
) -> None:
    server.script("/chat/completions", text("Your order ships today."))
    alice = client(base, ALICE_KEY)
    first = alice.chat.completions.create(
        model="m", messages=HI, metadata={"governor_session": "s"}
    )  # type: ignore[arg-type]
    again = alice.chat.completions.create(
        model="m", messages=HI, metadata={"governor_session": "s"}
    )  # type: ignore[arg-type]
    assert again.choices[0].message.content == first.choices[0].message.content
    assert again.model_extra["governor"]["replayed"] is True
    assert len(server.requests_to("/chat/completions")) == 1
    assert admin_get(base, owner_prefix(ALICE_KEY) + "s").json()["t"] == 1


def test_the_clients_own_retry_after_a_timeout_gets_the_committed_reply(
    base: str, server: FakeOpenAIServer
) -> None:
    slow = answer({"role": "assistant", "content": "Done, slowly."}, "stop")
    server.script("/chat/completions", Reply(body=slow.body, delay_s=1.5))
    alice = client(base, ALICE_KEY, timeout=0.8, max_retries=2)
    reply = alice.chat.completions.create(
        model="m", messages=HI, metadata={"governor_session": "retry"}
    )  # type: ignore[arg-type]
    assert reply.choices[0].message.content == "Done, slowly."
    assert len(server.requests_to("/chat/completions")) == 1  # the model ran once
    shown = admin_get(base, owner_prefix(ALICE_KEY) + "retry").json()
    assert shown["t"] == 1 and len(shown["messages"]) == 2


def test_an_idempotency_key_names_one_request(base: str, server: FakeOpenAIServer) -> None:
    server.script("/chat/completions", text("Refund filed."))
    alice = client(base, ALICE_KEY)
    key = {"Idempotency-Key": "refund-42"}
    first = alice.chat.completions.create(
        model="m", messages=HI, metadata={"governor_session": "k"}, extra_headers=key
    )  # type: ignore[arg-type]
    again = alice.chat.completions.create(
        model="m", messages=HI, metadata={"governor_session": "k"}, extra_headers=key
    )  # type: ignore[arg-type]
    assert again.choices[0].message.content == first.choices[0].message.content
    other = [{"role": "user", "content": "something else"}]
    with pytest.raises(openai.BadRequestError) as err:
        alice.chat.completions.create(
            model="m", messages=other, metadata={"governor_session": "k"}, extra_headers=key
        )  # type: ignore[arg-type]
    assert "Idempotency-Key" in err.value.message
    assert len(server.requests_to("/chat/completions")) == 1


def test_a_stream_the_client_dropped_is_not_committed_and_the_next_history_decides(
    base: str, server: FakeOpenAIServer
) -> None:
    sentences = ("I refunded 150. ", "It is on your card. ", "Anything else? ", "Bye now.")
    server.script("/chat/completions", slow_stream(*sentences, event_s=0.4))
    alice = client(base, ALICE_KEY)
    stream = alice.chat.completions.create(
        model="m", messages=HI, metadata={"governor_session": "drop"}, stream=True
    )  # type: ignore[arg-type]
    seen = ""
    for part in stream:
        seen += part.choices[0].delta.content or "" if part.choices else ""
        if "refunded" in seen:
            break
    stream.close()  # the client goes away mid-reply
    stored = owner_prefix(ALICE_KEY) + "drop"
    for _ in range(50):  # the service notices when it writes the next chunk
        records = admin_get(base, stored).json().get("decisions")
        if records and records[-1]["type"] == "not_delivered":
            break
        time.sleep(0.1)
    shown = admin_get(base, stored).json()
    assert shown["t"] == 0  # nothing committed: the client did not get the whole reply
    assert shown["decisions"][-1]["type"] == "not_delivered"
    # the client goes on without that reply: its history decides
    server.script("/chat/completions", text("Sure."))
    more = [*HI, {"role": "user", "content": "hello?"}]
    reply = alice.chat.completions.create(
        model="m", messages=more, metadata={"governor_session": "drop"}
    )  # type: ignore[arg-type]
    assert reply.choices[0].message.content == "Sure."


def test_a_stream_wholly_sent_is_committed(base: str, server: FakeOpenAIServer) -> None:
    server.script("/chat/completions", slow_stream("Hello there. ", "All set.", event_s=0.01))
    alice = client(base, ALICE_KEY)
    stream = alice.chat.completions.create(
        model="m", messages=HI, metadata={"governor_session": "whole"}, stream=True
    )  # type: ignore[arg-type]
    said = "".join((p.choices[0].delta.content or "") for p in stream if p.choices)
    assert said == "Hello there. All set."
    # the commit follows the hand-over of [DONE], so it may land just after the client read it
    deadline = time.monotonic() + 10
    while (shown := admin_get(base, owner_prefix(ALICE_KEY) + "whole").json())["t"] == 0:
        assert time.monotonic() < deadline, "the wholly sent stream was never committed"
        time.sleep(0.05)
    assert shown["t"] == 1 and shown["messages"][-1]["content"] == said
    assert [r["type"] for r in shown["decisions"]] == ["decision", "delivered"]
