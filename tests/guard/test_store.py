"""Session state survives a restart (SQLite); a failing store fails closed; formulas round-trip."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from guard_helpers import Conversation, call, tool_guard

from governor.core import DecisionKind
from governor.errors import ConfigError
from governor.guard import Guard, MemoryStore, SqliteStore, StoreError, load_policy
from governor.guard.constraints import ToolLTLConstraint
from governor.guard.session_state import state_from_json, state_to_json
from governor.ltl.monitor import MonitorSet
from governor.ltl.parser import parse

PROGRESSED = [
    ("G(read_secret -> G !send_email)", [{"read_secret"}, set()]),
    ("!transfer_funds W verify_identity", [set(), {"verify_identity"}]),
    ("G(delete_file -> WX(!any_tool_call W user_confirmed))", [{"delete_file"}, set()]),
    ("G(transfer_funds -> O verify_identity)", [{"verify_identity"}, {"transfer_funds"}]),
    ("a U (b & X c)", [{"a"}, {"b"}]),
    ("F(a & WX b)", [{"a"}]),
]


@pytest.mark.parametrize(("text", "trace"), PROGRESSED)
def test_progressed_formulas_round_trip_through_text(text: str, trace: list[set[str]]) -> None:
    monitors = MonitorSet.from_specs([("r", "", text)])
    state = monitors.start(set())
    for labels in trace:
        state = monitors.step(state, labels)
        f = state.formulas[0]
        assert parse(str(f)) == f
    if text.startswith("G(read"):
        assert "end" in str(f)  # progressed states mention ``end``, and it reads back


def test_a_rebuilt_guard_continues_each_session_from_sqlite(tmp_path: Path) -> None:
    db = tmp_path / "sessions.db"
    guard, _ = tool_guard(
        [call("read_secret", key="k"), call("verify_identity"), call("transfer_funds", amount=70)],
        store=SqliteStore(db),
    )
    a, chat = guard.session("a"), Conversation()
    chat.took(a.respond_sync(chat.user("read the secret")))
    b, bchat = guard.session("b"), Conversation()
    bchat.took(b.respond_sync(bchat.user("verify me")))
    bchat.took(b.respond_sync(bchat.user("send 70")))
    del guard, a, b

    policy = load_policy(Path(__file__).resolve().parents[2] / "examples/policies/tools.yaml")
    again, backend = tool_guard(
        [call("send_email", to="x"), "I won't.", call("transfer_funds", amount=40), "No more."],
        store=SqliteStore(db),
    )
    assert again.policy == policy or again.policy.ltl == policy.ltl
    a2 = again.session("a")
    out = a2.respond_sync(chat.user("email it"))
    assert out.reply.content == "I won't." and out.summary["regenerations"] == 1
    b2 = again.session("b")
    assert b2.state.memory["transfer_cap"].sums == {"total_over_100": 70.0}
    out = b2.respond_sync(bchat.user("send 40 more"))
    assert out.reply.content == "No more."
    assert backend.remaining == 0
    records = SqliteStore(db).records("a")
    assert [r["kind"] for r in records] == ["execute", "execute"]
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("SELECT count(*) FROM sessions").fetchone()[0] == 2
    conn.close()


class BrokenStore(MemoryStore):
    def __init__(self) -> None:
        super().__init__()
        self.broken = False

    def save(self, session_id: str, state: Any, record: Any, **more: Any) -> None:
        if self.broken:
            raise StoreError("disk full")
        super().save(session_id, state, record, **more)


def test_a_failing_store_falls_back_and_keeps_the_last_saved_state() -> None:
    store = BrokenStore()
    guard, _ = tool_guard([call("verify_identity"), call("transfer_funds", amount=5)], store=store)
    s, chat = guard.session("s"), Conversation()
    chat.took(s.respond_sync(chat.user("verify me")))
    saved = s.state
    store.broken = True
    out = s.respond_sync(chat.user("pay 5"))
    assert out.reply.tool_calls == () and out.decision.kind is DecisionKind.FALLBACK
    assert out.reply.content == guard.policy.fallbacks["check_failed"]
    assert any("disk full" in e for e in out.summary["errors"])
    assert s.state is saved and len(store.records("s")) == 1
    with pytest.raises(StoreError, match="disk full"):
        s.commit_sync("x")


def test_a_state_saved_under_another_formula_starts_the_new_formula() -> None:
    guard, _ = tool_guard([call("read_secret")])
    s = guard.session("s")
    s.respond_sync([{"role": "user", "content": "read"}])
    saved = state_to_json(s.state, guard.observer.constraints)
    saved["memory"]["no_exfiltration"]["rule"] = "G !read_secret"
    again = state_from_json(json.loads(json.dumps(saved)), guard.observer.constraints)
    # a rule whose formula changed is the old one removed and the new one added (from now)
    assert again.changed == {
        "added": ("no_exfiltration",),
        "removed": ("no_exfiltration",),
        "replayed": (),
    }
    with pytest.raises(ConfigError, match="expected a saved guard session, found KeyError"):
        state_from_json({"format": 1}, guard.observer.constraints)


def test_an_unusable_sqlite_path_is_a_store_error(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="cannot"):
        SqliteStore(tmp_path / "missing" / "dir" / "s.db")
    assert isinstance(Guard, type)


def test_a_probe_checks_the_store_is_writable_and_leaves_no_row(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite3"
    store = SqliteStore(path)
    store.save("a", {"t": 1}, None)
    store.probe()
    MemoryStore().probe()
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT id FROM sessions").fetchall() == [("a",)]
        db.execute("BEGIN IMMEDIATE")  # another writer holds the write lock
        with pytest.raises(StoreError, match="cannot write"):
            SqliteStore(path, timeout_s=0.05).probe()
        db.rollback()


PREVIOUS_SCHEMA = (
    "CREATE TABLE sessions (id TEXT PRIMARY KEY, state TEXT NOT NULL, updated REAL NOT NULL)",
    "CREATE TABLE decisions (n INTEGER PRIMARY KEY AUTOINCREMENT, session TEXT NOT NULL,"
    " t INTEGER NOT NULL, record TEXT NOT NULL, created REAL NOT NULL)",
    "CREATE INDEX decisions_session ON decisions (session, n)",
    "CREATE TABLE messages (session TEXT NOT NULL, i INTEGER NOT NULL, message TEXT NOT NULL,"
    " PRIMARY KEY (session, i)) WITHOUT ROWID",
)


@pytest.mark.parametrize("made_by", ["this version", "the AUTOINCREMENT schema"])
def test_a_store_file_keeps_sessions_records_and_messages(tmp_path: Path, made_by: str) -> None:
    path = tmp_path / "s.db"
    if made_by != "this version":
        with sqlite3.connect(path) as db:
            db.execute("PRAGMA journal_mode=WAL")
            for statement in PREVIOUS_SCHEMA:
                db.execute(statement)
            db.execute(
                "INSERT INTO decisions (session, t, record, created) VALUES ('old', 1, '{}', 0)"
            )
        db.close()
    store = SqliteStore(path)
    hello = {"role": "user", "content": "hi"}
    for t in (1, 2, 3):
        for sid in ("a", "b"):
            state = {"t": t, "n_messages": t, "log": "L"}
            store.save(sid, state, {"t": t, "of": sid}, messages=(t - 1, [{**hello, "n": t}]))
    store.save("a", {"t": 4, "n_messages": 1, "log": "M"}, None, messages=(0, [hello]))
    store.close()
    again = SqliteStore(path)
    assert again.records("a") == [{"t": t, "of": "a"} for t in (1, 2, 3)]
    assert again.records("b") == [{"t": t, "of": "b"} for t in (1, 2, 3)]
    loaded = again.load("b", ("L", 2))
    assert loaded == {"t": 3, "log": "L", "messages": [{**hello, "n": 3}], "messages_from": 2}
    assert again.load("a") == {"t": 4, "log": "M", "messages": [hello], "messages_from": 0}
    with sqlite3.connect(path) as db:
        numbers = [
            n for (n,) in db.execute("SELECT n FROM decisions WHERE session != 'old' ORDER BY n")
        ]
        tables = {name for (name,) in db.execute("SELECT name FROM sqlite_master")}
    db.close()
    first = 1 if made_by == "this version" else 2
    assert numbers == list(range(first, first + 6))  # in the order saved, none reused
    assert ("sqlite_sequence" in tables) == (made_by != "this version")


def test_each_rule_is_saved_with_the_formula_of_the_constraints_given() -> None:
    guard, _ = tool_guard([call("read_secret")])
    s = guard.session("s")
    s.respond_sync([{"role": "user", "content": "read"}])
    ours = guard.observer.constraints
    i, rule = next((i, c) for i, c in enumerate(ours) if c.name == "no_exfiltration")
    changed = ToolLTLConstraint(
        replace(rule.rule, formula=parse("G !read_secret")), rule.vocabulary
    )
    theirs = (*ours[:i], changed, *ours[i + 1 :])
    as_list = list(ours)

    def saved_rule(constraints: Any) -> str:
        return str(state_to_json(s.state, constraints)["memory"]["no_exfiltration"]["rule"])

    original = "G(read_secret -> G !send_email)"
    assert [saved_rule(c) for c in (ours, theirs, ours, as_list)] == [
        original,
        "G !read_secret",
        original,
        original,
    ]
    as_list[i] = changed  # the same list, changed: read again, not remembered
    assert saved_rule(as_list) == "G !read_secret"
    assert state_from_json(state_to_json(s.state, theirs), theirs).changed is None


def test_a_save_that_fails_half_way_leaves_nothing_and_the_next_one_works(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    store = SqliteStore(path, timeout_s=0.05)
    hello = {"role": "user", "content": "hi"}
    store.save("a", {"t": 1, "n_messages": 1, "log": "L"}, {"t": 1}, messages=(0, [hello]))
    with sqlite3.connect(path) as other:
        other.execute("ALTER TABLE decisions RENAME TO kept")
    other.close()
    # the state and the message go in before the decision, which finds no table: all rolled back
    with pytest.raises(StoreError, match="cannot save b: no such table: decisions"):
        store.save("b", {"t": 1, "n_messages": 1, "log": "M"}, {"t": 1}, messages=(0, [hello]))
    with sqlite3.connect(path) as other:
        assert other.execute("SELECT count(*) FROM messages WHERE session = 'b'").fetchone() == (0,)
        other.execute("ALTER TABLE kept RENAME TO decisions")
        other.execute("BEGIN IMMEDIATE")  # another writer holds the file
        with pytest.raises(StoreError, match="cannot save b: database is locked"):
            store.save("b", {"t": 1}, {"t": 1})
        other.rollback()
    other.close()
    assert store.load("b") is None
    store.save("b", {"t": 2, "n_messages": 1, "log": "M"}, {"t": 2}, messages=(0, [hello]))
    assert store.records("b") == [{"t": 2}]
    assert store.load("b") == {"t": 2, "log": "M", "messages": [hello], "messages_from": 0}


def test_checkpoints_run_on_their_own_thread_and_keep_the_wal_bounded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A save never copies the WAL into the file itself (two fdatasync calls and every page, on
    the event loop when the step runs there): every CHECKPOINT_EVERY commits the file goes to
    the process's checkpoint thread, which keeps the WAL from growing."""
    import threading
    import time

    import governor.sqlite as sqlite_module

    ran: list[str] = []
    real = sqlite_module.checkpoint

    def counted(path: str, timeout_s: float) -> bool:
        ran.append(threading.current_thread().name)
        return real(path, timeout_s)

    monkeypatch.setattr(sqlite_module, "checkpoint", counted)
    store = SqliteStore(tmp_path / "s.db")
    db = store._db()
    assert db.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == sqlite_module.BACKSTOP_PAGES
    wal = tmp_path / "s.db-wal"
    sizes = []
    for i in range(6 * sqlite_module.CHECKPOINT_EVERY):
        state = {"t": 1, "payload": "x" * 3000}
        store.save(f"session-{i}", state, {"type": "decision", "n": i})
        if i % sqlite_module.CHECKPOINT_EVERY == sqlite_module.CHECKPOINT_EVERY - 1:
            time.sleep(0.2)  # (the thread checkpoints; the next commit rewinds the WAL)
            sizes.append(wal.stat().st_size)
    assert len(ran) >= 5 and set(ran) == {"governor-checkpoints"}
    # rewound each time: the WAL holds about one round of commits, not all six
    assert max(sizes) < 3 * min(sizes) and max(sizes) < 4 << 20
    assert store.load("session-0") is not None
    store.close()


