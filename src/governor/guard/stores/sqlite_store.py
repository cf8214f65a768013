"""Sessions in one SQLite file: :class:`SqliteStore`, kept across restarts.

WAL; one row per session holding its state as JSON, one row per message of a session (a save
appends the new ones: ``appends_messages``), one row per decision record; a save is one
transaction; a connection per thread, kept open, so threads never share one. Imports the
stores' base and the SQLite helpers.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
import weakref
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


class SqliteStore:
    """Sessions in the SQLite file ``path`` (created with its tables when missing).

    Each thread keeps its own connection open between calls (opening one per call cost more than
    the call, and closing the last one checkpoints the WAL); a connection that failed is closed
    and the thread's next call opens a new one. :meth:`close` closes them all (also done when
    the store is garbage-collected).
    """

    appends_messages = True

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
        now = time.time()
        try:
            with self._db() as db, db:  # one transaction: the state and its decision, or neither
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
