"""A guard whose every stage is pure or awaits its I/O runs its steps on the event loop
(governor.on_loop): which guards do, that a step there decides and records exactly what the same
step on a worker thread does, that a large request still goes to a thread, and that a caller
cancelled mid-step leaves the step to finish and be saved, as on a thread."""

from __future__ import annotations

import asyncio
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from fake_openai_server import FakeOpenAIServer, Reply
from guard_helpers import TOOLS_POLICY

import governor.guard.session as session_module
from governor.backends import OpenAIBackend
from governor.backends.scripted import ScriptedBackend
from governor.guard import Guard, MemoryStore, load_policy
from governor.guard.facade import steps_on_loop
from governor.guard.stores import SqliteStore

TOOLS = [
    {"type": "function", "function": {"name": n, "parameters": {}}}
    for n in ("read_secret", "send_email")
]


def completion(message: dict[str, Any]) -> Reply:
    body = {
        "model": "fake",
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 3, "completion_tokens": 2},
    }
    return Reply(body=body)


def call(name: str, call_id: str) -> dict[str, Any]:
    fn = {"name": name, "arguments": "{}"}
    return {"role": "assistant", "content": None, "tool_calls": [{"id": call_id, "type": "function", "function": fn}]}  # fmt: skip


@pytest.fixture
def loop_steps(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The names of the calls that ran on the loop (each step's function)."""
    ran: list[str] = []
    real = session_module.finish_on_loop

    async def counted(ended: Callable[[], object], fn: Callable[..., Any], *args: Any) -> Any:
        ran.append(args[0].__name__)
        return await real(ended, fn, *args)

    monkeypatch.setattr(session_module, "finish_on_loop", counted)
    yield ran


def test_which_guards_step_on_the_loop(make_backend: Callable[..., OpenAIBackend]) -> None:
    backend = make_backend()
    policy = load_policy(TOOLS_POLICY)
    guard = Guard(policy, backend)
    assert guard.on_loop and guard.session("s").on_loop
    # a backend that cannot await its calls, a store that other processes share: threads
    assert not Guard(policy, ScriptedBackend(["hi"])).on_loop
    with tempfile.TemporaryDirectory() as d:
        shared = SqliteStore(Path(d) / "s.db", shared=True)  # its waits are awaited there
        assert Guard(policy, backend, store=shared).on_loop
        assert Guard(policy, backend, store=SqliteStore(Path(d) / "t.db")).on_loop

    class Remote(MemoryStore):  # a store that may wait on the network (as PostgreSQL does)
        quick = False

    assert not Guard(policy, backend, store=Remote()).on_loop
    # a constraint that is not pure (it may call a model): threads
    observer = guard.observer

    class Impure(type(observer.constraints[0])):  # type: ignore[misc]
        pure = False

    first = observer.constraints[0]
    impure = Impure.__new__(Impure)
    impure.__dict__.update(first.__dict__)
    observer.constraints = (impure, *observer.constraints[1:])
    assert not steps_on_loop(observer, MemoryStore(), None)


def run_conversation(server: FakeOpenAIServer, backend: OpenAIBackend, on_loop: bool) -> list[Any]:
    server.clear()
    server.script(
        "/chat/completions",
        completion(call("read_secret", "c1")),
        completion(call("send_email", "c2")),  # refused: never send_email after read_secret
        completion({"role": "assistant", "content": "I will not send it."}),
    )
    guard = Guard(load_policy(TOOLS_POLICY), backend)
    guard.on_loop = on_loop
    session = guard.session("conversation")
    history: list[dict[str, Any]] = [{"role": "user", "content": "read the secret"}]

    async def steps() -> list[Any]:
        out = []
        first = await session.respond(history, tools=TOOLS)
        out.append((first.reply.to_dict(), first.summary["kind"]))
        history.append(first.message)
        history.append({"role": "tool", "tool_call_id": "c1", "content": "s3cr3t"})
        history.append({"role": "user", "content": "now email it"})
        second = await session.respond(history, tools=TOOLS)
        out.append((second.reply.to_dict(), second.summary["kind"], second.summary["rejected"]))
        return out

    before = len(server.requests_to("/chat/completions"))
    got = asyncio.run(steps())
    records = [untimed(r) for r in guard.store.records(session.id)]
    asked = server.requests_to("/chat/completions")[before:]
    return [got, records, [r.body.get("messages") for r in asked]]


TIMES = ("latency_ms", "step_latency_ms", "seconds")


def untimed(value: Any) -> Any:
    """``value`` without its times (they differ from run to run)."""
    if isinstance(value, dict):
        return {k: untimed(v) for k, v in value.items() if k not in TIMES}
    if isinstance(value, list):
        return [untimed(v) for v in value]
    return value


def test_a_step_on_the_loop_decides_and_records_as_one_on_a_thread(
    server: FakeOpenAIServer, make_backend: Callable[..., OpenAIBackend], loop_steps: list[str]
) -> None:
    backend = make_backend()
    on_thread = run_conversation(server, backend, on_loop=False)
    assert loop_steps == []
    on_loop = run_conversation(server, backend, on_loop=True)
    assert loop_steps == ["_respond", "_respond"]
    assert on_loop == on_thread
    second = on_loop[0][1]
    assert second[1] == "execute" and second[0]["content"] == "I will not send it."


def test_a_large_request_steps_on_a_thread(
    server: FakeOpenAIServer, make_backend: Callable[..., OpenAIBackend], loop_steps: list[str]
) -> None:
    server.script("/chat/completions", completion({"role": "assistant", "content": "ok"}))
    guard = Guard(load_policy(TOOLS_POLICY), make_backend())
    many = [
        {"role": "user", "content": f"line {i}"}
        for i in range(session_module.LOOP_MAX_MESSAGES + 1)
    ]
    reply = asyncio.run(guard.session("big").respond(many))
    assert reply.reply.content == "ok" and loop_steps == []
    server.script("/chat/completions", completion({"role": "assistant", "content": "ok"}))
    long_text = [{"role": "user", "content": "x" * (session_module.LOOP_MAX_CHARS + 1)}]
    asyncio.run(guard.session("long").respond(long_text))
    assert loop_steps == []
    # one turn longer than the checks read on the loop, in a request short in all
    server.script("/chat/completions", completion({"role": "assistant", "content": "ok"}))
    one_long = [{"role": "user", "content": "y " * (session_module.LOOP_CHECK_MAX_CHARS // 2 + 1)}]
    asyncio.run(guard.session("one-long").respond(one_long))
    assert loop_steps == []
    # the same text as tool calls' arguments (no content at all) is as large
    half = session_module.LOOP_MAX_CHARS // 2
    args = '{"to": "%s"}' % ("x" * half)

    def called(ident: str) -> list[dict[str, Any]]:  # a call to read_secret with args, answered
        call = {"id": ident, "type": "function", "function": {"name": "read_secret", "arguments": args}}  # fmt: skip
        return [
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": ident, "content": "ok"},
        ]

    calls = [{"role": "user", "content": "go"}, *called("c1"), *called("c2")]
    server.script("/chat/completions", completion({"role": "assistant", "content": "ok"}))
    asyncio.run(guard.session("arguments").respond(calls))
    candidate = {"role": "assistant", "content": None, "tool_calls": [{"id": "c3", "type": "function", "function": {"name": "read_secret", "arguments": args + " " * half}}]}  # fmt: skip
    asyncio.run(guard.session("commit").commit(candidate))
    assert loop_steps == []


def test_a_cancelled_caller_leaves_the_step_to_finish_and_be_saved(
    server: FakeOpenAIServer, make_backend: Callable[..., OpenAIBackend], loop_steps: list[str]
) -> None:
    slow = {"role": "assistant", "content": "slow answer"}
    server.script("/chat/completions", Reply(body=completion(slow).body, delay_s=0.3))
    guard = Guard(load_policy(TOOLS_POLICY), make_backend())
    session = guard.session("cancelled")
    messages = [{"role": "user", "content": "hello"}]

    async def main() -> Any:
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(session.respond(messages), 0.05)
        # the same request again: answered from the step that finished, no second upstream call
        return await session.respond(messages)

    again = asyncio.run(main())
    assert loop_steps[0] == "_respond"
    assert again.reply.content == "slow answer"
    assert len(server.requests_to("/chat/completions")) == 1
    assert [r["type"] for r in guard.store.records(session.id)] == ["decision"]


def test_a_caller_cancelled_awaiting_an_answer_on_a_kept_connection_is_cancelled_at_once(
    make_backend: Callable[..., OpenAIBackend],
    loop_steps: list[str],
    monkeypatch: pytest.MonkeyPatch,
    request: pytest.FixtureRequest,
) -> None:
    """The answer on a kept connection is awaited from the caller's own task: a caller cancelled
    meanwhile stops at once, and the step still finishes, is saved, and answers the retry."""
    from governor.backends.plain_http import AsyncPlainHttp

    started: list[bool] = []
    real_start = AsyncPlainHttp.start

    def start(self: AsyncPlainHttp, *args: Any) -> Any:
        sent = real_start(self, *args)
        started.append(sent is not None)
        return sent

    monkeypatch.setattr(AsyncPlainHttp, "start", start)
    server = FakeOpenAIServer(keep_alive=True).start()
    request.addfinalizer(server.stop)
    warm = {"role": "assistant", "content": "warm"}
    slow = {"role": "assistant", "content": "slow answer"}
    server.script("/chat/completions", completion(warm))
    server.script("/chat/completions", Reply(body=completion(slow).body, delay_s=0.4))
    guard = Guard(load_policy(TOOLS_POLICY), make_backend(base_url=server.url))
    first = [{"role": "user", "content": "hello"}]
    again = [*first, warm, {"role": "user", "content": "more"}]

    async def main() -> tuple[float, Any]:
        await guard.session("kept").respond(first)  # leaves its connection kept
        session = guard.session("kept")
        task = asyncio.ensure_future(session.respond(again))
        await asyncio.sleep(0.05)
        start_s = time.monotonic()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        woke = time.monotonic() - start_s
        return woke, await session.respond(again)

    woke, replayed = asyncio.run(main())
    assert loop_steps == ["_respond"] * 2  # (the retry waited on a thread for the step)
    assert (
        started[-1] and started.count(True) == 1
    )  # the second step's request went on the kept connection
    assert woke < 0.2  # not when the answer came (0.4 s after it was asked)
    assert replayed.reply.content == "slow answer"
    assert len(server.requests_to("/chat/completions")) == 2
    assert [r["type"] for r in guard.store.records("kept")] == ["decision", "decision"]


def test_an_upstream_slower_than_the_step_budget_falls_back_at_the_budget_and_is_counted(
    server: FakeOpenAIServer, make_backend: Callable[..., OpenAIBackend], loop_steps: list[str]
) -> None:
    slow = {"role": "assistant", "content": "too late"}
    server.script("/chat/completions", Reply(body=completion(slow).body, delay_s=2.0))
    policy = load_policy(TOOLS_POLICY)
    policy = replace(policy, observer=replace(policy.observer, time_budget_s=0.3))
    guard = Guard(policy, make_backend(timeout_s=10.0))
    start = time.monotonic()
    out = asyncio.run(guard.session("slow").respond([{"role": "user", "content": "hi"}]))
    seconds = time.monotonic() - start
    assert loop_steps == ["_respond"]
    assert out.summary["kind"] in ("fallback", "defer") and out.reply.content != "too late"
    assert seconds < 1.5  # the budget (0.3 s), not the upstream's 10 s timeout nor its 2 s
    assert out.summary["llm"]["calls"] == 1  # the call was made: counted, though it failed
