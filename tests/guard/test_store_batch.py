"""Steps saving on the event loop share one SQLite transaction (a batch committed once at the
loop's next turn): each step answers only after the commit; a failing commit fails every step of
its batch closed and leaves each session's state where it was; a failing step fails alone; saves
off the loop commit one by one as before."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fake_openai_server import FakeOpenAIServer, Reply
from guard_helpers import TOOLS_POLICY

from governor.backends import OpenAIBackend
from governor.guard import Guard, SqliteStore, StoreError, load_policy
from governor.guard.stores import sqlite_store
from governor.on_loop import run_on_loop


class Counted(sqlite3.Connection):
    """A connection that counts its commits; one that fails them while ``Counted.failing``."""

    commits = 0
    failing = False

    def commit(self) -> None:
        if Counted.failing:
            raise sqlite3.OperationalError("disk I/O error")
        Counted.commits += 1
        super().commit()


@pytest.fixture(autouse=True)
def held(monkeypatch: pytest.MonkeyPatch) -> None:
    """A batch open to every step of the loop's turn (on a slow machine, a turn's saves can take
    longer than :data:`BATCH_HOLD_S`); the test of the hold sets its own."""
    monkeypatch.setattr(sqlite_store, "BATCH_HOLD_S", 3600.0)


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> Iterator[type[Counted]]:
    real = sqlite3.connect

    def connect(*args: Any, **kwargs: Any) -> sqlite3.Connection:
        return real(*args, factory=Counted, **kwargs)

    monkeypatch.setattr(sqlite_store.sqlite3, "connect", connect)
    Counted.commits, Counted.failing = 0, False
    yield Counted
    Counted.commits, Counted.failing = 0, False


def state(t: int) -> dict[str, Any]:
    return {"format": 1, "t": t, "memory": {}, "n_messages": t}


def record(t: int) -> dict[str, Any]:
    return {"type": "decision", "t": t}


def save_on_loop(store: SqliteStore, ids: list[str], t: int) -> list[BaseException | None]:
    """Save step ``t`` of each session in ``ids``, all at once on one loop; what each raised."""

    def save(sid: str) -> None:
        store.save(sid, state(t), record(t), messages=(t - 1, [{"role": "user", "content": sid}]))

    async def run() -> list[BaseException | None]:
        got = await asyncio.gather(*(run_on_loop(save, sid) for sid in ids), return_exceptions=True)
        return [g if isinstance(g, BaseException) else None for g in got]

    return asyncio.run(run())


def test_steps_saving_on_the_loop_at_once_share_one_commit(
    tmp_path: Path, counted: type[Counted]
) -> None:
    store = SqliteStore(tmp_path / "s.db")
    counted.commits = 0
    ids = [f"s{i}" for i in range(10)]
    assert save_on_loop(store, ids, 1) == [None] * 10
    assert counted.commits == 1
    other = SqliteStore(tmp_path / "s.db")  # another connection reads what was answered as saved
    for sid in ids:
        loaded = other.load(sid)
        assert loaded is not None and loaded["t"] == 1
        assert loaded["messages"] == [{"role": "user", "content": sid}]
        assert other.records(sid) == [record(1)]
    # more steps than a batch holds: the one that fills it commits it
    many = [f"m{i}" for i in range(sqlite_store.BATCH_STEPS + 3)]
    counted.commits = 0
    assert save_on_loop(store, many, 1) == [None] * len(many)
    assert counted.commits == 2
    # off the loop each save commits on its own, as before
    counted.commits = 0
    store.save("x", state(1), record(1))
    store.save("y", state(1), record(1))
    assert counted.commits == 2


def test_a_batch_open_past_its_hold_is_committed_by_the_step_that_joins_it(
    tmp_path: Path, counted: type[Counted], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past :data:`BATCH_HOLD_S` a step commits the batch it joined at once (its own writes in
    it): with no hold at all, each of ten steps at once commits alone, and each is saved."""
    monkeypatch.setattr(sqlite_store, "BATCH_HOLD_S", 0.0)
    store = SqliteStore(tmp_path / "s.db")
    counted.commits = 0
    ids = [f"s{i}" for i in range(10)]
    assert save_on_loop(store, ids, 1) == [None] * 10
    assert counted.commits == 10
    other = SqliteStore(tmp_path / "s.db")
    assert [other.records(sid) for sid in ids] == [[record(1)]] * 10


