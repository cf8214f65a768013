"""Bounded cost: limits a client cannot pass, connections that cannot be held, sessions that leave
memory, and a step whose write does not grow with the session (docs/security.md, "Cost and
limits"). Attacks through the official ``openai`` client (or a raw socket, for what a client
library cannot do) against ``governor serve`` in front of the scripted upstream."""

from __future__ import annotations

import contextlib
import gc
import socket
import time
from typing import Any

import httpx
import openai
import pytest
from edge_helpers import ALICE_KEY, BOB_KEY, client, edge_service
from fake_openai_server import API_KEY, FakeOpenAIServer
from serve_helpers import text, tools_guard

from governor.guard import Guard, MemoryStore
from governor.serve.app import Limits
from governor.serve.connections import uvicorn_options


def turns(n: int) -> list[dict[str, str]]:
    roles = ("user", "assistant")
    return [{"role": roles[i % 2], "content": f"m{i}"} for i in range(n - 1)] + [
        {"role": "user", "content": "now?"}
    ]


def test_too_many_messages_in_a_request_is_a_413_naming_the_limit(guard: Guard) -> None:
    limits = Limits(max_request_messages=50)
    with edge_service(guard, limits=limits) as base, pytest.raises(openai.APIStatusError) as err:
        client(base, ALICE_KEY).chat.completions.create(
            model="m",
            messages=turns(51),
            metadata={"governor_session": "long"},  # type: ignore[arg-type]
        )
    assert err.value.status_code == 413
    assert "max_request_messages" in err.value.message and "50" in err.value.message


def test_a_session_past_its_stored_limit_is_a_400_naming_the_limit(
    server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
    small = tools_guard(server.url)
    small.max_session_messages = 6
    try:
        with edge_service(small) as base:
            alice = client(base, ALICE_KEY)
            server.script("/chat/completions", text("one"), text("two"))
            said = turns(5)  # 5 messages and the reply: 6
            alice.chat.completions.create(
                model="m", messages=said, metadata={"governor_session": "s"}
            )  # type: ignore[arg-type]
            with pytest.raises(openai.BadRequestError) as err:
                alice.chat.completions.create(
                    model="m", messages=turns(7), metadata={"governor_session": "t"}
                )  # type: ignore[arg-type]
    finally:
        small.backend.close()  # type: ignore[attr-defined]
    assert "max_session_messages" in err.value.message
    assert err.value.code == "limit_exceeded"


def test_a_key_past_its_rate_gets_429_with_retry_after_and_the_other_key_does_not(
    guard: Guard,
) -> None:
    limits = Limits(requests_per_s=0.01, request_burst=2)
    with edge_service(guard, limits=limits) as base:
        alice, bob = client(base, ALICE_KEY), client(base, BOB_KEY)
        said = [{"role": "user", "content": "hi"}]
        for _ in range(2):
            alice.chat.completions.create(
                model="m", messages=said, metadata={"governor_session": f"a{_}"}
            )  # type: ignore[arg-type]
        with pytest.raises(openai.RateLimitError) as err:
            alice.chat.completions.create(
                model="m", messages=said, metadata={"governor_session": "a9"}
            )  # type: ignore[arg-type]
        bob.chat.completions.create(model="m", messages=said, metadata={"governor_session": "b0"})  # type: ignore[arg-type]
    retry = int(err.value.response.headers["retry-after"])
    assert 1 <= retry <= 100


def test_a_key_past_its_session_quota_gets_429_and_its_sessions_go_on(guard: Guard) -> None:
    limits = Limits(sessions_per_hour=1, session_burst=2)
    with edge_service(guard, limits=limits) as base:
        alice = client(base, ALICE_KEY)
        said = [{"role": "user", "content": "hi"}]
        first = alice.chat.completions.create(
            model="m", messages=said, metadata={"governor_session": "one"}
        )  # type: ignore[arg-type]
        alice.chat.completions.create(
            model="m", messages=said, metadata={"governor_session": "two"}
        )  # type: ignore[arg-type]
        with pytest.raises(openai.RateLimitError) as err:
            alice.chat.completions.create(
                model="m", messages=said, metadata={"governor_session": "three"}
            )  # type: ignore[arg-type]
        more = [*said, first.choices[0].message.model_dump(exclude_none=True)]
        more.append({"role": "user", "content": "again"})
        alice.chat.completions.create(
            model="m", messages=more, metadata={"governor_session": "one"}
        )  # type: ignore[arg-type]
    assert "new sessions" in err.value.message
    assert "retry-after" in err.value.response.headers


def test_a_client_that_sends_its_headers_slowly_is_closed(guard: Guard) -> None:
    with edge_service(guard, uvicorn=uvicorn_options(header_timeout_s=1.0)) as base:
        port = int(base.rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port), timeout=10) as slow:
            slow.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n")
            start, closed = time.monotonic(), False
            while time.monotonic() - start < 6:
                try:
                    slow.sendall(b"X-Slow: 1\r\n")
                    time.sleep(0.2)
                    slow.settimeout(0.01)
                    if slow.recv(1) == b"":
                        closed = True
                        break
                except TimeoutError:
                    continue
                except OSError:
                    closed = True
                    break
    assert closed and time.monotonic() - start < 4


