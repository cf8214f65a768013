"""Sessions in PostgreSQL, for several service instances behind one load balancer.

:class:`PostgresStore` keeps the same two things as :class:`~.sqlite_store.SqliteStore`:
one row per session holding its state as JSON (``governor_sessions``), one row per message of a
session (``governor_messages``: a save appends the new ones) and one row per decision record
(``governor_decisions``); a save is one transaction. It is a *shared* store
(``shared = True``): a session's call runs inside :meth:`PostgresStore.locked`, which opens a
transaction and takes the transaction-level advisory lock of the session
(``pg_advisory_xact_lock(NAMESPACE, hashtext(session_id))``); the session re-reads its state in
that transaction, asks the upstream, and its save commits the transaction, which releases the
lock. So two instances sharing one database serve a session one call at a time, each call seeing
the last committed decision, with the same result as one instance. A call reads the session's
state row and only the messages its instance does not hold yet (``load(since=)``: the rows from
the index it holds, while the state's message log is the one it read), so its cost does not
grow with the session. A connection per call (per
lock), so threads never share one; a connection is taken from, and given back to, a pool of at
most ``pool_size`` idle ones (rolled back first; a broken one is dropped, so a database restart
costs the calls in flight, never a later one's safety). psycopg (v3, the ``[postgres]`` extra) is
imported on first use. Every failure is a :class:`~.base.StoreError` naming what failed and the
server (host, port, database, user; never the password). Imports the stores' base.
"""

from __future__ import annotations

import json
import threading
import time
import weakref
from collections import deque
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, suppress
from types import ModuleType
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

NAMESPACE = 0x676F76
"""The first key of every advisory lock this store takes (the second: the session id's hash)."""

SCHEMA = (
    "CREATE TABLE IF NOT EXISTS governor_sessions ("
    " id TEXT PRIMARY KEY, state TEXT NOT NULL, updated DOUBLE PRECISION NOT NULL)",
    "CREATE TABLE IF NOT EXISTS governor_decisions ("
    " n BIGSERIAL PRIMARY KEY, session TEXT NOT NULL, t INTEGER NOT NULL,"
    " record TEXT NOT NULL, created DOUBLE PRECISION NOT NULL)",
    "CREATE INDEX IF NOT EXISTS governor_decisions_session ON governor_decisions (session, n)",
    "CREATE TABLE IF NOT EXISTS governor_messages ("
    " session TEXT NOT NULL, i INTEGER NOT NULL, message TEXT NOT NULL,"
    " PRIMARY KEY (session, i))",
)
READ_MESSAGES = (
    "SELECT message FROM governor_messages WHERE session = %s AND i >= %s AND i < %s ORDER BY i"
)
DROP_MESSAGES = "DELETE FROM governor_messages WHERE session = %s AND i >= %s"
INSERT_MESSAGE = "INSERT INTO governor_messages (session, i, message) VALUES (%s, %s, %s)"
LOCK = "SELECT pg_advisory_xact_lock(%s, hashtext(%s))"
UPSERT = (
    "INSERT INTO governor_sessions (id, state, updated) VALUES (%s, %s, %s)"
    " ON CONFLICT (id) DO UPDATE SET state = excluded.state, updated = excluded.updated"
)
PROBE = (
    "INSERT INTO governor_sessions (id, state, updated) VALUES (%s, '{}', 0)"
    " ON CONFLICT (id) DO NOTHING"
)
READ_STATE = "SELECT state FROM governor_sessions WHERE id = %s"
RECORDS = "SELECT record FROM governor_decisions WHERE session = %s ORDER BY n"
SESSION_IDS = "SELECT id FROM governor_sessions ORDER BY id LIMIT %s"
INSERT_RECORD = (
    "INSERT INTO governor_decisions (session, t, record, created) VALUES (%s, %s, %s, %s)"
)


def _psycopg() -> ModuleType:
    try:
        import psycopg
    except ImportError as exc:
        raise StoreError(
            f"postgres store: expected psycopg (pip install -e '.[postgres]' in the governor checkout), found {exc}"
        ) from None
    return psycopg


