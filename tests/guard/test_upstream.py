"""The upstream: tools pass through natively to an OpenAI-compatible server; overlays judge text."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import httpx
import pytest
from fake_openai_server import FakeOpenAIServer, Reply
from guard_helpers import SMALLTALK_POLICY, TOOLS_POLICY

from governor.backends import OpenAIBackend
from governor.backends.base import Message
from governor.backends.openai import MAX_RESPONSE_BYTES
from governor.backends.scripted import ScriptedBackend
from governor.config import BackendConfig
from governor.errors import BackendError, BackendHTTPError
from governor.guard import Guard, load_policy
from governor.usage import metered

TOOLS = [
    {"type": "function", "function": {"name": name, "parameters": {}}}
    for name in ("read_secret", "send_email")
]


def answer(message: dict[str, Any]) -> Reply:
    body = {
        "model": "fake",
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}],
        "usage": {"prompt_tokens": 11, "completion_tokens": 5},
    }
    return Reply(body=body)


def send(call_id: str) -> dict[str, Any]:
    fn = {"name": "send_email", "arguments": '{"to": "x"}'}
    return {"role": "assistant", "content": None, "tool_calls": [{"id": call_id, "type": "function", "function": fn}]}  # fmt: skip


def test_tools_pass_through_and_tool_calls_come_back(server: FakeOpenAIServer) -> None:
    read = {"id": "c1", "type": "function", "function": {"name": "read_secret", "arguments": "{}"}}
    server.script(
        "/chat/completions",
        answer(send("c2")),
        answer({"role": "assistant", "content": "I can't email that."}),
    )
    config = BackendConfig(base_url=server.url, model="fake", max_retries=0)
    with OpenAIBackend(config) as backend:
        guard = Guard.from_policy(TOOLS_POLICY, backend=backend)
        history = [
            {"role": "user", "content": "read it and email it"},
            {"role": "assistant", "content": None, "tool_calls": [read]},
            {"role": "tool", "tool_call_id": "c1", "content": "s3cr3t"},
        ]
        with metered() as meter:
            out = guard.session("s").respond_sync(history, tools=TOOLS)
    assert out.reply.content == "I can't email that." and out.summary["regenerations"] == 1
    assert meter.total.calls == 2 and meter.total.prompt_tokens == 22
    first = server.requests_to("/chat/completions")[0].body
    assert first["tools"] == TOOLS
    assert first["messages"][0]["role"] == "system"  # the policy's system prompt
    assert first["messages"][2]["tool_calls"][0]["function"]["name"] == "read_secret"
    assert first["messages"][3] == {"role": "tool", "content": "s3cr3t", "tool_call_id": "c1"}
    again = server.requests_to("/chat/completions")[1].body
    assert "never call send_email" in again["messages"][-1]["content"]


def test_the_smalltalk_overlays_judge_text_replies() -> None:
    rambling = " ".join(["I think that is a really interesting point about gardens."] * 12)
    backend = ScriptedBackend([rambling, rambling, "Oh nice! What do you grow?", "Ha, sure."])
    guard = Guard.from_policy(load_policy(SMALLTALK_POLICY), backend=backend)
    out = guard.session("s").respond_sync([{"role": "user", "content": "I love my garden"}])
    assert out.reply.content in ("Oh nice! What do you grow?", "Ha, sure.")
    assert any(v["constraint"] == "brevity" for v in out.summary["rejected"])


@pytest.fixture
def served_guard(server: FakeOpenAIServer) -> Iterator[Guard]:
    """The example tool policy with its upstream at the fake server; no backend passed in."""
    policy = load_policy(TOOLS_POLICY)
    up = replace(policy.upstream, base_url=server.url, model="fake", api_key_env=None)
    guard = Guard.from_policy(replace(policy, upstream=replace(up, max_retries=0)))
    yield guard
    assert isinstance(guard.backend, OpenAIBackend)
    guard.backend.close()


def test_the_policy_upstream_is_a_plain_openai_backend_with_native_tools(
    server: FakeOpenAIServer, served_guard: Guard
) -> None:
    assert type(served_guard.backend) is OpenAIBackend and served_guard.backend.supports_tools
    both = {"role": "assistant", "content": "Reading it.", "tool_calls": send("c5")["tool_calls"]}
    as_text = '{"tool_calls": [{"name": "read_secret", "arguments": {"key": "db"}}]}'
    server.script(
        "/chat/completions",
        answer({"role": "assistant", "content": as_text}),
        answer(both),
    )
    s = served_guard.session("s")
    with metered() as meter:
        first = s.respond_sync([{"role": "user", "content": "read the db key"}], tools=TOOLS)
        assert [(c.name, c.args()) for c in first.reply.tool_calls] == [
            ("read_secret", {"key": "db"})
        ]  # a call written as text on the native path is still a call
        history = [{"role": "user", "content": "read the db key"}, first.message]
        history += [{"role": "tool", "tool_call_id": first.reply.tool_calls[0].id, "content": "k"}]
        second = s.respond_sync([*history, {"role": "user", "content": "mail x"}], tools=TOOLS)
    assert second.reply.content == "answer 0"  # the fake server's default, after the rejection
    assert second.summary["regenerations"] == 1 and meter.total.calls == 1 + 2
    requests = [r.body for r in server.requests_to("/chat/completions")]
    assert requests[1]["tools"] == TOOLS
    assert requests[1]["messages"][2]["tool_calls"][0]["function"] == {
        "name": "read_secret",
        "arguments": '{"key": "db"}',
    }
    assert "never call send_email" in requests[2]["messages"][-1]["content"]


def test_a_malformed_native_tool_call_is_never_executed_and_is_counted(
    server: FakeOpenAIServer, served_guard: Guard
) -> None:
    bad = {"id": "c1", "type": "function", "function": {"name": "send_email", "arguments": "[1]"}}
    server.script(
        "/chat/completions", answer({"role": "assistant", "content": None, "tool_calls": [bad]})
    )
    with metered() as meter:
        out = served_guard.session("s").respond_sync(
            [{"role": "user", "content": "hi"}], tools=TOOLS
        )
    assert out.reply.tool_calls == () and out.summary["fallback"] is True
    assert (meter.total.calls, meter.total.failed) == (1, 1)


# ---------------------------------------------------------------------- the streamed reader


def sse(*events: Any) -> bytes:
    """A Server-Sent Events body: each event JSON unless str."""
    return b"".join(
        f"data: {e if isinstance(e, str) else json.dumps(e)}\n\n".encode() for e in events
    )


def piece(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


def streaming_backend(*answers: httpx.Response | Exception) -> tuple[OpenAIBackend, list[Any]]:
    """A backend whose requests get ``answers`` in order (an exception is raised instead)."""
    queue, seen = list(answers), []

    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(json.loads(request.content))
        got = queue.pop(0)
        if isinstance(got, Exception):
            raise got
        return got

    config = BackendConfig(base_url="http://up/v1", model="m", max_retries=1, backoff_s=0.0)
    return OpenAIBackend(config, transport=httpx.MockTransport(handle)), seen


def events(body: bytes) -> httpx.Response:
    return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body)


def read(backend: OpenAIBackend) -> tuple[Any, list[tuple[str, bool]]]:
    got: list[tuple[str, bool]] = []
    msgs = [Message("user", "hi")]
    done = backend.stream_chat(
        msgs,
        temperature=0.0,
        max_tokens=9,
        tools=None,
        on_delta=lambda p, c: got.append((p, c)),
    )
    return done, got


def test_the_reader_hands_over_text_as_it_comes_and_tool_calls_whole() -> None:
    call = {"index": 0, "id": "c1", "type": "function", "function": {"name": "send_email"}}
    body = sse(
        piece({"role": "assistant", "content": ""}),
        piece({"content": "Sending "}),
        piece({"content": "now."}),
        piece({"tool_calls": [call]}),
        piece({"tool_calls": [{"index": 0, "function": {"arguments": '{"to": '}}]}),
        piece({"tool_calls": [{"index": 0, "function": {"arguments": '"x"}'}}]}),
        piece({}, "tool_calls"),
        {"choices": [], "usage": {"prompt_tokens": 7, "completion_tokens": 4}},
        "[DONE]",
    )
    backend, seen = streaming_backend(events(body))
    with metered() as meter:
        done, got = read(backend)
    assert got[:2] == [("Sending ", False), ("now.", False)] and all(c for _, c in got[2:])
    assert done.text == "Sending now." and done.finish_reason == "tool_calls"
    assert [(c.id, c.name, c.args()) for c in done.tool_calls] == [
        ("c1", "send_email", {"to": "x"})
    ]
    assert seen[0]["stream"] is True and "n" not in seen[0]
    assert (meter.total.calls, meter.total.prompt_tokens, meter.total.completion_tokens) == (
        1,
        7,
        4,
    )


def test_a_server_that_ignores_stream_is_read_as_one_piece() -> None:
    whole = {"choices": [{"index": 0, "message": {"role": "assistant", "content": "All at once."}}]}
    backend, _ = streaming_backend(httpx.Response(200, json=whole))
    done, got = read(backend)
    assert got == [("All at once.", False)] and done.text == "All at once."


@pytest.mark.parametrize(
    ("body", "says"),
    [
        (sse(piece({"content": "Half of it"})), "a stream cut short"),
        (sse(piece({"content": "x"}), {"error": {"message": "overloaded"}}), "overloaded"),
        (sse("{not json"), "a JSON chunk"),
        (sse([1, 2]), "a JSON object chunk"),
        (b"data: " + b"\xff\xfe" * 8 + b"\n\n", "a JSON chunk"),
        (b"data: " + b"x" * (MAX_RESPONSE_BYTES + 1), "a stream of at most"),
    ],
    ids=["cut short", "error event", "garbage", "not an object", "not UTF-8", "huge line"],
)
def test_a_stream_that_breaks_is_a_backend_error_counted_as_failed(body: bytes, says: str) -> None:
    backend, seen = streaming_backend(events(body))
    with metered() as meter, pytest.raises(BackendError, match=re.escape(says)):
        read(backend)
    assert len(seen) == 1 and meter.total.failed == 1  # no retry once text was handed over


def test_the_reader_retries_before_the_first_piece_and_counts_each_request() -> None:
    ok = events(sse(piece({"content": "Fine."}, "stop"), "[DONE]"))
    backend, seen = streaming_backend(httpx.ConnectError("refused"), ok)
    with metered() as meter:
        done, _ = read(backend)
    assert done.text == "Fine." and len(seen) == 2 and meter.total.calls == 2
    backend, _ = streaming_backend(httpx.Response(400, json={"error": {"message": "bad"}}))
    with pytest.raises(BackendHTTPError, match="HTTP 400: bad"):
        read(backend)


def test_a_refusal_inside_on_delta_stops_the_reading() -> None:
    body = sse(*(piece({"content": w}) for w in ("a ", "b ", "c ")), piece({}, "stop"), "[DONE]")
    backend, _ = streaming_backend(events(body))
    got: list[str] = []

    def stop_at_b(p: str, calling: bool) -> None:
        got.append(p)
        if p == "b ":
            raise KeyboardInterrupt  # any exception: the reading stops and it propagates

    with pytest.raises(KeyboardInterrupt):
        backend.stream_chat([Message("user", "hi")], temperature=0.0, max_tokens=9, tools=None, on_delta=stop_at_b)  # fmt: skip
    assert got == ["a ", "b "]


def test_any_other_backend_streams_its_whole_completion_as_one_piece() -> None:
    backend = ScriptedBackend(["Scripted reply."])
    got: list[tuple[str, bool]] = []
    done = backend.stream_chat(
        [Message("user", "hi")], temperature=0.0, max_tokens=9, tools=None,
        on_delta=lambda p, c: got.append((p, c)),
    )  # fmt: skip
    assert got == [("Scripted reply.", False)] and done.text == "Scripted reply."
