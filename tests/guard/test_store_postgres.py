"""The PostgreSQL session store: a round trip; several guards on one database serve a session in
turn with the result of one guard; concurrent calls through several guards lose no update; a
failing store fails closed; no message shows the DSN's password."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from guard_helpers import Conversation, call, tool_guard
from postgres_server import PostgresServer

from governor.backends.scripted import Reply as Scripted
from governor.core import DecisionKind
from governor.guard import MemoryStore, StoreError
from governor.guard.stores import SharedStore, shared_lock, store_from, store_label
from governor.guard.stores.postgres import PostgresStore

pytestmark = pytest.mark.postgres

VOLATILE = {"latency_ms", "step_latency_ms", "seconds"}


def stable(value: Any) -> Any:
    """A decision record or summary without its timings (at any depth)."""
    if isinstance(value, dict):
        return {k: stable(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [stable(v) for v in value]
    return value


def test_a_round_trip_keeps_state_and_records_in_order(postgres_dsn: str) -> None:
    store = PostgresStore(postgres_dsn)
    assert isinstance(store, SharedStore) and store.shared
    assert shared_lock(MemoryStore(), "a") is None
    assert store.load("a") is None and store.records("a") == []
    state = {"t": 1, "messages": [{"role": "user", "content": "héllo"}], "x": [1.5, None]}
    store.save("a", state, {"kind": "execute", "t": 1})
    store.save("a", {**state, "t": 2}, {"kind": "fallback", "t": 2})
    store.save("a", {**state, "t": 2, "probe": True}, None)  # a state without a decision
    store.save("b", {"t": 0}, None)
    assert store.load("a") == {**state, "t": 2, "probe": True}
    assert [r["kind"] for r in store.records("a")] == ["execute", "fallback"]
    assert store.records("b") == [] and store.load("b") == {"t": 0}
    with pytest.raises(StoreError, match="expected JSON-safe state"):
        store.save("a", {"t": float("nan")}, None)
    with store.locked("a"), store.locked("a"):  # re-entered in one thread
        assert store.load("a") == {**state, "t": 2, "probe": True}
    assert PostgresStore(postgres_dsn).load("a") == store.load("a")  # tables made once


TURNS: list[tuple[str, list[Scripted]]] = [
    ("read the secret", [call("read_secret", key="k")]),
    ("email it", [call("send_email", to="x"), "I won't."]),  # blocked, then regenerated
    ("verify me", [call("verify_identity")]),
    ("send 70", [call("transfer_funds", amount=70)]),
    ("send 40 more", [call("transfer_funds", amount=40), "No more."]),  # over the cap
    ("thanks", ["You're welcome."]),
]


def play(guards: Sequence[Any], session_id: str) -> list[dict[str, Any]]:
    """Play TURNS on ``session_id``, turn i through ``guards[i % len(guards)]``; the summaries."""
    chat, out = Conversation(), []
    for i, (text, _) in enumerate(TURNS):
        reply = guards[i % len(guards)].session(session_id).respond_sync(chat.user(text))
        chat.took(reply)
        out.append(stable(reply.summary))
    return out


def guards_for(stores: Sequence[Any]) -> list[Any]:
    """One guard per store, each with the scripted replies of the turns it serves."""
    n = len(stores)
    return [
        tool_guard([r for i, (_, rs) in enumerate(TURNS) if i % n == k for r in rs], store=s)[0]
        for k, s in enumerate(stores)
    ]


def test_two_guards_on_one_database_serve_a_session_in_turn_like_one(postgres_dsn: str) -> None:
    (alone,) = guards_for([MemoryStore()])
    want = play([alone], "s")
    a, b = guards_for([PostgresStore(postgres_dsn), PostgresStore(postgres_dsn)])
    got = play([a, b], "s")
    assert got == want
    assert [s["kind"] for s in got] == ["execute", "execute", "execute", "execute", "execute", "execute"]  # fmt: skip
    assert got[1]["regenerations"] == 1 and got[4]["regenerations"] == 1
    for g in (a, b):
        assert g.backend.remaining == 0
    saved = [dict(g.store.load("s") or {}) for g in (a, alone)]
    assert all(isinstance(state.pop("log"), str) for state in saved)  # each its own log's id
    assert saved[0] == saved[1]
    assert [stable(r) for r in b.store.records("s")] == [
        stable(r) for r in alone.store.records("s")
    ]
    assert [r["t"] for r in a.store.records("s")] == [1, 2, 3, 4, 5, 6]
    # both guards' sessions see the last committed decision, whoever made it
    assert a.session("s").state == b.session("s").state == alone.session("s").state


class SlowReads(PostgresStore):
    """Reads that take a while: a wide window between a call's read and its write."""

    def load(self, session_id: str, since: Any = None) -> Any:
        found = super().load(session_id, since)
        time.sleep(0.02)
        return found


