"""Sessions in one SQLite file: :class:`SqliteStore`, kept across restarts.

WAL with ``synchronous=NORMAL``; one row per session holding its state as JSON, one row per
message of a session (a save appends the new ones: ``appends_messages``), one row per decision
record; a save is one ``BEGIN IMMEDIATE`` transaction; a connection per thread, kept open, so
threads never share one. With ``shared=True`` several processes on one machine serve the same
file (``governor serve --workers N``): the store is then a :class:`~.base.SharedStore` whose lock
on a session is a lock of a byte of the lock file ``PATH.locks`` (POSIX ``fcntl``), taken by one
thread of a process at a time. Imports the stores' base and the SQLite helpers.
"""

from __future__ import annotations

import asyncio
import errno
import json
import os
import sqlite3
import threading
import time
import weakref
import zlib
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from governor.guard.stores.base import (
    PROBE_ID,
    MessageLog,
    Since,
    StoreError,
    close_all,
    encoded,
    encoded_messages,
    message_range,
    with_messages,
)
from governor.on_loop import await_here, blocking, on_loop, sleep
from governor.sqlite import use_wal

SCHEMA = (
    "CREATE TABLE IF NOT EXISTS sessions ("
    " id TEXT PRIMARY KEY, state TEXT NOT NULL, updated REAL NOT NULL)",
    "CREATE TABLE IF NOT EXISTS decisions ("
    " n INTEGER PRIMARY KEY AUTOINCREMENT, session TEXT NOT NULL, t INTEGER NOT NULL,"
    " record TEXT NOT NULL, created REAL NOT NULL)",
    "CREATE INDEX IF NOT EXISTS decisions_session ON decisions (session, n)",
    "CREATE TABLE IF NOT EXISTS messages ("
    " session TEXT NOT NULL, i INTEGER NOT NULL, message TEXT NOT NULL,"
    " PRIMARY KEY (session, i)) WITHOUT ROWID",
)


BATCH_STEPS = 64
"""The most steps one batch of the event loop's saves holds: the one that fills it commits it."""

BATCH_HOLD_S = 0.002
"""The longest a batch of the event loop's saves stays open to more steps: a step that joins it
later commits it at once. One turn of a busy loop runs many steps one after the other; without
this bound the first of them would wait for the last before it answers, and every other
process's writes would wait on the file's write lock for the whole turn."""

LOCK_SLOTS = 1 << 16
"""The bytes of the lock file a shared store locks (a session's is its id's CRC-32 modulo this;
two sessions on one byte share a lock, which only serialises them)."""


