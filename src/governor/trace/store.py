"""Trace writers: decision records appended to JSON lines or to SQLite.

The writers share one interface (:class:`TraceWriter`): :class:`JsonlTrace` for files,
:class:`SqliteTrace` for the embedded store; :func:`open_trace` picks one by suffix
(:func:`trace_format`). Records are made by :func:`governor.trace.record.decision_record`.
"""

from __future__ import annotations

import sqlite3
import threading
from abc import ABC, abstractmethod
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Self

from governor.core import Decision
from governor.errors import ConfigError, GovernorError, expected
from governor.trace.jsonable import dumps, to_jsonable
from governor.trace.record import decision_record


class TraceWriter(ABC):
    """Stores decision records and episode summaries; a context manager that closes on exit."""

    path: Path

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
    (``{"type": "episode", "episode": id, "summary": {...}}``). Safe to share between threads.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._file = self.path.open("a", encoding="utf-8")
        except OSError as exc:
            raise ConfigError(f"{self.path}: {expected('a writable file', str(exc))}") from exc
        self._lock = threading.Lock()

    def _line(self, item: Mapping[str, Any]) -> None:
        with self._lock:
            if self._file.closed:
                raise self._closed()
            self._file.write(dumps(item) + "\n")
            self._file.flush()

    def write(self, record: Mapping[str, Any]) -> None:
        self._line(record)

    def record_episode(self, episode: str, summary: Mapping[str, Any]) -> None:
        self._line({"type": "episode", "episode": episode, "summary": to_jsonable(summary)})

    def close(self) -> None:
        with self._lock:
            self._file.close()


_SCHEMA = """
CREATE TABLE IF NOT EXISTS decisions (
    id INTEGER PRIMARY KEY, episode TEXT, t INTEGER, kind TEXT, action TEXT, reason TEXT,
    cause TEXT, latency_ms REAL, llm_calls INTEGER, tokens INTEGER, record TEXT);
CREATE INDEX IF NOT EXISTS decisions_episode_t ON decisions (episode, t);
CREATE TABLE IF NOT EXISTS episodes (episode TEXT PRIMARY KEY, summary TEXT);
"""
_INSERT = (
    "INSERT INTO decisions (episode, t, kind, action, reason, cause, latency_ms, llm_calls,"
    " tokens, record) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


class SqliteTrace(TraceWriter):
    """SQLite in WAL mode: one row per decision, the full record as JSON in ``record``.

    Each record is committed at once: with WAL and ``synchronous=NORMAL`` a commit costs about
    0.1 ms, far less than a guarded step, and nothing recorded is lost if the process dies.
    ``action`` holds strings as they are and other actions as JSON. Use the writer from the thread
    that created it (sqlite3's rule); other connections may read meanwhile.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(self.path)
        except (OSError, sqlite3.Error) as exc:
            raise ConfigError(f"{self.path}: {expected('a writable file', str(exc))}") from exc
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.executescript(_SCHEMA)
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
        fields = ("episode", "t", "kind")
        row = (*(record.get(k) for k in fields), action, record.get("reason"))
        row += (record.get("cause"), record.get("step_latency_ms"))
        self._execute(_INSERT, (*row, usage.get("calls"), usage.get("tokens"), dumps(record)))

    def record_episode(self, episode: str, summary: Mapping[str, Any]) -> None:
        sql = "INSERT OR REPLACE INTO episodes (episode, summary) VALUES (?, ?)"
        self._execute(sql, (episode, dumps(to_jsonable(summary))))

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None


def open_trace(path: str | Path) -> TraceWriter:
    """A writer for ``path``: .jsonl -> :class:`JsonlTrace`; .sqlite/.sqlite3/.db -> SQLite."""
    path = Path(path)
    return JsonlTrace(path) if trace_format(path) == "jsonl" else SqliteTrace(path)


JSONL_SUFFIXES = (".jsonl",)


SQLITE_SUFFIXES = (".sqlite", ".sqlite3", ".db")


def trace_format(path: Path) -> str:
    """``"jsonl"`` or ``"sqlite"``, by the file's suffix; a ConfigError for any other suffix."""
    suffix = path.suffix.lower()
    if suffix in JSONL_SUFFIXES or suffix in SQLITE_SUFFIXES:
        return "jsonl" if suffix in JSONL_SUFFIXES else "sqlite"
    wanted = "a trace file ending in " + ", ".join(JSONL_SUFFIXES + SQLITE_SUFFIXES)
    raise ConfigError(f"{path}: {expected(wanted, suffix or path.name)}")