class Unshared(SlowReads):
    """The same database without the lock (a control: what the lock prevents)."""

    shared = False


async def commits(guards: Sequence[Any], per_guard: int) -> None:
    calls = [g.session("s").commit(f"note {k} from {i}") for i, g in enumerate(guards) for k in range(per_guard)]  # fmt: skip
    await asyncio.gather(*calls)


def test_concurrent_calls_through_three_guards_lose_no_update(postgres_dsn: str) -> None:
    guards = [tool_guard([], store=SlowReads(postgres_dsn))[0] for _ in range(3)]
    start = time.perf_counter()
    asyncio.run(commits(guards, 5))
    seconds = time.perf_counter() - start
    state = guards[0].store.load("s")
    assert state is not None and state["t"] == 15 and len(state["messages"]) == 15
    records = guards[1].store.records("s")
    assert [r["t"] for r in records] == list(range(1, 16))
    notes = sorted(r["action"]["content"] for r in records)
    assert notes == sorted(f"note {k} from {i}" for i in range(3) for k in range(5))
    assert seconds >= 15 * 0.02  # one call at a time
    assert guards[2].session("s").state.t == 15


def test_without_the_lock_concurrent_guards_lose_updates(postgres_dsn: str) -> None:
    guards = [tool_guard([], store=Unshared(postgres_dsn))[0] for _ in range(3)]
    asyncio.run(commits(guards, 5))
    state = PostgresStore(postgres_dsn).load("s")
    assert state is not None and state["t"] < 15  # each guard went on from its own copy


def test_a_write_that_fails_falls_back_and_keeps_the_last_saved_state(postgres_dsn: str) -> None:
    store = PostgresStore(postgres_dsn)
    cut = PostgresStore(postgres_dsn)

    def cut_the_connections(_: Any) -> str:
        conn = cut._connect("cut")
        try:
            conn.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                " WHERE datname = current_database() AND pid <> pg_backend_pid()"
            )
            conn.commit()
        finally:
            conn.close()
        return call("transfer_funds", amount=5)

    replies: list[Scripted] = [call("verify_identity"), cut_the_connections, "ok"]
    guard, backend = tool_guard(replies, store=store)
    s, chat = guard.session("s"), Conversation()
    chat.took(s.respond_sync(chat.user("verify me")))
    out = s.respond_sync(chat.user("pay 5"))
    assert out.reply.tool_calls == () and out.decision.kind is DecisionKind.FALLBACK
    assert out.reply.content == guard.policy.fallbacks["check_failed"]
    assert any("cannot save s" in e for e in out.summary["errors"])
    assert [r["t"] for r in store.records("s")] == [1]
    assert store.load("s")["t"] == 1  # type: ignore[index]
    # the session goes on from its last saved decision (the client resends its history)
    again = s.respond_sync([*chat.messages[:2], {"role": "user", "content": "hello"}])
    assert again.reply.content == "ok" and backend.remaining == 0
    assert [r["t"] for r in store.records("s")] == [1, 2]


def test_a_stopped_server_fails_the_call_before_asking_the_upstream(
    postgres_server: PostgresServer, postgres_dsn: str
) -> None:
    guard, backend = tool_guard(
        [call("verify_identity"), call("transfer_funds", amount=5)],
        store=PostgresStore(postgres_dsn, connect_timeout_s=2),
    )
    s, chat = guard.session("s"), Conversation()
    chat.took(s.respond_sync(chat.user("verify me")))
    postgres_server.stop()
    try:
        with pytest.raises(StoreError, match="cannot connect to lock session s"):
            s.respond_sync(chat.user("pay 5"))
        assert backend.remaining == 1  # no unchecked candidate was even asked for
    finally:
        postgres_server.start()
    out = s.respond_sync(chat.messages)
    assert out.reply.tool_calls[0].name == "transfer_funds"
    assert [r["t"] for r in guard.store.records("s")] == [1, 2]