def test_a_wal_that_never_catches_up_is_rewound(tmp_path: Path) -> None:
    """A checkpoint copies the WAL only up to what the oldest reader still reads, and the WAL is
    rewound only once all of it was copied: under steady commits it would grow. Past
    REWIND_PAGES the checkpoint thread waits for the readers and writers (``RESTART``), so the
    next commit starts the WAL over."""
    import threading

    import governor.sqlite as sqlite_module

    path = tmp_path / "s.db"
    store = SqliteStore(path)
    store._db().execute("PRAGMA wal_autocheckpoint=0")  # (only the checkpoint run here)
    for i in range(100):
        store.save(f"s-{i}", {"t": 1, "payload": "y" * 8000}, None)
    reader = sqlite3.connect(path, check_same_thread=False)
    reader.execute("BEGIN")
    reader.execute("SELECT count(*) FROM sessions").fetchone()  # reads the WAL as it is now
    for i in range(100, 200):
        store.save(f"s-{i}", {"t": 1, "payload": "y" * 8000}, None)
    threading.Timer(0.05, reader.rollback).start()  # the reader ends while the checkpoint waits
    old = sqlite_module.REWIND_PAGES
    try:
        sqlite_module.REWIND_PAGES = 100
        assert sqlite_module.checkpoint(str(path), 5.0)
    finally:
        sqlite_module.REWIND_PAGES = old
    store.save("after", {"t": 1}, None)
    frames = sqlite3.connect(path).execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()[1]
    assert frames < 20  # started over (else the 400 and more pages of the saves, and these)
    reader.close()
    store.close()


