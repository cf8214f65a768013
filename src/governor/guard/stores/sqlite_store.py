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

import errno
import json
import os
import sqlite3
import threading
import time
import weakref
import zlib
from collections.abc import Iterator, Mapping
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
from governor.on_loop import blocking, on_loop, polled
from governor.sqlite import BACKSTOP_PAGES, CHECKPOINT_EVERY, checkpoint_soon, use_wal

SCHEMA = (
    "CREATE TABLE IF NOT EXISTS sessions ("
    " id TEXT PRIMARY KEY, state TEXT NOT NULL, updated REAL NOT NULL)",
    # n: one past the largest so far (no row is ever deleted, so never reused); not AUTOINCREMENT,
    # whose counter row in sqlite_sequence is one more page written by every save (a file made
    # with AUTOINCREMENT keeps it and works the same)
    "CREATE TABLE IF NOT EXISTS decisions ("
    " n INTEGER PRIMARY KEY, session TEXT NOT NULL, t INTEGER NOT NULL,"
    " record TEXT NOT NULL, created REAL NOT NULL)",
    "CREATE INDEX IF NOT EXISTS decisions_session ON decisions (session, n)",
    "CREATE TABLE IF NOT EXISTS messages ("
    " session TEXT NOT NULL, i INTEGER NOT NULL, message TEXT NOT NULL,"
    " PRIMARY KEY (session, i)) WITHOUT ROWID",
)


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
        self._commits = 0
        """Saves committed since the file was last handed to its checkpoint thread."""
        weakref.finalize(self, close_all, self._open, self._open_lock)
        db = self._db()
        try:
            use_wal(db, self.timeout_s)
            with db:
                for statement in SCHEMA:
                    db.execute(statement)
        except sqlite3.Error as exc:
            self._drop(db)
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

    def _db(self) -> _Connection:
        """This thread's connection (opened on first use). A call whose statement on it fails
        with a ``sqlite3.Error`` hands it to :meth:`_drop`."""
        db: _Connection | None = getattr(self._local, "db", None)
        if db is None:
            try:
                db = sqlite3.connect(
                    self.path, timeout=self.timeout_s, check_same_thread=False, factory=_Connection
                )
                db.execute("PRAGMA synchronous=NORMAL")  # in WAL: durable across process kills
                # checkpoints run on a thread of their own (save: checkpoint_soon); this one's
                # only if that thread falls far behind
                db.execute(f"PRAGMA wal_autocheckpoint={BACKSTOP_PAGES}")
            except sqlite3.Error as exc:
                raise StoreError(f"session store {self.path}: cannot open: {exc}") from exc
            self._local.db = db
            with self._open_lock:
                self._open.append(db)
        return db

    def _drop(self, db: sqlite3.Connection) -> None:
        """Close and forget ``db``, which failed (this thread's next call opens a new one)."""
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
        db = self._db()
        try:
            row = db.execute("SELECT state FROM sessions WHERE id = ?", (session_id,)).fetchone()
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
            self._drop(db)
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
        now = time.time()
        db = self._db()
        try:
            _begin(db, self.timeout_s)  # one transaction: state, messages and decision, or none
            try:
                if messages is not None:
                    db.execute(
                        "DELETE FROM messages WHERE session = ? AND i >= ?", (session_id, start)
                    )
                    db.executemany(
                        "INSERT INTO messages (session, i, message) VALUES (?, ?, ?)",
                        ((session_id, start + k, m) for k, m in enumerate(texts)),
                    )
                db.execute(
                    "INSERT INTO sessions (id, state, updated) VALUES (?, ?, ?)"
                    " ON CONFLICT(id) DO UPDATE SET state = excluded.state,"
                    " updated = excluded.updated",
                    (session_id, text, now),
                )
                if rec is not None:
                    t = int(state.get("t", 0))
                    db.execute(
                        "INSERT INTO decisions (session, t, record, created) VALUES (?, ?, ?, ?)",
                        (session_id, t, rec, now),
                    )
                db.commit()
            except BaseException:
                db.rollback()
                raise
        except sqlite3.Error as exc:
            self._drop(db)
            raise StoreError(f"session store {self.path}: cannot save {session_id}: {exc}") from exc
        self._commits += 1  # (threads may race on the count: a checkpoint a little late or soon)
        if self._commits >= CHECKPOINT_EVERY:
            self._commits = 0
            checkpoint_soon(self.path, self.timeout_s)

    def probe(self) -> None:
        """Check that a save would succeed (a row written, then rolled back: nothing stays)."""
        db = self._db()
        try:
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
            self._drop(db)
            raise StoreError(f"session store {self.path}: cannot write: {exc}") from exc

    def records(self, session_id: str) -> list[dict[str, Any]]:
        db = self._db()
        try:
            rows = db.execute(
                "SELECT record FROM decisions WHERE session = ? ORDER BY n", (session_id,)
            ).fetchall()
        except sqlite3.Error as exc:
            self._drop(db)
            raise StoreError(f"session store {self.path}: cannot read {session_id}: {exc}") from exc
        return [json.loads(r[0]) for r in rows]

    def session_ids(self, limit: int = 100_000) -> list[str]:
        """The ids of the sessions saved (at most ``limit``, in order)."""
        db = self._db()
        try:
            rows = db.execute("SELECT id FROM sessions ORDER BY id LIMIT ?", (limit,)).fetchall()
        except sqlite3.Error as exc:
            self._drop(db)
            raise StoreError(f"session store {self.path}: cannot list the sessions: {exc}") from exc
        return [str(r[0]) for r in rows]


def _begin(db: _Connection, timeout_s: float) -> None:
    """Begin a write transaction taken at its start (``BEGIN IMMEDIATE``: the write lock is
    waited for, never fails half-way as a read turned write can); the caller commits it, or
    rolls it back on any error. The wait is SQLite's busy handler on a thread; on the event loop
    (:func:`governor.on_loop.on_loop`), where the handler's sleeps would hold every other
    request, the lock is tried at once and again after pauses awaited on the loop."""
    if db.in_transaction:
        db.rollback()
    if on_loop():
        _begin_yielding(db, timeout_s)
    else:
        if not db.waits_when_busy:  # (it wrote on the loop)
            db.execute(f"PRAGMA busy_timeout = {int(timeout_s * 1000)}")
            db.waits_when_busy = True
        db.execute("BEGIN IMMEDIATE")


def _begin_yielding(db: _Connection, timeout_s: float) -> None:
    """``BEGIN IMMEDIATE`` without SQLite's busy handler: at once when the file is free, else
    again after an awaited pause (0.5 ms doubling up to 20 ms) for up to ``timeout_s``. The
    event loop's connection writes only here, so its busy timeout stays 0."""
    if db.waits_when_busy:
        db.execute("PRAGMA busy_timeout = 0")
        db.waits_when_busy = False

    def begun() -> bool:
        try:
            db.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            code = getattr(exc, "sqlite_errorcode", sqlite3.SQLITE_BUSY)
            if code & 0xFF != sqlite3.SQLITE_BUSY:
                raise
            return False
        return True

    if not polled(begun, time.monotonic() + timeout_s):
        raise sqlite3.OperationalError(f"database is locked (waited {timeout_s:g} s)")


class _Connection(sqlite3.Connection):
    """A store's connection, which knows whether SQLite's busy handler still waits on it (a
    connection that wrote on the event loop never waits: :func:`_begin_yielding`)."""

    waits_when_busy = True


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
        """Take byte ``slot`` of the file: at once when free, else polled (:func:`governor.on_loop.polled`)
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

        if not polled(taken, deadline):
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
