"""Helpers for the attack tests: the support-agent example policy served in front of the fake
upstream, the official openai client, and scripted upstream answers (whole or streamed) with any
tool names, raw argument text and text beside the calls."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import openai
from fake_openai_server import Reply

from governor.guard import Guard, load_policy
from governor.serve import create_app, with_upstream
from governor.serve.local import serving

ROOT = Path(__file__).resolve().parents[2]
SUPPORT_POLICY = ROOT / "examples" / "policies" / "support_agent.yaml"
TOOL_NAMES = ("lookup_order", "refund", "send_email", "read_customer_record", "verify_identity")
TOOLS = [
    {"type": "function", "function": {"name": n, "parameters": {"type": "object"}}}
    for n in TOOL_NAMES
]
Call = tuple[str, str]
"""A scripted call: the tool's name and its arguments as raw JSON text."""


def support_guard(upstream_url: str) -> Guard:
    """A guard of ``examples/policies/support_agent.yaml`` in front of ``upstream_url``."""
    policy = with_upstream(load_policy(SUPPORT_POLICY), base_url=upstream_url, model="fake-model")
    up = replace(policy.upstream, max_retries=0, timeout_s=5.0)
    return Guard.from_policy(replace(policy, upstream=up))


@contextmanager
def served(guard: Guard) -> Iterator[str]:
    """The service over ``guard`` on a loopback port; its base URL."""
    try:
        with serving(create_app(guard)) as url:
            yield url
    finally:
        guard.backend.close()  # type: ignore[attr-defined]


OPENED: list[openai.OpenAI] = []
"""The clients :func:`client` made, closed after each test (``close_clients``)."""


def client(base: str, session: str) -> openai.OpenAI:
    made = openai.OpenAI(
        base_url=f"{base}/v1",
        api_key="unused",
        max_retries=0,
        default_headers={"X-Governor-Session": session},
    )
    OPENED.append(made)
    return made


def close_clients() -> None:
    """Close every client :func:`client` made (their kept-alive connections)."""
    while OPENED:
        OPENED.pop().close()


def arguments(**values: Any) -> str:
    return json.dumps(values)


def answer(content: str | None, *calls: Call) -> Reply:
    """A whole upstream answer: ``content`` and the ``calls`` beside it."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = [
            {"id": f"c{i}", "type": "function", "function": {"name": n, "arguments": a}}
            for i, (n, a) in enumerate(calls)
        ]
    body = {
        "model": "fake-model",
        "choices": [
            {"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}
        ],
        "usage": {"prompt_tokens": 11, "completion_tokens": 5},
    }
    return Reply(body=body)


def _chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    return {"object": "chat.completion.chunk", "model": "fake-model", "choices": [choice]}


def streamed(*parts: str | Call) -> Reply:
    """An upstream answer streamed in ``parts`` as they come: text pieces and whole calls, in
    any order (a call before text too)."""
    events: list[Any] = [_chunk({"role": "assistant", "content": ""})]
    index = 0
    for part in parts:
        if isinstance(part, str):
            events.append(_chunk({"content": part}))
            continue
        name, args = part
        call = {
            "index": index,
            "id": f"c{index}",
            "type": "function",
            "function": {"name": name, "arguments": args},
        }
        events.append(_chunk({"tool_calls": [call]}))
        index += 1
    events.append(_chunk({}, "tool_calls" if index else "stop"))
    events += [
        {
            "object": "chat.completion.chunk",
            "choices": [],
            "usage": {"prompt_tokens": 9, "completion_tokens": 3},
        },
        "[DONE]",
    ]
    return Reply(events=tuple(events))


def ask(base: str, session: str, messages: list[dict[str, Any]]) -> tuple[Any, str, dict[str, str]]:
    """One plain request through the openai client: the parsed reply, the raw body, the headers."""
    raw = client(base, session).chat.completions.with_raw_response.create(
        model="fake-model",
        messages=messages,
        tools=TOOLS,  # type: ignore[arg-type]
    )
    return raw.parse(), raw.http_response.text, dict(raw.headers)


def ask_streamed(
    base: str, session: str, messages: list[dict[str, Any]]
) -> tuple[str, list[Any], dict[str, Any] | None, str]:
    """One streamed request through the openai client: the text it delivered, the tool calls,
    the ``governor`` summary of the last chunk, and every chunk's JSON together (what went over
    the wire)."""
    stream = client(base, session).chat.completions.create(
        model="fake-model",
        messages=messages,  # type: ignore[arg-type]
        tools=TOOLS,  # type: ignore[arg-type]
        stream=True,
    )
    text, calls, summary, wire = "", [], None, []
    for chunk in stream:
        wire.append(chunk.model_dump_json())
        extra = chunk.model_extra or {}
        summary = extra.get("governor", summary)
        for choice in chunk.choices:
            text += choice.delta.content or ""
            calls += choice.delta.tool_calls or []
    return text, calls, summary, "\n".join(wire)


def user(text: str) -> list[dict[str, Any]]:
    return [{"role": "user", "content": text}]


def called(reply: Any) -> list[str]:
    """The names of the tool calls a parsed reply delivers."""
    return [c.function.name for c in reply.choices[0].message.tool_calls or ()]
