"""The upstream: tools pass through natively to an OpenAI-compatible server; overlays judge text."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest
from fake_openai_server import FakeOpenAIServer, Reply
from guard_helpers import SMALLTALK_POLICY, TOOLS_POLICY

from governor.backends import OpenAIBackend
from governor.backends.scripted import ScriptedBackend
from governor.config import BackendConfig
from governor.guard import Guard, load_policy
from governor.usage import metered

TOOLS = [{"type": "function", "function": {"name": "send_email", "parameters": {}}}]


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