@pytest.mark.parametrize(
    "dsn",
    [
        "host=/nonexistent-governor dbname=x user=u password=hunter2",
        "postgresql://u:hunter2@127.0.0.1:1/db",
        "host=x password=hunter2 junk",
    ],
)
def test_errors_name_the_server_never_the_password(dsn: str, tmp_path: Path) -> None:
    with pytest.raises(StoreError) as caught:
        PostgresStore(dsn, connect_timeout_s=1)
    assert "hunter2" not in str(caught.value) and "postgres store" in str(caught.value)
    with pytest.raises(StoreError) as caught:
        store_from(f"postgres:{dsn}")
    assert "hunter2" not in str(caught.value)


def test_the_serve_flag_names_a_postgres_store(postgres_dsn: str) -> None:
    spec = f"postgres:{postgres_dsn} password=hunter2"
    store = store_from(spec)
    assert isinstance(store, PostgresStore)
    label = store_label(spec, store)
    assert "hunter2" not in label and "dbname=" in label


def backends(dsn: str) -> int:
    """The number of server processes serving clients of the database."""
    import psycopg

    with psycopg.connect(dsn) as conn:
        row = conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
            " AND pid <> pg_backend_pid()"
        ).fetchone()
    assert row is not None
    return int(row[0])


def test_connections_are_pooled_and_a_restart_costs_no_later_call(
    postgres_server: PostgresServer, postgres_dsn: str
) -> None:
    store = PostgresStore(postgres_dsn, pool_size=2)
    for t in range(20):
        with store.locked("a"):
            store.load("a")
            store.save("a", {"t": t}, {"t": t})
        store.records("a")
    assert backends(postgres_dsn) <= 2  # 60 calls, not 60 connections
    postgres_server.stop()
    postgres_server.start()
    with store.locked("a"):  # the pooled connections died with the server: new ones are made
        assert store.load("a") == {"t": 19}
        store.save("a", {"t": 20}, {"t": 20})
    assert [r["t"] for r in store.records("a")][-2:] == [19, 20]
    store.close()
    deadline = time.monotonic() + 5  # a closed connection's server process ends a moment later
    while backends(postgres_dsn) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert backends(postgres_dsn) == 0


def test_a_probe_writes_nothing_that_stays(postgres_dsn: str) -> None:
    store = PostgresStore(postgres_dsn)
    store.probe()
    store.probe()
    assert store.load("governor-readiness-probe") is None
    store.close()


class CountingReads(PostgresStore):
    """Counts the messages each load reads."""

    def __init__(self, dsn: str) -> None:
        super().__init__(dsn)
        self.read: list[int] = []

    def load(self, session_id: str, since: Any = None) -> Any:
        found = super().load(session_id, since)
        self.read.append(-1 if found is None else len(found["messages"]))
        return found


def test_a_call_reads_only_the_messages_another_instance_added(postgres_dsn: str) -> None:
    a_store, b_store = CountingReads(postgres_dsn), CountingReads(postgres_dsn)
    (a, b) = [tool_guard([], store=s)[0] for s in (a_store, b_store)]
    alone = tool_guard([])[0]
    step = {"role": "assistant", "content": None, "tool_calls": [{"id": "c", "type": "function", "function": {"name": "read_file", "arguments": "{}"}}]}  # fmt: skip

    async def run() -> None:
        for i in range(30):  # turn by turn, two instances, and one guard alone alongside
            for g in (a, b) if i % 3 else (a,):
                await g.session("s").commit(step)
                await alone.session("s").commit(step)

    asyncio.run(run())
    assert max(a_store.read[2:]) <= 2 and max(b_store.read[2:]) <= 2  # the tail, not all
    for g in (a, b):
        state = g.session("s").state
        assert state.t == alone.session("s").state.t == 50 and len(state.messages) == 50
        assert state.memory == alone.session("s").state.memory
    # a reset by one instance starts a new log: the other reads the session whole again
    assert asyncio.run(b.reset("s"))
    asyncio.run(a.session("s").commit(step))
    state = a.session("s").state
    assert state.t == 1 and len(state.messages) == 1
    asyncio.run(b.session("s").commit(step))
    assert b.session("s").state.t == 2 and len(b.session("s").state.messages) == 2
