"""Tool calls in the backend layer: messages and tool calls in the OpenAI shape, tool schemas sent
by OpenAIBackend against the fake server, tool calls read back, malformed ones refused, and tools
refused by a backend without tool calling; every call counted once."""

from __future__ import annotations

import datetime
import decimal
import enum
import json
import uuid
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from fake_openai_server import FakeOpenAIServer, Reply

from governor.backends import Message, OpenAIBackend, ScriptedBackend
from governor.backends.base import MAX_ARGUMENTS_CHARS, Completion, ToolCall
from governor.config import BackendConfig
from governor.errors import BackendError, BackendResponseError, ConfigError
from governor.jsontext import compact_bytes
from governor.usage import metered

MakeBackend = Callable[..., OpenAIBackend]
CHAT = "/chat/completions"
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "send_email",
            "parameters": {"type": "object", "properties": {"to": {"type": "string"}}},
        },
    }
]
READ = ToolCall("c1", "read_secret", '{"key": "db"}')


def answer(*messages: dict[str, Any]) -> Reply:
    choices = [
        {"index": i, "message": m, "finish_reason": "tool_calls"} for i, m in enumerate(messages)
    ]
    return Reply(body={"model": "fake", "choices": choices, "usage": {"prompt_tokens": 3}})


def calling(*calls: Any, content: str | None = None) -> dict[str, Any]:
    return {"role": "assistant", "content": content, "tool_calls": list(calls)}


def fn(ident: str, name: str, arguments: Any) -> dict[str, Any]:
    return {"id": ident, "type": "function", "function": {"name": name, "arguments": arguments}}


def test_tools_and_tool_messages_are_sent_and_tool_calls_come_back(
    server: FakeOpenAIServer, make_backend: MakeBackend
) -> None:
    server.script(
        CHAT,
        answer(
            calling(fn("c2", "send_email", '{"to": "x"}')),
            calling(fn("c3", "send_email", {"to": "y"}), content="Sending."),
        ),
    )
    messages = [
        Message("user", "read it and email it"),
        Message("assistant", "", (READ,)),
        Message("tool", "s3cr3t", tool_call_id="c1"),
    ]
    with metered() as meter:
        result = make_backend().chat(messages, n=2, tools=TOOLS)
    body = server.requests_to(CHAT)[0].body
    assert body["tools"] == TOOLS
    assert body["messages"] == [
        {"role": "user", "content": "read it and email it"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "read_secret", "arguments": '{"key": "db"}'},
                }
            ],
        },
        {"role": "tool", "content": "s3cr3t", "tool_call_id": "c1"},
    ]
    assert result.completions == (
        Completion("", "tool_calls", None, (ToolCall("c2", "send_email", '{"to": "x"}'),)),
        Completion("Sending.", "tool_calls", None, (ToolCall("c3", "send_email", '{"to": "y"}'),)),
    )
    assert result.completions[0].tool_calls[0].args() == {"to": "x"}
    assert (meter.total.calls, meter.total.failed) == (1, 0)


def test_no_tools_no_tools_key(server: FakeOpenAIServer, make_backend: MakeBackend) -> None:
    result = make_backend().chat("hi", tools=[])
    assert "tools" not in server.requests_to(CHAT)[0].body
    assert result.completions[0].tool_calls == ()


@pytest.mark.parametrize(
    ("message", "found"),
    [
        (calling(fn("c1", "send_email", "[1, 2]")), "a JSON object"),
        (calling(fn("c1", "", "{}")), "a function name"),
        (calling({"id": "c1", "function": "send_email"}), "an object with name and arguments"),
        (calling(fn("c1", "x", "{" + "1" * MAX_ARGUMENTS_CHARS)), "at most 65,536 characters"),
        ({"role": "assistant", "content": None, "tool_calls": "send_email"}, "tool_calls a list"),
        ({"role": "assistant", "content": None, "tool_calls": []}, "message.content a string"),
    ],
)
def test_a_malformed_tool_call_is_a_response_error_counted_once(
    server: FakeOpenAIServer, make_backend: MakeBackend, message: dict[str, Any], found: str
) -> None:
    server.script(CHAT, answer(message))
    with metered() as meter, pytest.raises(BackendResponseError, match=found) as caught:
        make_backend().chat("hi", tools=TOOLS)
    assert caught.value.args[0].startswith("openai:fake-model: expected ")
    assert (meter.total.calls, meter.total.failed) == (1, 1)  # not retried
    assert len(server.requests_to(CHAT)) == 1


def test_tools_for_a_backend_without_tool_calling_are_refused_uncounted() -> None:
    backend = ScriptedBackend(["hello"], name="scripted-upstream")
    assert not backend.supports_tools and OpenAIBackend.supports_tools
    with (
        metered() as meter,
        pytest.raises(ConfigError, match=r"scripted-upstream: tools: expected none"),
    ):
        backend.chat("hi", tools=TOOLS)
    assert meter.total.calls == 0 and backend.remaining == 1
    assert backend.chat("hi", tools=None).text == "hello"


class _Plain(enum.Enum):
    A = 1