def test_a_failing_commit_fails_every_step_of_its_batch(
    tmp_path: Path, counted: type[Counted]
) -> None:
    store = SqliteStore(tmp_path / "s.db")
    ids = ["a", "b", "c"]
    assert save_on_loop(store, ids, 1) == [None] * 3
    counted.failing = True
    failed = save_on_loop(store, ids, 2)
    assert all(isinstance(e, StoreError) and "disk I/O error" in str(e) for e in failed)
    counted.failing = False
    other = SqliteStore(tmp_path / "s.db")
    for sid in ids:
        loaded = other.load(sid)
        assert loaded is not None and loaded["t"] == 1 and len(loaded["messages"]) == 1
        assert other.records(sid) == [record(1)]
    # the store goes on: the next batch commits
    assert save_on_loop(store, ids, 2) == [None] * 3
    assert [other.records(sid) for sid in ids] == [[record(1), record(2)]] * 3


def test_a_failing_step_fails_alone_and_leaves_its_batch_committed(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "s.db")
    sqlite3.connect(tmp_path / "s.db").executescript(  # the decision of session "bad" is refused
        "CREATE TRIGGER refuse BEFORE INSERT ON decisions WHEN NEW.session = 'bad'"
        " BEGIN SELECT RAISE(ABORT, 'refused'); END;"
    )
    got = save_on_loop(store, ["a", "bad", "c"], 1)
    assert got[0] is None and got[2] is None
    assert isinstance(got[1], StoreError) and "refused" in str(got[1])
    assert store.load("bad") is None  # its state, written before the refused record: undone
    assert [store.records(s) for s in ("a", "bad", "c")] == [[record(1)], [], [record(1)]]
    # the first step of a batch failing (it has no savepoint: its batch is rolled back, empty)
    got = save_on_loop(store, ["bad", "d", "e"], 1)
    assert isinstance(got[0], StoreError) and got[1:] == [None, None]
    assert store.load("bad") is None
    assert [store.records(s) for s in ("bad", "d", "e")] == [[], [record(1)], [record(1)]]


def completion(content: str) -> Reply:
    message = {"role": "assistant", "content": content}
    body = {"model": "fake", "choices": [{"index": 0, "message": message, "finish_reason": "stop"}]}
    return Reply(body=body)


def test_steps_whose_batch_fails_to_commit_fall_back_and_stay_where_they_were(
    tmp_path: Path,
    server: FakeOpenAIServer,
    make_backend: Callable[..., OpenAIBackend],
    counted: type[Counted],
) -> None:
    server.script("/chat/completions", *(completion(f"hello {i}") for i in range(4)))
    guard = Guard(load_policy(TOOLS_POLICY), make_backend(), store=SqliteStore(tmp_path / "s.db"))
    assert guard.on_loop
    sessions = [guard.session("a"), guard.session("b")]
    chat = [{"role": "user", "content": "hi"}]

    async def steps() -> list[Any]:
        return list(await asyncio.gather(*(s.respond(chat) for s in sessions)))

    counted.failing = True
    failed = asyncio.run(steps())
    counted.failing = False
    for answer, session in zip(failed, sessions, strict=True):
        assert answer.summary["kind"] == "fallback"
        assert any("disk I/O error" in e for e in answer.decision.errors)
        assert session.state.t == 0 and guard.store.records(session.id) == []
    done = asyncio.run(steps())
    assert [a.summary["kind"] for a in done] == ["execute", "execute"]
    assert [s.state.t for s in sessions] == [1, 1]
    assert [len(guard.store.records(s.id)) for s in sessions] == [1, 1]


def test_a_batch_left_by_a_loop_that_stopped_is_rolled_back(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "s.db")

    def save(sid: str) -> None:
        store.save(sid, state(1), record(1))

    loop = asyncio.new_event_loop()
    steps = [loop.create_task(run_on_loop(save, sid)) for sid in ("a", "b")]
    loop.call_soon(loop.stop)
    loop.run_forever()  # one turn: both steps write and wait for a commit that never runs
    assert not any(s.done() for s in steps)
    for s in steps:
        s.cancel()
    loop.close()
    assert save_on_loop(store, ["c"], 1) == [None]
    other = SqliteStore(tmp_path / "s.db")
    assert other.load("a") is None and other.load("b") is None
    assert other.records("c") == [record(1)]


