"""Trace writers: decision records appended to JSON lines or to SQLite.

The writers share one interface (:class:`TraceWriter`): :class:`JsonlTrace` for files,
:class:`SqliteTrace` for the embedded store; :func:`open_trace` picks one by suffix
(:func:`trace_format`). Records are made by :func:`governor.trace.record.decision_record`.

Every writer has its own run id, stamped on each record and summary, so two runs written to one
file (one after the other, or two processes at once) never merge into one episode and never
overwrite each other's records: JSON lines are appended with one ``write`` each (``O_APPEND``), and
SQLite rows are inserted (summaries are keyed by run and episode) under a busy timeout.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
import uuid
from abc import ABC, abstractmethod
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Self

from governor.core import Decision
from governor.errors import ConfigError, GovernorError, expected
from governor.sqlite import use_wal
from governor.trace.jsonable import dumps, to_jsonable
from governor.trace.record import decision_record


def new_run_id() -> str:
    """A run id that sorts by start time: ``20261126T023000-1a2b3c``."""
    return f"{time.strftime('%Y%m%dT%H%M%S')}-{uuid.uuid4().hex[:6]}"


class TraceWriter(ABC):
    """Stores decision records and episode summaries; a context manager that closes on exit."""

    path: Path
    run: str

    def record(
        self, decision: Decision, *, episode: str, t: int, extra: Mapping[str, Any] | None = None
    ) -> None:
        """Store ``decision`` at step ``t`` of ``episode`` (see :func:`decision_record`)."""
        self.write(decision_record(decision, episode=episode, t=t, extra=extra))

    @abstractmethod
    def write(self, record: Mapping[str, Any]) -> None:
        """Store a record made by :func:`decision_record`."""

    @abstractmethod
    def record_episode(self, episode: str, summary: Mapping[str, Any]) -> None:
        """Store an episode's summary (outcome, steps, ...); a later one replaces it."""

    @abstractmethod
    def close(self) -> None:
        """Finish writing; closing twice is harmless."""

    def _closed(self) -> GovernorError:
        return GovernorError(f"{self.path}: expected an open trace writer, found it closed")

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


class JsonlTrace(TraceWriter):
    """One JSON object per line, appended and flushed per record (a crash loses none written).

    Lines are decision records (``"type": "decision"``) or episode summaries
    (``{"type": "episode", "run": id, "episode": id, "summary": {...}}``). Safe to share between
    threads, and between processes appending to the same file.
    """

    def __init__(self, path: str | Path, *, run: str | None = None) -> None:
        self.path, self.run = Path(path), run or new_run_id()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT
            self._fd: int | None = os.open(self.path, flags, 0o644)
        except OSError as exc:
            raise ConfigError(f"{self.path}: {expected('a writable file', str(exc))}") from exc
        self._lock = threading.Lock()

    def _line(self, item: Mapping[str, Any]) -> None:
        data = (dumps(item) + "\n").encode("utf-8")
        with self._lock:
            if self._fd is None:
                raise self._closed()
            view = memoryview(data)
            while view:  # one write for a regular file; the loop only guards a short write
                view = view[os.write(self._fd, view) :]

    def write(self, record: Mapping[str, Any]) -> None:
        self._line({**record, "run": record.get("run") or self.run})

    def record_episode(self, episode: str, summary: Mapping[str, Any]) -> None:
        item = {"type": "episode", "run": self.run, "episode": episode}
        self._line({**item, "summary": to_jsonable(summary)})

    def close(self) -> None:
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None


