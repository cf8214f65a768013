"""Sessions: check-only makes no LLM call, commit, sync variants, isolation, serialised calls."""

from __future__ import annotations

import asyncio
import json
import threading
from typing import Any

import pytest
from guard_helpers import Conversation, call, tool_guard

from governor.errors import ConfigError
from governor.guard import MemoryStore, SyncInLoopError
from governor.guard.facade import MAX_STORED_ID
from governor.usage import metered


def test_check_makes_no_llm_call_and_changes_nothing() -> None:
    guard, backend = tool_guard([call("read_secret", key="k")])
    s = guard.session("s")
    s.respond_sync([{"role": "user", "content": "read it"}])
    before = s.state
    with metered() as meter:
        bad = s.check_sync({"tool_calls": [{"name": "send_email", "arguments": '{"to": "x"}'}]})
        good = s.check_sync("Done, I read it.")
    assert meter.total.calls == 0 and backend.remaining == 0
    assert not bad.admissible and bad.summary["rejected_by"] == ["no_exfiltration"]
    assert good.admissible and s.state is before


def test_commit_records_what_the_client_executed() -> None:
    guard, _ = tool_guard([])
    s = guard.session("s")
    first = s.commit_sync({"tool_calls": [{"name": "verify_identity", "arguments": "{}"}]})
    assert first.admissible and s.state.t == 1
    assert s.check_sync(json_call("transfer_funds", amount=3)).admissible
    late = s.commit_sync(json_call("read_secret"))
    assert late.admissible
    assert not s.check_sync(json_call("send_email", to="x")).admissible


def json_call(name: str, **arguments: object) -> dict[str, object]:
    return {"tool_calls": [{"name": name, "arguments": json.dumps(arguments)}]}


def test_assistant_messages_the_client_adds_are_committed() -> None:
    guard, _ = tool_guard(["ok", call("send_email", to="x"), "I won't email it."])
    s, chat = guard.session("s"), Conversation()
    chat.messages += [
        {"role": "user", "content": "read it"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c9", "type": "function", "function": {"name": "read_secret", "arguments": "{}"}}
        ]},
        {"role": "tool", "tool_call_id": "c9", "content": "s3cr3t"},
    ]  # fmt: skip
    assert s.respond_sync(chat.messages).reply.content == "ok"
    assert s.state.t == 2  # the client's call and the reply
    chat.messages.append({"role": "assistant", "content": "ok"})
    out = s.respond_sync(chat.user("email it"))
    assert out.reply.content == "I won't email it."


def test_a_changed_history_is_refused() -> None:
    guard, _ = tool_guard(["hello"])
    s = guard.session("s")
    s.respond_sync([{"role": "user", "content": "hi"}])
    with pytest.raises(ConfigError, match=r"messages\[0\]: expected the session's") as err:
        s.check_sync("x", messages=[{"role": "user", "content": "something else"}])
    assert "hi" not in str(err.value).replace("history", "")  # the stored message is not quoted


def test_sync_variants_refuse_a_running_loop() -> None:
    guard, _ = tool_guard(["hello"])
    s = guard.session("s")

    async def inside() -> None:
        with pytest.raises(SyncInLoopError, match=r"await session\.respond"):
            s.respond_sync([{"role": "user", "content": "hi"}])
        with pytest.raises(SyncInLoopError):
            s.check_sync("x")
        with pytest.raises(SyncInLoopError):
            s.commit_sync("x")

    asyncio.run(inside())
    assert isinstance(SyncInLoopError("x"), ConfigError)


def test_two_sessions_never_mix() -> None:
    guard, _ = tool_guard([call("read_secret"), call("send_email", to="x")])
    a, b = guard.session("a"), guard.session("b")
    assert guard.session("a") is a
    a.respond_sync([{"role": "user", "content": "read"}])
    out = b.respond_sync([{"role": "user", "content": "email"}])
    assert [c.name for c in out.reply.tool_calls] == ["send_email"]
    assert len(a.state.messages) == 2 and len(b.state.messages) == 2
    assert b.state.messages[0].content == "email"


