"""Where guarded sessions are kept between calls and across restarts.

A :class:`SessionStore` loads a session's saved state (JSON-safe, see :mod:`.state`) and saves it
together with the record of the decision that produced it, in one write. :class:`MemoryStore`
keeps them in this process; :class:`SqliteStore` in one SQLite file (WAL; one row per session
holding its state as JSON, one row per decision record; a save is one transaction; a connection
per thread, kept open, so threads never share one). A failing write raises :class:`StoreError`; the session
then fails closed. A store that several processes share (:class:`SharedStore`, e.g. PostgreSQL in
:mod:`.store_postgres`) says so with ``shared = True`` and gives a lock per session: a session then
holds no state between calls and re-reads it under that lock at the start of each call. Imports
the error tree only.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
import weakref
from collections.abc import Iterator, Mapping, MutableSequence
from contextlib import AbstractContextManager, contextmanager, suppress
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from governor.errors import GovernorError
from governor.sqlite import use_wal

SCHEMA = (
    "CREATE TABLE IF NOT EXISTS sessions ("
    " id TEXT PRIMARY KEY, state TEXT NOT NULL, updated REAL NOT NULL)",
    "CREATE TABLE IF NOT EXISTS decisions ("
    " n INTEGER PRIMARY KEY AUTOINCREMENT, session TEXT NOT NULL, t INTEGER NOT NULL,"
    " record TEXT NOT NULL, created REAL NOT NULL)",
    "CREATE INDEX IF NOT EXISTS decisions_session ON decisions (session, n)",
)


PROBE_ID = "governor-readiness-probe"
"""The session a store's ``probe`` writes and rolls back (readiness checks leave no row)."""


class StoreError(GovernorError):
    """A session store could not read or write."""


@runtime_checkable
class SessionStore(Protocol):
    """Keeps each session's state and its decision records."""

    def load(self, session_id: str) -> Mapping[str, Any] | None:
        """The saved state of ``session_id``; None for a new session."""
        ...

    def save(
        self, session_id: str, state: Mapping[str, Any], record: Mapping[str, Any] | None
    ) -> None:
        """Save ``state`` (and the decision ``record``, when given) in one write."""
        ...

    def records(self, session_id: str) -> list[dict[str, Any]]:
        """The decision records of ``session_id``, oldest first."""
        ...


@runtime_checkable
class SharedStore(SessionStore, Protocol):
    """A store several processes share: each call on a session holds the session's lock."""

    shared: bool
    """True: sessions re-read their state under :meth:`locked` at the start of each call."""

    def locked(self, session_id: str) -> AbstractContextManager[None]:
        """Hold ``session_id``'s lock for a call (its loads and its save happen inside)."""
        ...


def shared_lock(store: SessionStore, session_id: str) -> AbstractContextManager[None] | None:
    """The lock of ``session_id`` in a shared store; None for a store of one process."""
    if isinstance(store, SharedStore) and store.shared:
        return store.locked(session_id)
    return None


def _dumps(value: Any) -> str:
    return json.dumps(value, sort_keys=True, allow_nan=False)


def _encoded(
    session_id: str, state: Mapping[str, Any], record: Mapping[str, Any] | None
) -> tuple[str, str | None]:
    """The JSON texts of a state and its decision record; a StoreError when not JSON-safe."""
    try:
        return _dumps(state), None if record is None else _dumps(record)
    except (TypeError, ValueError) as exc:
        raise StoreError(f"session {session_id}: expected JSON-safe state, found {exc}") from exc


class MemoryStore:
    """Sessions in this process (copied through JSON, so what is saved is what a file holds)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._states: dict[str, str] = {}
        self._records: dict[str, list[str]] = {}

    def load(self, session_id: str) -> Mapping[str, Any] | None:
        with self._lock:
            text = self._states.get(session_id)
        return None if text is None else json.loads(text)

    def save(
        self, session_id: str, state: Mapping[str, Any], record: Mapping[str, Any] | None
    ) -> None:
        text, rec = _encoded(session_id, state, record)
        with self._lock:
            self._states[session_id] = text
            if rec is not None:
                self._records.setdefault(session_id, []).append(rec)

    def records(self, session_id: str) -> list[dict[str, Any]]:
        with self._lock:
            return [json.loads(r) for r in self._records.get(session_id, [])]

    def probe(self) -> None:
        """Nothing to check: memory is always writable."""


class SqliteStore:
    """Sessions in the SQLite file ``path`` (created with its tables when missing).

    Each thread keeps its own connection open between calls (opening one per call cost more than
    the call, and closing the last one checkpoints the WAL); a connection that failed is closed
    and the thread's next call opens a new one. :meth:`close` closes them all (also done when
    the store is garbage-collected).
    """

    def __init__(self, path: str | Path, *, timeout_s: float = 30.0) -> None:
        self.path = Path(path)
        self.timeout_s = timeout_s
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

    @contextmanager
    def _db(self) -> Iterator[sqlite3.Connection]:
        """This thread's connection (opened on first use); closed and forgotten when it fails."""
        db: sqlite3.Connection | None = getattr(self._local, "db", None)
        if db is None:
            try:
                db = sqlite3.connect(self.path, timeout=self.timeout_s, check_same_thread=False)
            except sqlite3.Error as exc:
                raise StoreError(f"session store {self.path}: cannot open: {exc}") from exc
            self._local.db = db
            with self._open_lock:
                self._open.append(db)
        try:
            yield db
        except sqlite3.Error:
            self._local.db = None
            with self._open_lock:
                if db in self._open:
                    self._open.remove(db)
            db.close()
            raise

    def close(self) -> None:
        """Close every thread's connection (a later call opens a new one)."""
        close_all(self._open, self._open_lock)
        self._local = threading.local()

    def load(self, session_id: str) -> Mapping[str, Any] | None:
        try:
            with self._db() as db:
                row = db.execute(
                    "SELECT state FROM sessions WHERE id = ?", (session_id,)
                ).fetchone()
        except sqlite3.Error as exc:
            raise StoreError(f"session store {self.path}: cannot read {session_id}: {exc}") from exc
        return None if row is None else json.loads(row[0])

    def save(
        self, session_id: str, state: Mapping[str, Any], record: Mapping[str, Any] | None
    ) -> None:
        text, rec = _encoded(session_id, state, record)
        now = time.time()
        try:
            with self._db() as db, db:  # one transaction: the state and its decision, or neither
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
        except sqlite3.Error as exc:
            raise StoreError(f"session store {self.path}: cannot save {session_id}: {exc}") from exc

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


def close_all(
    conns: MutableSequence[Any], lock: threading.Lock, errors: tuple[type[Exception], ...] = ()
) -> None:
    """Close and forget every connection in ``conns`` (taken under ``lock``); an error of a type
    in ``errors`` while closing one is ignored (a broken connection is closed already)."""
    with lock:
        closing = list(conns)
        conns.clear()
    for conn in closing:
        with suppress(*errors):
            conn.close()