def test_a_reader_holding_an_old_snapshot_holds_the_writers_only_briefly(tmp_path: Path) -> None:
    """While a rewind (``RESTART``) waits for the readers of the WAL, writers wait too: a reader
    holding an old snapshot held every save for the checkpoint's whole timeout (the store's,
    30 s), so saves failed. The rewind waits at most REWIND_WAIT_S; the next checkpoint tries
    again."""
    import threading
    import time

    import governor.sqlite as sqlite_module

    path = tmp_path / "s.db"
    store = SqliteStore(path)
    store._db().execute("PRAGMA wal_autocheckpoint=0")
    for i in range(100):
        store.save(f"s-{i}", {"t": 1, "payload": "y" * 8000}, None)
    reader = sqlite3.connect(path, check_same_thread=False)
    reader.execute("BEGIN")
    reader.execute("SELECT count(*) FROM sessions").fetchone()  # holds this snapshot throughout
    for i in range(100, 200):
        store.save(f"s-{i}", {"t": 1, "payload": "y" * 8000}, None)
    old = sqlite_module.REWIND_PAGES
    sqlite_module.REWIND_PAGES = 100
    try:
        rewind = threading.Thread(target=sqlite_module.checkpoint, args=(str(path), 3.0))
        rewind.start()
        time.sleep(0.1)  # (copied, and waiting for the reader)
        writer = SqliteStore(path, timeout_s=1.0)
        start = time.monotonic()
        writer.save("w", {"t": 1}, None)  # a StoreError ("database is locked") before
        waited = time.monotonic() - start
        rewind.join()
    finally:
        sqlite_module.REWIND_PAGES = old
    assert waited < sqlite_module.REWIND_WAIT_S + 0.5
    assert writer.load("w") is not None
    reader.close()
    writer.close()
    store.close()