def test_new_sessions_start_from_one_initial_memory_and_share_nothing_after() -> None:
    guard, _ = tool_guard([])
    a, b = guard.session("a"), guard.session("b")
    start_a, start_b = a.state.memory["transfer_cap"], b.state.memory["transfer_cap"]
    assert start_a is start_b  # made once: immutable (a commit makes a new state and sums)
    assert start_a.sums == {}
    for s in (a, b):
        assert s.commit_sync(json_call("verify_identity")).admissible
    assert a.commit_sync(json_call("transfer_funds", amount=70)).admissible
    assert a.commit_sync(json_call("read_secret")).admissible
    assert not a.check_sync(json_call("transfer_funds", amount=40)).admissible
    assert not a.check_sync(json_call("send_email", to="x")).admissible
    # b, and a session started after a's steps, see none of them
    assert b.check_sync(json_call("transfer_funds", amount=90)).admissible
    assert b.check_sync(json_call("send_email", to="x")).admissible
    c = guard.session("c")
    assert c.state.memory["transfer_cap"] is start_a
    assert c.state.memory["transfer_cap"].sums == {} and start_a.sums == {}
    assert a.state.memory["transfer_cap"].sums == {"total_over_100": 70.0}
    assert c.commit_sync(json_call("verify_identity")).admissible
    assert c.check_sync(json_call("transfer_funds", amount=100)).admissible
    assert c.check_sync(json_call("send_email", to="x")).admissible


class SlowStore(MemoryStore):
    """Saves slowly, so that unserialised calls on one session would lose updates."""

    def save(self, session_id: str, state: Any, record: Any, **more: Any) -> None:
        threading.Event().wait(0.03)
        super().save(session_id, state, record, **more)


def test_concurrent_calls_on_one_session_are_serialised() -> None:
    inside, peak, lock = [0], [0], threading.Lock()

    def slow(messages: object) -> str:
        with lock:
            inside[0] += 1
            peak[0] = max(peak[0], inside[0])
        threading.Event().wait(0.1)
        with lock:
            inside[0] -= 1
        return "fine"

    guard, _ = tool_guard([slow, slow], store=SlowStore())
    s = guard.session("s")

    async def main() -> list[Any]:
        ask = [{"role": "user", "content": "hi"}]
        commits = [s.commit(f"reply {i}") for i in range(4)]
        sessions = [guard.session(n).respond(ask) for n in ("t", "u")]
        return await asyncio.gather(*commits, *sessions)

    results = asyncio.run(main())
    assert len(results) == 6
    assert s.state.t == 4 and [m.content for m in s.state.messages] == [
        f"reply {i}" for i in range(4)
    ]  # no lost update
    assert peak[0] == 2  # two sessions do run at once: the event loop is never blocked


def test_a_bad_session_id_is_refused() -> None:
    guard, _ = tool_guard([])
    with pytest.raises(ConfigError, match="session id: expected printable text of 1 to 200"):
        guard.session("", owner="ab" * 32)
    with pytest.raises(ConfigError, match="session id: expected printable text of 1 to 200"):
        guard.session("x" * 201, owner="ab" * 32)
    with pytest.raises(ConfigError, match="session id: expected printable text of 1 to 200"):
        guard.session("x" * 201, client=True)  # a client's id, without owner or namespace
    assert guard.session("x" * 200, client=True).id == "x" * 200
    with pytest.raises(
        ConfigError, match=f"session id: expected printable text of 1 to {MAX_STORED_ID}"
    ):  # stored ids
        guard.session("")


def test_each_event_loop_has_one_lock_on_a_session_and_a_dead_loop_none() -> None:
    import gc

    guard, _ = tool_guard([])
    s = guard.session("locks")

    async def lock() -> asyncio.Lock:
        return s._loop_lock()

    first, second = asyncio.new_event_loop(), asyncio.new_event_loop()
    a = first.run_until_complete(lock())
    b = second.run_until_complete(lock())
    assert a is not b
    assert first.run_until_complete(lock()) is a and second.run_until_complete(lock()) is b
    first.close()
    del first
    gc.collect()
    third = asyncio.new_event_loop()
    c = third.run_until_complete(lock())
    assert c is not a and c is not b and third.run_until_complete(lock()) is c
    assert second.run_until_complete(lock()) is b
    second.close()
    third.close()