def test_tool_schemas_must_be_json_safe_objects(make_backend: MakeBackend) -> None:
    with pytest.raises(ConfigError, match=r"tools\[1\]: expected a JSON-safe tool schema object"):
        make_backend().chat("hi", tools=[TOOLS[0], {"function": {1, 2}}])
    with pytest.raises(ConfigError, match=r"tools\[0\]"):
        make_backend().chat("hi", tools=["send_email"])  # type: ignore[list-item]
    for odd in (uuid.UUID(int=1), datetime.date(2024, 1, 1), _Plain.A):  # JSON to orjson only
        with pytest.raises(ConfigError, match=r"tools\[1\]: expected a JSON-safe"):
            make_backend().chat("hi", tools=[TOOLS[0], {"function": {"name": odd}}])


def test_messages_hold_the_rules_of_their_roles() -> None:
    with pytest.raises(ConfigError, match="tool message tool_call_id: expected the id of a call"):
        Message("tool", "done")
    with pytest.raises(ConfigError, match="expected none on a user message, found 1"):
        Message("user", "hi", (READ,))
    with pytest.raises(ConfigError, match="tool_call_id: expected none on a user message"):
        Message("user", "hi", tool_call_id="c1")
    with pytest.raises(ConfigError, match="expected a tuple of ToolCall"):
        Message("assistant", "", [READ])  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match=r"tool call arguments: expected a string, found \{\}"):
        ToolCall("c1", "x", {})  # type: ignore[arg-type]
    both = Message("assistant", "On it.", (READ,))
    assert both.to_dict()["content"] == "On it." and Message("user", "").to_dict()["content"] == ""


def test_tool_call_arguments_are_read_within_a_stated_bound() -> None:
    assert ToolCall("c", "x", json.dumps({"a": [1]})).args() == {"a": [1]}
    with pytest.raises(ConfigError, match="tool call x: arguments: expected a JSON object"):
        ToolCall("c", "x", "[1]").args()
    long = ToolCall("c", "x", json.dumps({"a": "y" * MAX_ARGUMENTS_CHARS}))
    with pytest.raises(ConfigError, match=f"expected at most {MAX_ARGUMENTS_CHARS:,} characters"):
        long.args()
    short = ToolCall.from_dict({"name": "x", "arguments": {"b": 1}}, "call", 2)
    assert short.arguments == '{"b": 1}' and short.id.startswith("call_")
    assert short == ToolCall.from_dict({"name": "x", "arguments": {"b": 1}}, "call", 2)
    assert ToolCall.from_dict(short.to_dict(), "call") == short


def _sent_bodies(*requests: dict[str, Any]) -> list[bytes]:
    """The bytes OpenAIBackend posts for each ``chat`` request (answered with one tool call)."""
    sent: list[bytes] = []

    def handle(request: httpx.Request) -> httpx.Response:
        sent.append(request.content)
        message = {"content": None, "tool_calls": [READ.to_dict()]}
        return httpx.Response(200, json={"choices": [{"index": 0, "message": message}]})

    config = BackendConfig("http://m.invalid/v1", "m", max_retries=0)
    with OpenAIBackend(config, transport=httpx.MockTransport(handle)) as backend:
        for request in requests:
            backend.chat(**request)
    return sent


def test_the_body_is_the_text_compact_bytes_writes_tools_and_all() -> None:
    calls = (ToolCall("c1", "read_secret", '{"key": "é\\u0000"}'),)
    talk = [
        Message("system", "be brief ✓"),
        Message("assistant", "", calls),
        Message("tool", "ok", tool_call_id="c1"),
        Message("user", 'say "hi"\n'),
    ]
    tools = [*TOOLS, {"type": "function", "function": {"name": "x", "parameters": {"n": 1.5}}}]
    asks: list[dict[str, Any]] = [
        {"messages": talk, "tools": tools, "temperature": 0.7, "max_tokens": 9},
        {"messages": talk, "tools": tools, "logprobs": True, "top_logprobs": 2},
        {"messages": talk, "tools": tools, "stop": ["\n"], "n": 1},
        {"messages": "hi", "tools": [{"big": 2**70}], "temperature": 1},  # past orjson's 64 bits
        {"messages": "hi"},
    ]
    for ask, sent in zip(asks, _sent_bodies(*asks), strict=True):
        want: dict[str, Any] = {
            "model": "m",
            "messages": [m.to_dict() for m in as_list(ask["messages"])],
            "n": ask.get("n", 1),
            "temperature": ask.get("temperature", 0.0),
            "max_tokens": ask.get("max_tokens", 256),
        }
        if "stop" in ask:
            want["stop"] = ask["stop"]
        if "tools" in ask:
            want["tools"] = ask["tools"]
        if ask.get("logprobs"):
            want |= {"logprobs": True, "top_logprobs": ask["top_logprobs"]}
        assert sent == compact_bytes(want)  # the same text, keys in the same order


def as_list(messages: Any) -> list[Message]:
    return [Message("user", messages)] if isinstance(messages, str) else list(messages)


@pytest.mark.parametrize(
    "ask",
    [
        {"messages": "hi", "tools": [{"default": float("nan")}]},  # JSON to json.dumps only
        {"messages": "hi", "tools": [{"x": 1}], "temperature": decimal.Decimal(1)},
        {"messages": "hi \ud800", "tools": [{"x": 1}]},  # a lone surrogate: no UTF-8 for it
    ],
)
def test_a_body_that_is_not_strict_json_is_a_counted_failed_call(ask: dict[str, Any]) -> None:
    with metered() as meter, pytest.raises(BackendError, match="Error: "):
        _sent_bodies(ask)
    assert (meter.total.calls, meter.total.failed) == (1, 1)