_SCHEMA = """
CREATE TABLE IF NOT EXISTS decisions (
    id INTEGER PRIMARY KEY, episode TEXT, t INTEGER, kind TEXT, action TEXT, reason TEXT,
    cause TEXT, latency_ms REAL, llm_calls INTEGER, tokens INTEGER, record TEXT);
CREATE INDEX IF NOT EXISTS decisions_episode_t ON decisions (episode, t);
CREATE TABLE IF NOT EXISTS episode_summaries (
    run TEXT NOT NULL, episode TEXT NOT NULL, summary TEXT, PRIMARY KEY (run, episode));
"""
_INSERT = (
    "INSERT INTO decisions (run, episode, t, kind, action, reason, cause, latency_ms, llm_calls,"
    " tokens, record) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
BUSY_TIMEOUT_S = 30.0
"""How long a writer waits for another process's transaction on the same file."""


class SqliteTrace(TraceWriter):
    """SQLite in WAL mode: one row per decision, the full record as JSON in ``record``.

    Each record is committed at once: with WAL and ``synchronous=NORMAL`` a commit costs about
    0.1 ms, far less than a guarded step, and nothing recorded is lost if the process dies.
    ``action`` holds strings as they are and other actions as JSON. Use the writer from the thread
    that created it (sqlite3's rule); other connections may read meanwhile.
    """

    def __init__(self, path: str | Path, *, run: str | None = None) -> None:
        self.path, self.run = Path(path), run or new_run_id()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S)
        except (OSError, sqlite3.Error) as exc:
            raise ConfigError(f"{self.path}: {expected('a writable file', str(exc))}") from exc
        try:
            use_wal(db, BUSY_TIMEOUT_S)
            db.execute("PRAGMA synchronous=NORMAL")
            with db:
                db.executescript(_SCHEMA)
                _add_run_column(db)
        except sqlite3.Error as exc:
            db.close()
            found = str(exc)
            raise ConfigError(f"{self.path}: {expected('a SQLite trace', found)}") from exc
        self._db: sqlite3.Connection | None = db

    def _execute(self, sql: str, row: tuple[Any, ...]) -> None:
        if self._db is None:
            raise self._closed()
        with self._db:
            self._db.execute(sql, row)

    def write(self, record: Mapping[str, Any]) -> None:
        usage, action = record.get("usage_total") or {}, record.get("action")
        if action is not None and not isinstance(action, str):
            action = dumps(action)
        record = {**record, "run": record.get("run") or self.run}
        fields = ("run", "episode", "t", "kind")
        row = (*(record.get(k) for k in fields), action, record.get("reason"))
        row += (record.get("cause"), record.get("step_latency_ms"))
        self._execute(_INSERT, (*row, usage.get("calls"), usage.get("tokens"), dumps(record)))

    def record_episode(self, episode: str, summary: Mapping[str, Any]) -> None:
        sql = "INSERT OR REPLACE INTO episode_summaries (run, episode, summary) VALUES (?, ?, ?)"
        self._execute(sql, (self.run, episode, dumps(to_jsonable(summary))))

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None


def _add_run_column(db: sqlite3.Connection) -> None:
    """Traces written before run ids have no ``run`` column: add it (their rows keep NULL)."""
    columns = {row[1] for row in db.execute("PRAGMA table_info(decisions)")}
    if "run" not in columns:
        try:
            db.execute("ALTER TABLE decisions ADD COLUMN run TEXT")
        except sqlite3.OperationalError as exc:  # another writer added it first
            if "duplicate column" not in str(exc):
                raise
    db.execute("CREATE INDEX IF NOT EXISTS decisions_run_episode_t ON decisions (run, episode, t)")


def open_trace(path: str | Path, *, run: str | None = None) -> TraceWriter:
    """A writer for ``path``: .jsonl -> :class:`JsonlTrace`; .sqlite/.sqlite3/.db -> SQLite.

    ``run`` names this run (default: a new id from :func:`new_run_id`)."""
    path = Path(path)
    kind = JsonlTrace if trace_format(path) == "jsonl" else SqliteTrace
    return kind(path, run=run)


JSONL_SUFFIXES = (".jsonl",)


SQLITE_SUFFIXES = (".sqlite", ".sqlite3", ".db")


def trace_format(path: Path) -> str:
    """``"jsonl"`` or ``"sqlite"``, by the file's suffix; a ConfigError for any other suffix."""
    suffix = path.suffix.lower()
    if suffix in JSONL_SUFFIXES or suffix in SQLITE_SUFFIXES:
        return "jsonl" if suffix in JSONL_SUFFIXES else "sqlite"
    wanted = "a trace file ending in " + ", ".join(JSONL_SUFFIXES + SQLITE_SUFFIXES)
    raise ConfigError(f"{path}: {expected(wanted, suffix or path.name)}")
