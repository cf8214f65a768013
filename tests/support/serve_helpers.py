"""Helpers for the service tests: the app under uvicorn on a free loopback port, a guard of an
example policy over the fake upstream, and scripted upstream answers."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from fake_openai_server import Reply

from governor.guard import Guard, SessionStore, load_policy
from governor.serve import with_upstream

ROOT = Path(__file__).resolve().parents[2]
TOOLS_POLICY = ROOT / "examples" / "policies" / "tools.yaml"


def tools_guard(upstream_url: str, *, store: SessionStore | None = None, **upstream: Any) -> Guard:
    """A guard of ``examples/policies/tools.yaml`` in front of ``upstream_url`` (no retries)."""
    policy = with_upstream(load_policy(TOOLS_POLICY), base_url=upstream_url, model="fake-model")
    fields = {"max_retries": 0, "timeout_s": 5.0, **upstream}
    policy = replace(policy, upstream=replace(policy.upstream, **fields))
    return Guard.from_policy(policy, store=store)


def tool_call(call_id: str, name: str, content: str | None = None, **arguments: Any) -> Reply:
    """An upstream answer that calls the tool ``name`` (with ``content`` beside it, if any)."""
    fn = {"name": name, "arguments": json.dumps(arguments)}
    message = {"role": "assistant", "content": content, "tool_calls": [{"id": call_id, "type": "function", "function": fn}]}  # fmt: skip
    return answer(message, "tool_calls")


def text(content: str) -> Reply:
    """An upstream answer of text."""
    return answer({"role": "assistant", "content": content}, "stop")


def answer(message: dict[str, Any], finish: str) -> Reply:
    body = {
        "model": "fake-model",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 11, "completion_tokens": 5},
    }
    return Reply(body=body)


TOOLS = [
    {"type": "function", "function": {"name": n, "parameters": {"type": "object"}}}
    for n in ("read_secret", "send_email", "verify_identity", "transfer_funds", "delete_file")
]