def describe_dsn(dsn: str) -> tuple[str, str]:
    """What a DSN names, without its password (for messages), and the password ('' if none)."""
    psycopg = _psycopg()
    try:
        parts = psycopg.conninfo.conninfo_to_dict(dsn)
    except psycopg.Error:  # its message may quote the DSN, password included
        raise StoreError(
            "postgres store: expected a libpq DSN or URL, found one that does not parse"
        ) from None
    password = str(parts.get("password") or "")
    shown = " ".join(
        f"{k}={parts[k]}" for k in ("host", "port", "dbname", "user") if parts.get(k) is not None
    )
    return f"postgres store ({shown or 'libpq defaults'})", password


class PostgresStore:
    """Sessions in the PostgreSQL database ``dsn`` (its tables created when missing).

    ``lock_timeout_s`` bounds the wait for a session another instance is serving (then the call
    fails with a :class:`StoreError`); ``connect_timeout_s`` bounds each connection attempt;
    ``pool_size`` is how many idle connections are kept for the next calls (0: none).
    """

    shared = True
    appends_messages = True

    def __init__(
        self,
        dsn: str,
        *,
        connect_timeout_s: float = 10.0,
        lock_timeout_s: float = 120.0,
        pool_size: int = 8,
    ) -> None:
        self._pg = _psycopg()
        self._dsn = dsn
        self.where, self._password = describe_dsn(dsn)
        self.connect_timeout_s = connect_timeout_s
        self.lock_timeout_s = lock_timeout_s
        self.pool_size = pool_size
        self._idle: deque[Any] = deque()
        self._idle_lock = threading.Lock()
        weakref.finalize(self, close_all, self._idle, self._idle_lock, (self._pg.Error,))
        self._held = threading.local()
        conn = self._connect("create the tables")
        try:
            with conn.transaction():  # one instance at a time creates them
                conn.execute("SELECT pg_advisory_xact_lock(%s, 0)", (NAMESPACE,))
                for statement in SCHEMA:
                    conn.execute(statement)
        except self._pg.Error as exc:
            raise self._error("cannot create the tables", exc) from None
        finally:
            conn.close()

    def __repr__(self) -> str:
        return f"PostgresStore({self.where})"

    # ------------------------------------------------------------------ plumbing

    def _error(self, what: str, exc: BaseException) -> StoreError:
        text = " ".join(str(exc).split()) or type(exc).__name__
        if self._password:
            text = text.replace(self._password, "***")
        return StoreError(f"{self.where}: {what}: {text}")

    def _connect(self, what: str) -> Any:
        try:
            conn = self._pg.connect(
                self._dsn,
                connect_timeout=max(1, round(self.connect_timeout_s)),
                options=f"-c lock_timeout={int(self.lock_timeout_s * 1000)}",
            )
        except self._pg.Error as exc:
            raise self._error(f"cannot connect to {what}", exc) from None
        return conn

    def _opened(self, what: str, sql: str, params: tuple[Any, ...]) -> tuple[Any, Any]:
        """A connection (an idle one of the pool, else a new one) and the cursor of its first
        statement ``sql``. A pooled connection found dead by that statement (the server
        restarted) is dropped and the statement runs once more on a new connection; any other
        failure is the caller's (raised as ``psycopg.Error``, the connection given back)."""
        with self._idle_lock:
            conn = self._idle.pop() if self._idle else None
        if conn is not None:
            try:
                return conn, conn.execute(sql, params)
            except self._pg.OperationalError:
                if not conn.broken:
                    self._give_back(conn)
                    raise
                with suppress(self._pg.Error):
                    conn.close()
        conn = self._connect(what)
        try:
            return conn, conn.execute(sql, params)
        except BaseException:
            self._give_back(conn)
            raise

    def _give_back(self, conn: Any) -> None:
        """Return ``conn`` to the pool, rolled back (which releases its locks), or close it."""
        if not (conn.closed or conn.broken):
            try:
                conn.rollback()
            except self._pg.Error:
                pass
            else:
                with self._idle_lock:
                    if len(self._idle) < self.pool_size:
                        self._idle.append(conn)
                        return
        with suppress(self._pg.Error):
            conn.close()

    def close(self) -> None:
        """Close the idle connections (calls in flight keep theirs until they end); also done
        when the store is garbage-collected."""
        close_all(self._idle, self._idle_lock, (self._pg.Error,))

    def _holding(self) -> dict[str, Any]:
        held: dict[str, Any] | None = getattr(self._held, "conns", None)
        if held is None:
            held = self._held.conns = {}
        return held

    # ------------------------------------------------------------------ the lock of a call

    @contextmanager
    def locked(self, session_id: str) -> Iterator[None]:
        """Hold the session's lock (in this thread) until the block ends or a save commits.

        Loads and saves of ``session_id`` inside the block use its transaction; the first save
        commits it (releasing the lock); leaving the block without a save rolls it back.
        """
        held = self._holding()
        if session_id in held:  # re-entered in this thread: already held
            yield
            return
        try:
            conn, _ = self._opened(f"lock session {session_id}", LOCK, (NAMESPACE, session_id))
        except self._pg.Error as exc:
            raise self._error(f"cannot lock session {session_id}", exc) from None
        try:
            held[session_id] = conn
            try:
                yield
            finally:
                held.pop(session_id, None)
        finally:  # rolled back: nothing to undo after a save's commit; releases the lock
            self._give_back(conn)

    # ------------------------------------------------------------------ SessionStore

    def load(self, session_id: str, since: Since | None = None) -> Mapping[str, Any] | None:
        held: Any = self._holding().get(session_id)
        try:
            if held is not None:
                row = held.execute(READ_STATE, (session_id,)).fetchone()
                state, texts, start = self._read(held, session_id, row, since)
            else:
                conn, cursor = self._opened(f"read {session_id}", READ_STATE, (session_id,))
                try:
                    row = cursor.fetchone()
                    state, texts, start = self._read(conn, session_id, row, since)
                finally:
                    self._give_back(conn)
        except self._pg.Error as exc:
            raise self._error(f"cannot read {session_id}", exc) from None
        return None if state is None else with_messages(state, texts, start)

    @staticmethod
    def _read(
        conn: Any, session_id: str, row: Any, since: Since | None
    ) -> tuple[dict[str, Any] | None, list[str], int]:
        """The state of a row, and the texts of the messages it keeps apart that the caller
        does not hold (:func:`~.base.message_range`), from the index returned."""
        if row is None:
            return None, [], 0
        state = json.loads(row[0])
        span = message_range(state, since)
        if span is None:
            return state, [], 0
        texts = [r[0] for r in conn.execute(READ_MESSAGES, (session_id, *span)).fetchall()]
        return state, texts, span[0]

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
        held = self._holding()
        conn: Any = held.pop(session_id, None)  # a save ends the call's transaction
        own = conn is None
        try:
            if own:
                conn, _ = self._opened(f"save {session_id}", LOCK, (NAMESPACE, session_id))
            conn.execute(UPSERT, (session_id, text, now))
            if messages is not None:
                conn.execute(DROP_MESSAGES, (session_id, start))
                with conn.cursor() as cur:
                    cur.executemany(
                        INSERT_MESSAGE, [(session_id, start + k, m) for k, m in enumerate(texts)]
                    )
            if rec is not None:
                conn.execute(INSERT_RECORD, (session_id, int(state.get("t", 0)), rec, now))
            conn.commit()  # one transaction: the state and its decision, or neither
        except self._pg.Error as exc:
            raise self._error(f"cannot save {session_id}", exc) from None
        finally:
            if own and conn is not None:  # a held one goes back when its lock's block ends
                self._give_back(conn)

    def probe(self) -> None:
        """Check that a save would succeed (a row written, then rolled back: nothing stays)."""
        try:
            conn, _ = self._opened("probe", PROBE, (PROBE_ID,))
            self._give_back(conn)  # rolled back
        except self._pg.Error as exc:
            raise self._error("cannot write", exc) from None

    def records(self, session_id: str) -> list[dict[str, Any]]:
        try:
            conn, cursor = self._opened(f"read the records of {session_id}", RECORDS, (session_id,))
            try:
                rows = cursor.fetchall()
            finally:
                self._give_back(conn)
        except self._pg.Error as exc:
            raise self._error(f"cannot read the records of {session_id}", exc) from None
        return [json.loads(r[0]) for r in rows]

    def session_ids(self, limit: int = 100_000) -> list[str]:
        """The ids of the sessions saved (at most ``limit``, in order)."""
        try:
            conn, cursor = self._opened("list the sessions", SESSION_IDS, (limit,))
            try:
                rows = cursor.fetchall()
            finally:
                self._give_back(conn)
        except self._pg.Error as exc:
            raise self._error("cannot list the sessions", exc) from None
        return [str(r[0]) for r in rows]