def test_a_checkpoint_leaves_a_file_gone_gone(tmp_path: Path) -> None:
    """A store's file deleted while its checkpoint waits in the queue is not created anew (an
    empty database where the store was)."""
    import governor.sqlite as sqlite_module

    path = tmp_path / "gone.db"
    assert not sqlite_module.checkpoint(str(path), 1.0)
    assert not path.exists()


def test_checkpoint_failures_are_logged_and_the_thread_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A file that is not a database is a failure to report, not one to leave to the next
    checkpoint; a checkpoint raising what it does not expect ends neither the thread nor the
    checkpoints of the other files."""
    import threading

    import governor.sqlite as sqlite_module

    bad = tmp_path / "bad.db"
    bad.write_bytes(b"not a database" * 100)
    with caplog.at_level("WARNING", logger="governor.sqlite"):
        assert not sqlite_module.checkpoint(str(bad), 1.0)
    assert any("bad.db" in r.getMessage() for r in caplog.records)

    done = threading.Event()
    seen: list[str] = []

    def flaky(path: str, timeout_s: float) -> bool:
        seen.append(path)
        if path == "first":
            raise RuntimeError("unexpected")
        done.set()
        return True

    monkeypatch.setattr(sqlite_module, "checkpoint", flaky)
    checkpoints = sqlite_module._Checkpoints()
    with caplog.at_level("ERROR", logger="governor.sqlite"):
        checkpoints.ask("first", 1.0)
        checkpoints.ask("second", 1.0)
        assert done.wait(5.0), f"expected the second file checkpointed, found only {seen}"
    assert seen == ["first", "second"]
    assert any("first" in r.getMessage() for r in caplog.records)


def test_a_connection_that_wrote_on_the_loop_waits_for_the_write_lock_again_off_it(
    tmp_path: Path,
) -> None:
    """On the event loop a save never lets SQLite sleep for the write lock (its connection's
    busy timeout is 0, the waits are awaited pauses); the same thread's connection used off the
    loop afterwards waits for the lock again, as any thread's does."""
    import asyncio
    import threading

    from governor.on_loop import run_on_loop

    store = SqliteStore(tmp_path / "s.db")
    asyncio.run(run_on_loop(store.save, "on-loop", {"t": 1}, None))
    other = sqlite3.connect(tmp_path / "s.db", check_same_thread=False)
    other.execute("BEGIN IMMEDIATE")  # holds the write lock for 0.2 s
    threading.Timer(0.2, other.rollback).start()
    store.save("off-loop", {"t": 1}, None)  # waited: not "database is locked" at once
    assert store.load("off-loop") is not None
    other.close()
    store.close()


def test_shared_lock_only_for_stores_that_can_lock(tmp_path: Path) -> None:
    from governor.guard.stores import shared_lock

    class SaysShared(MemoryStore):  # a flag alone, with no ``locked``: not a shared store
        shared = True

    shared = SqliteStore(tmp_path / "s.db", shared=True)
    alone = SqliteStore(tmp_path / "a.db")
    for _ in range(2):  # the second time from the per-class answer
        assert shared_lock(MemoryStore(), "a") is None
        assert shared_lock(SaysShared(), "a") is None
        assert shared_lock(alone, "a") is None
        lock = shared_lock(shared, "a")
        assert lock is not None
        with lock:
            pass