class FailingReads(sqlite3.Connection):
    """A connection whose reads fail while ``FailingReads.failing`` (a disk error on a read)."""

    failing = False

    def execute(self, sql: str, *args: Any) -> sqlite3.Cursor:  # type: ignore[override]
        if FailingReads.failing and sql.startswith("SELECT"):
            raise sqlite3.OperationalError("disk I/O error")
        return super().execute(sql, *args)


def test_a_read_failing_on_the_loop_fails_the_open_batch_and_later_steps_answer_truly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A read on the loop that fails closes the loop's connection, whose transaction holds the
    open batch: the batch's steps fail, and a step saving after it in the same turn is answered
    as its write went (saved and answered, or neither), never failed with its write kept."""
    real = sqlite3.connect
    monkeypatch.setattr(
        sqlite_store.sqlite3, "connect", lambda *a, **k: real(*a, factory=FailingReads, **k)
    )
    store = SqliteStore(tmp_path / "s.db")
    FailingReads.failing = False

    def save(sid: str) -> None:
        store.save(sid, state(1), record(1))

    def read_then_save(sid: str) -> None:
        FailingReads.failing = True
        try:
            with pytest.raises(StoreError, match="disk I/O error"):
                store.load("elsewhere")
        finally:
            FailingReads.failing = False
        save(sid)

    async def run() -> list[BaseException | None]:
        got = await asyncio.gather(
            run_on_loop(save, "a"),
            run_on_loop(save, "b"),
            run_on_loop(read_then_save, "c"),
            return_exceptions=True,
        )
        return [g if isinstance(g, BaseException) else None for g in got]

    got = asyncio.run(run())
    other = SqliteStore(tmp_path / "s.db")
    for sid, outcome in zip(("a", "b", "c"), got, strict=True):
        saved = other.load(sid) is not None
        assert saved == (outcome is None), (sid, outcome, saved)
        assert other.records(sid) == ([record(1)] if saved else [])
    assert isinstance(got[0], StoreError) and isinstance(got[1], StoreError)
    assert save_on_loop(store, ["d"], 1) == [None]  # the store goes on
    assert other.records("d") == [record(1)]


def test_a_batch_left_by_a_stopped_loop_is_rolled_back_by_a_call_off_the_loop(
    tmp_path: Path,
) -> None:
    """The steps of a batch whose loop stopped before its commit were never answered: a save or
    a read off the loop on that thread rolls it back (as the thread's next loop does), neither
    commits it nor reads it."""
    store = SqliteStore(tmp_path / "s.db")

    def save(sid: str) -> None:
        store.save(sid, state(1), record(1))

    loop = asyncio.new_event_loop()
    steps = [loop.create_task(run_on_loop(save, sid)) for sid in ("a", "b")]
    loop.call_soon(loop.stop)
    loop.run_forever()  # one turn: both steps write and wait for a commit that never runs
    assert not any(s.done() for s in steps)
    assert store.load("a") is None  # not read from the transaction left open
    store.save("c", state(1), record(1))  # off the loop, on the same thread
    other = SqliteStore(tmp_path / "s.db")
    assert other.load("a") is None and other.load("b") is None
    assert other.records("c") == [record(1)]
    for s in steps:
        s.cancel()
    loop.close()


def test_a_step_cancelled_while_it_waits_for_the_commit_leaves_no_write(tmp_path: Path) -> None:
    """A step cancelled before its batch committed (the loop shutting down) ends with its
    cancellation, so its write must not be kept: the batch is rolled back, and its other steps
    fail closed rather than one of them being kept without an answer."""
    store = SqliteStore(tmp_path / "s.db")

    def save(sid: str) -> None:
        store.save(sid, state(1), record(1))

    loop = asyncio.new_event_loop()
    try:
        steps = [loop.create_task(run_on_loop(save, sid)) for sid in ("a", "b")]
        loop.call_soon(loop.stop)
        loop.run_forever()  # one turn: both steps write and wait for the commit (queued next)
        steps[0].cancel()
        got = loop.run_until_complete(asyncio.gather(*steps, return_exceptions=True))
    finally:
        loop.close()
    assert isinstance(got[0], asyncio.CancelledError)
    assert isinstance(got[1], StoreError) and "cancelled" in str(got[1])
    other = SqliteStore(tmp_path / "s.db")
    assert other.load("a") is None and other.load("b") is None
    assert save_on_loop(store, ["c"], 1) == [None]  # the store goes on
    assert other.records("c") == [record(1)]