class SqliteStore:
    """Sessions in the SQLite file ``path`` (created with its tables when missing).

    Each thread keeps its own connection open between calls (opening one per call cost more than
    the call, and closing the last one checkpoints the WAL); a connection that failed is closed
    and the thread's next call opens a new one. :meth:`close` closes them all (also done when
    the store is garbage-collected).

    Durability: WAL with ``synchronous=NORMAL``. A committed save survives the process being
    killed at any point; after a power loss or an operating-system crash the last saves before
    it may be rolled back (the file stays consistent). ``shared=True``: several processes of
    one machine share the file (:meth:`locked`); every call then re-reads its session's state.
    """

    appends_messages = True

    def __init__(
        self,
        path: str | Path,
        *,
        timeout_s: float = 30.0,
        shared: bool = False,
        lock_timeout_s: float = 120.0,
    ) -> None:
        self.path = Path(path)
        self.timeout_s = timeout_s
        self.shared = shared
        self.quick = True
        """A load or a save is a local file's transaction; what it may wait for (another
        process's lock on a session, another connection's write) is awaited on the event loop
        inside :func:`governor.on_loop.run_on_loop`, never slept there."""
        self.lock_timeout_s = lock_timeout_s
        self._local = threading.local()
        self._open: list[sqlite3.Connection] = []
        self._open_lock = threading.Lock()
        weakref.finalize(self, close_all, self._open, self._open_lock)
        try:
            with self._db() as db:
                use_wal(db, self.timeout_s)
                with db:
                    for statement in SCHEMA:
                        db.execute(statement)
        except sqlite3.Error as exc:
            raise StoreError(f"session store {self.path}: cannot create tables: {exc}") from exc
        self._locks: _FileLocks | None = None
        if shared:
            self._locks = _FileLocks(Path(f"{self.path}.locks"), lock_timeout_s)
            weakref.finalize(self, self._locks.close)

    @contextmanager
    def locked(self, session_id: str) -> Iterator[None]:
        """Hold ``session_id``'s lock across the processes sharing the file (and this process's
        threads) until the block ends; a StoreError after ``lock_timeout_s`` of waiting. A store
        not ``shared``: nothing to hold."""
        if self._locks is None:
            yield
            return
        with self._locks.held(zlib.crc32(session_id.encode("utf-8")) % LOCK_SLOTS, session_id):
            yield

    @contextmanager
    def _db(self) -> Iterator[sqlite3.Connection]:
        """This thread's connection (opened on first use); closed and forgotten when it fails.
        A batch left open on it by a loop that is not running now is settled first
        (:meth:`_settle_stale_batch`): nothing reads or writes in its transaction."""
        if getattr(self._local, "batch", None) is not None:
            self._settle_stale_batch()
        db: sqlite3.Connection | None = getattr(self._local, "db", None)
        if db is None:
            try:
                db = sqlite3.connect(self.path, timeout=self.timeout_s, check_same_thread=False)
                db.execute("PRAGMA synchronous=NORMAL")  # in WAL: durable across process kills
            except sqlite3.Error as exc:
                raise StoreError(f"session store {self.path}: cannot open: {exc}") from exc
            self._local.db = db
            with self._open_lock:
                self._open.append(db)
        try:
            yield db
        except sqlite3.Error:
            self._forget(db)
            raise

    def _forget(self, db: sqlite3.Connection) -> None:
        """Close this thread's connection ``db``, which failed (the next call opens another).
        The open batch in its transaction fails with it (closing rolls it back): no later step
        joins a batch whose connection is gone."""
        batch: _Batch | None = getattr(self._local, "batch", None)
        if batch is not None and batch.db is db:
            self._commit_batch(batch, "its connection failed and was closed")
        if getattr(self._local, "db", None) is db:
            self._local.db = None
        with self._open_lock:
            if db in self._open:
                self._open.remove(db)
        db.close()

    def close(self) -> None:
        """Close every thread's connection (a later call opens a new one)."""
        close_all(self._open, self._open_lock)
        self._local = threading.local()

    def load(self, session_id: str, since: Since | None = None) -> Mapping[str, Any] | None:
        try:
            with self._db() as db:
                row = db.execute(
                    "SELECT state FROM sessions WHERE id = ?", (session_id,)
                ).fetchone()
                if row is None:
                    return None
                state = json.loads(row[0])
                span = message_range(state, since)
                start = 0 if span is None else span[0]
                texts: list[str] = []
                if span is not None:
                    texts = [
                        r[0]
                        for r in db.execute(
                            "SELECT message FROM messages WHERE session = ? AND i >= ? AND i < ?"
                            " ORDER BY i",
                            (session_id, *span),
                        )
                    ]
        except sqlite3.Error as exc:
            raise StoreError(f"session store {self.path}: cannot read {session_id}: {exc}") from exc
        return with_messages(state, texts, start)

    def save(
        self,
        session_id: str,
        state: Mapping[str, Any],
        record: Mapping[str, Any] | None,
        messages: MessageLog | None = None,
    ) -> None:
        text, rec = encoded(session_id, state, record)
        start, texts = encoded_messages(session_id, messages)
        t, appends = int(state.get("t", 0)), messages is not None

        def write(db: sqlite3.Connection) -> None:
            _write(db, session_id, text, rec, t, appends, start, texts)

        if on_loop():  # a step on the event loop: its save joins the loop's batch
            self._save_batched(session_id, write)
            return
        try:
            with self._db() as db:
                self._commit_open_batch()  # (this loop's, from code on its thread off it)
                with _immediate(db, self.timeout_s):  # state and decision, or neither
                    write(db)
        except sqlite3.Error as exc:
            raise StoreError(f"session store {self.path}: cannot save {session_id}: {exc}") from exc

    def _save_batched(self, session_id: str, write: Callable[[sqlite3.Connection], None]) -> None:
        """``write`` in the event loop's open batch (one begun when none is open), inside its own
        savepoint (a failing step's writes are undone, the batch's others kept); returns once
        the batch committed, a StoreError when it did not."""
        failed = f"session store {self.path}: cannot save {session_id}"
        try:
            with self._db() as db:
                batch = self._joined(db)
        except sqlite3.Error as exc:
            raise StoreError(f"{failed}: {exc}") from exc
        db = batch.db  # (the batch's own connection: its transaction is the one joined)
        alone = not batch.waiters  # the first step of a batch needs no savepoint: see _undo_step
        try:
            if alone:
                write(db)
            else:
                db.execute("SAVEPOINT step")
                write(db)
                db.execute("RELEASE step")
        except BaseException as exc:
            self._undo_step(batch, alone)
            if isinstance(exc, sqlite3.Error):
                raise StoreError(f"{failed}: {exc}") from exc
            raise
        waiter: asyncio.Future[str | None] = batch.loop.create_future()
        batch.waiters.append(waiter)
        if len(batch.waiters) >= BATCH_STEPS or time.monotonic() - batch.began >= BATCH_HOLD_S:
            self._commit_batch(batch)
        error = await_here(waiter)
        if error is not None:
            raise StoreError(f"{failed}: {error}")

    def _undo_step(self, batch: _Batch, alone: bool) -> None:
        """Undo the writes of a step that failed in ``batch``: back to its savepoint, or, for the
        step ``alone`` in it so far, the whole transaction (the batch then closes, empty). When
        that fails, or SQLite rolled the whole transaction back, the batch fails: every step in
        it."""
        db = batch.db
        try:
            if db.in_transaction and not alone:
                db.execute("ROLLBACK TO step")
                db.execute("RELEASE step")
                return
        except sqlite3.Error:
            pass
        self._commit_batch(batch, "another save in its transaction failed and took it down")

    def _joined(self, db: sqlite3.Connection) -> _Batch:
        """This thread's open batch, or a new one begun and committed at the loop's next turn.
        ``BEGIN IMMEDIATE`` without SQLite's busy handler (whose sleeps would hold every other
        request): at once when the file is free, else again after pauses awaited on the loop
        (:func:`_polled`) for up to ``timeout_s``; the loop's connection writes only here, so
        its busy timeout stays 0."""

        loop = asyncio.get_running_loop()

        def begun() -> bool:
            open_batch: _Batch | None = getattr(self._local, "batch", None)
            if open_batch is not None:
                if open_batch.loop is loop:  # (perhaps opened while this step waited)
                    return True
                # left by a loop that stopped before it committed: none of its steps answered
                self._commit_batch(open_batch, "its event loop stopped before the commit")
            if db.in_transaction:  # left open by a failed call: none of it is anyone's
                db.rollback()
            db.execute("PRAGMA busy_timeout = 0")
            try:
                db.execute("BEGIN IMMEDIATE")
            except sqlite3.OperationalError as exc:
                code = getattr(exc, "sqlite_errorcode", sqlite3.SQLITE_BUSY)
                if code & 0xFF != sqlite3.SQLITE_BUSY:
                    raise
                return False
            batch = self._local.batch = _Batch(db, loop)
            loop.call_soon(self._commit_batch, batch)
            return True

        if not _polled(begun, time.monotonic() + self.timeout_s):
            raise sqlite3.OperationalError(f"database is locked (waited {self.timeout_s:g} s)")
        batch: _Batch = self._local.batch
        return batch

    def _commit_batch(self, batch: _Batch, error: str | None = None) -> None:
        """Close ``batch``: commit it (rolled back instead with ``error``), then wake its steps
        with the outcome (None: committed). Runs on the batch's loop thread; once per batch."""
        if batch.closed:
            return
        batch.closed = True
        if getattr(self._local, "batch", None) is batch:
            self._local.batch = None
        db = batch.db
        if error is None and any(w.cancelled() for w in batch.waiters):
            # a step cancelled before the commit ends unanswered, and its released savepoint
            # cannot be taken out alone: the batch is rolled back, its other steps fail closed
            error = "a save in its transaction was cancelled before the commit"
        try:
            if error is None and not db.in_transaction:
                error = "its transaction was rolled back"
            if error is None:
                db.commit()
            elif db.in_transaction:
                db.rollback()
        except sqlite3.Error as exc:
            error = error or f"the commit failed: {exc}"
            self._forget(db)
        if batch.loop.is_closed():
            return
        for waiter in batch.waiters:
            if not waiter.done():
                waiter.set_result(error)

    def _settle_stale_batch(self) -> None:
        """Roll back this thread's open batch when its loop is not running now (it stopped
        before the commit: none of its steps was answered); one of a running loop is left."""
        batch: _Batch = self._local.batch
        loop = batch.loop
        if loop.is_closed() or not loop.is_running():
            self._commit_batch(batch, "its event loop stopped before the commit")

    def _commit_open_batch(self) -> None:
        """Commit this thread's open batch now (a call off the loop is about to use the thread's
        connection)."""
        batch = getattr(self._local, "batch", None)
        if batch is not None:
            self._commit_batch(batch)

    def probe(self) -> None:
        """Check that a save would succeed (a row written, then rolled back: nothing stays)."""
        try:
            with self._db() as db:
                try:
                    db.execute("BEGIN IMMEDIATE")
                    db.execute(
                        "INSERT INTO sessions (id, state, updated) VALUES (?, '{}', 0)"
                        " ON CONFLICT(id) DO NOTHING",
                        (PROBE_ID,),
                    )
                finally:
                    if db.in_transaction:
                        db.rollback()
        except sqlite3.Error as exc:
            raise StoreError(f"session store {self.path}: cannot write: {exc}") from exc

    def records(self, session_id: str) -> list[dict[str, Any]]:
        try:
            with self._db() as db:
                rows = db.execute(
                    "SELECT record FROM decisions WHERE session = ? ORDER BY n", (session_id,)
                ).fetchall()
        except sqlite3.Error as exc:
            raise StoreError(f"session store {self.path}: cannot read {session_id}: {exc}") from exc
        return [json.loads(r[0]) for r in rows]

    def session_ids(self, limit: int = 100_000) -> list[str]:
        """The ids of the sessions saved (at most ``limit``, in order)."""
        try:
            with self._db() as db:
                rows = db.execute(
                    "SELECT id FROM sessions ORDER BY id LIMIT ?", (limit,)
                ).fetchall()
        except sqlite3.Error as exc:
            raise StoreError(f"session store {self.path}: cannot list the sessions: {exc}") from exc
        return [str(r[0]) for r in rows]


