"""Helpers for the service tests: the app under uvicorn on a free loopback port, a guard of an
example policy over the fake upstream, and scripted upstream answers."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import uvicorn
from fake_openai_server import Reply
from starlette.applications import Starlette

from governor.guard import Guard, SessionStore, load_policy
from governor.serve import with_upstream

ROOT = Path(__file__).resolve().parents[2]
TOOLS_POLICY = ROOT / "examples" / "policies" / "tools.yaml"


@contextmanager
def serving(app: Starlette) -> Iterator[str]:
    """Serve ``app`` on 127.0.0.1 (a port the OS picks) in a thread; yields the base URL."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)  # TCP_NODELAY
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the service did not start")
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()


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
