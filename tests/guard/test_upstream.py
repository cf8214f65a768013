"""The upstream: tools pass through natively to an OpenAI-compatible server; overlays judge text."""

from __future__ import annotations

from typing import Any

from fake_openai_server import FakeOpenAIServer, Reply
from guard_helpers import SMALLTALK_POLICY, TOOLS_POLICY

from governor.backends.scripted import ScriptedBackend
from governor.config import BackendConfig
from governor.guard import Guard, load_policy
from governor.guard.openai_tools import OpenAIToolsBackend
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
    with OpenAIToolsBackend(config) as backend:
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