def test_a_body_that_trickles_in_is_a_408(guard: Guard) -> None:
    with edge_service(guard, limits=Limits(body_timeout_s=1.0)) as base:
        port = int(base.rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port), timeout=10) as slow:
            head = (
                "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n"
                f"Authorization: Bearer {ALICE_KEY}\r\nContent-Type: application/json\r\n"
                "Content-Length: 1000\r\n\r\n"
            )
            slow.sendall(head.encode() + b'{"model": "m",')
            answer = b""
            start = time.monotonic()
            while b"\r\n\r\n" not in answer and time.monotonic() - start < 8:
                try:
                    slow.sendall(b" ")
                except OSError:
                    break
                slow.settimeout(0.3)
                with contextlib.suppress(TimeoutError):
                    answer += slow.recv(4096)
    assert answer.startswith(b"HTTP/1.1 408")


def test_connections_past_the_cap_are_refused(guard: Guard) -> None:
    with edge_service(guard, uvicorn=uvicorn_options(max_connections=2)) as base:
        port = int(base.rsplit(":", 1)[1])
        held = [socket.create_connection(("127.0.0.1", port)) for _ in range(2)]
        try:
            time.sleep(0.2)
            answer = httpx.get(f"{base}/healthz")
        finally:
            for s in held:
                s.close()
    assert answer.status_code == 503


class CountingStore(MemoryStore):
    """Records how many messages each save writes."""

    def __init__(self) -> None:
        super().__init__()
        self.written: list[int] = []

    def save(self, session_id: str, state: Any, record: Any, **more: Any) -> None:
        log = more.get("messages")
        self.written.append(len(state.get("messages", ())) + (len(log[1]) if log else 0))
        super().save(session_id, state, record, **more)


def test_a_steps_write_holds_only_what_is_new_and_idle_sessions_leave_memory(
    server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
    store = CountingStore()
    guard = tools_guard(server.url, store=store)
    guard.cached_sessions = 5
    call = {
        "role": "assistant",
        "tool_calls": [
            {"id": "c", "type": "function", "function": {"name": "delete_file", "arguments": "{}"}}
        ],
    }
    try:
        with edge_service(guard) as base, httpx.Client(base_url=base) as http:
            auth = {"Authorization": f"Bearer {ALICE_KEY}"}
            for _ in range(60):
                body = {"session": "long", "candidate": call, "commit": True}
                assert http.post("/v1/checks", json=body, headers=auth).status_code == 200
            for i in range(40):
                body = {"session": f"idle-{i}", "candidate": "hello", "commit": True}
                http.post("/v1/checks", json=body, headers=auth).raise_for_status()
            gc.collect()
            held = guard.cached()
            # the long session left memory; it goes on from the store where it was
            body = {"session": "long", "candidate": "ok", "commit": True}
            again = http.post("/v1/checks", json=body, headers=auth).json()
    finally:
        guard.backend.close()  # type: ignore[attr-defined]
    assert max(store.written[:60]) == 1  # each commit wrote its one new message
    assert held <= 6
    assert again["t"] == 61