def _write(
    db: sqlite3.Connection,
    session_id: str,
    text: str,
    rec: str | None,
    t: int,
    appends: bool,
    start: int,
    texts: list[str],
) -> None:
    """A save's statements (in the caller's transaction): the session's messages from index
    ``start`` on (when ``appends``), its state, its decision record (when given)."""
    now = time.time()
    if appends:
        db.execute("DELETE FROM messages WHERE session = ? AND i >= ?", (session_id, start))
        db.executemany(
            "INSERT INTO messages (session, i, message) VALUES (?, ?, ?)",
            ((session_id, start + k, m) for k, m in enumerate(texts)),
        )
    db.execute(
        "INSERT INTO sessions (id, state, updated) VALUES (?, ?, ?)"
        " ON CONFLICT(id) DO UPDATE SET state = excluded.state, updated = excluded.updated",
        (session_id, text, now),
    )
    if rec is not None:
        db.execute(
            "INSERT INTO decisions (session, t, record, created) VALUES (?, ?, ?, ?)",
            (session_id, t, rec, now),
        )


@contextmanager
def _immediate(db: sqlite3.Connection, timeout_s: float) -> Iterator[None]:
    """One write transaction taken at its start (``BEGIN IMMEDIATE``: the write lock is waited
    for by SQLite's busy handler, never fails half-way as a read turned write can), committed
    at the end or rolled back on any error. Off the event loop only (a step there saves in
    the loop's batch: :meth:`SqliteStore._save_batched`)."""
    if db.in_transaction:
        db.rollback()
    db.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        db.rollback()
        raise
    db.commit()


class _Batch:
    """The write transaction that the saves of steps on the event loop share until it commits
    (at the loop's next turn, once it holds :data:`BATCH_STEPS` steps, or when a step joins it
    :data:`BATCH_HOLD_S` or more after it began)."""

    __slots__ = ("began", "closed", "db", "loop", "waiters")

    def __init__(self, db: sqlite3.Connection, loop: asyncio.AbstractEventLoop) -> None:
        self.db = db
        self.loop = loop
        self.began = time.monotonic()
        """When its transaction began (:data:`BATCH_HOLD_S`)."""
        self.waiters: list[asyncio.Future[str | None]] = []
        """One per step saved in it, set to the outcome (None: committed; else why not)."""
        self.closed = False


def _polled(attempt: Callable[[], bool], deadline: float) -> bool:
    """Whether ``attempt()`` succeeded before ``deadline``: tried at once, then again after
    pauses of 0.5 ms doubling up to 20 ms (awaited on the event loop, slept elsewhere)."""
    pause = 0.0005
    while not attempt():
        if time.monotonic() + pause > deadline:
            return False
        sleep(pause)
        pause = min(pause * 2, 0.02)
    return True


class _FileLocks:
    """Exclusive locks on single bytes of ``path``, across processes (POSIX record locks) and
    across this process's threads (a thread lock per byte: a record lock belongs to the whole
    process, so two threads must not hold the same byte at once)."""

    def __init__(self, path: Path, timeout_s: float) -> None:
        try:
            import fcntl
        except ImportError:
            raise StoreError(
                "session store: a SQLite store shared by processes needs POSIX file locks"
                " (fcntl), found none on this platform"
            ) from None
        self._fcntl = fcntl
        self.path = path
        self.timeout_s = timeout_s
        try:
            self._fd: int | None = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError as exc:
            raise StoreError(f"session store: cannot open the lock file {path}: {exc}") from exc
        self._slots: dict[int, threading.Lock] = {}
        self._slots_lock = threading.Lock()

    def close(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)

    @contextmanager
    def held(self, slot: int, what: str) -> Iterator[None]:
        with self._slots_lock:
            local = self._slots.setdefault(slot, threading.Lock())
        deadline = time.monotonic() + self.timeout_s
        # on the event loop another call there may hold it: wait on a thread, not the loop
        got = local.acquire(blocking=False) or blocking(local.acquire, True, self.timeout_s)
        if not got:
            raise StoreError(f"session store: {what}: {self._late()}")
        try:
            self._lock(slot, what, deadline)
            try:
                self._same_file(what)
                yield
            finally:
                if self._fd is not None:
                    self._fcntl.lockf(self._fd, self._fcntl.LOCK_UN, 1, slot)
        finally:
            local.release()

    def _lock(self, slot: int, what: str, deadline: float) -> None:
        """Take byte ``slot`` of the file: at once when free, else polled (:func:`_polled`)
        until ``deadline``."""
        fcntl = self._fcntl

        def taken() -> bool:
            if self._fd is None:
                raise StoreError(f"session store: {what}: the store is closed")
            try:
                fcntl.lockf(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, slot)
            except OSError as exc:
                if exc.errno not in (errno.EAGAIN, errno.EACCES):  # another process holds it
                    raise StoreError(f"session store: {what}: cannot lock: {exc}") from exc
                return False
            return True

        if not _polled(taken, deadline):
            raise StoreError(f"session store: {what}: {self._late()}")

    def _same_file(self, what: str) -> None:
        """Fail closed when the lock file was removed or replaced since it was opened: a process
        that opened the new one would take the same session's lock on another file."""
        fd = self._fd
        try:
            same = fd is not None and os.fstat(fd).st_ino == os.stat(self.path).st_ino
        except OSError:
            same = False
        if not same:
            raise StoreError(
                f"session store: {what}: expected the lock file {self.path} this process opened,"
                " found it removed or replaced (restart the service)"
            )

    def _late(self) -> str:
        return (
            f"expected its lock within {self.timeout_s:g} s, found it held by another call"
            " on the session (or one sharing its lock) all that time"
        )
