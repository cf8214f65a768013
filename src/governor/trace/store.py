"""The trace: every decision, with everything it was based on, as JSON lines or in SQLite.

:func:`decision_record` turns a :class:`~governor.core.Decision` into one JSON-safe record. The
writers share one interface (:class:`TraceWriter`): :class:`JsonlTrace` for files,
:class:`SqliteTrace` for the embedded store; :func:`open_trace` picks one by suffix.
``Decision.latency`` is in seconds; records hold milliseconds. Reading (:func:`read_trace`),
replay (:func:`decision_from_record`) and rendering (:func:`render_trace`) are defined in
:mod:`governor.trace.view` and exported here too.
"""

from __future__ import annotations

import dataclasses
import json
import math
import sqlite3
import threading
from abc import ABC, abstractmethod
from collections.abc import Mapping
from enum import Enum
from pathlib import Path, PurePath
from typing import Any, Self

import numpy as np

from governor.core import Decision, Verdict
from governor.errors import ConfigError, GovernorError, expected
from governor.trace.view import (
    trace_format,
)

_MAX_DEPTH = 64
_MAX_HEX_BYTES = 256


def to_jsonable(obj: Any) -> Any:
    """A JSON-safe copy of ``obj``; never raises.

    numpy arrays become lists and numpy scalars Python numbers; dataclasses dicts of their fields;
    enums their value; mappings dicts with string keys (other keys as JSON text); tuples and lists
    lists; sets sorted lists; paths strings; bytes ``{"bytes": length, "hex": ...}`` (the hex only
    up to 256 bytes). Non-finite floats become the strings ``"NaN"``, ``"Infinity"`` and
    ``"-Infinity"``. Anything else, a cycle, or nesting deeper than 64 becomes its ``repr``.
    """
    return _jsonable(obj, 0, frozenset())


def _jsonable(obj: Any, depth: int, seen: frozenset[int]) -> Any:
    try:
        if isinstance(obj, Enum):
            return _jsonable(obj.value, depth + 1, seen)
        if obj is None or isinstance(obj, bool):
            return obj
        if isinstance(obj, (int, str)):
            return int(obj) if isinstance(obj, int) else str(obj)
        if isinstance(obj, float):
            return _float(float(obj))
        if isinstance(obj, np.generic):
            return _jsonable(obj.item(), depth + 1, seen)
        if isinstance(obj, PurePath):
            return str(obj)
        if isinstance(obj, (bytes, bytearray, memoryview)):
            data = bytes(obj)
            hexed = {"hex": data.hex()} if len(data) <= _MAX_HEX_BYTES else {}
            return {"bytes": len(data), **hexed}
        if depth >= _MAX_DEPTH or id(obj) in seen:
            return _repr(obj)
        seen, depth = seen | {id(obj)}, depth + 1
        if isinstance(obj, np.ndarray):
            return _jsonable(obj.tolist(), depth, seen)
        if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
            fields = dataclasses.fields(obj)
            return {f.name: _jsonable(getattr(obj, f.name), depth, seen) for f in fields}
        if isinstance(obj, Mapping):
            return {_key(k, depth, seen): _jsonable(v, depth, seen) for k, v in obj.items()}
        if isinstance(obj, (list, tuple)):
            return [_jsonable(item, depth, seen) for item in obj]
        if isinstance(obj, (set, frozenset)):
            items = [_jsonable(item, depth, seen) for item in obj]
            return sorted(items, key=lambda item: json.dumps(item, sort_keys=True))
    except Exception:
        pass
    return _repr(obj)


def _float(x: float) -> float | str:
    if math.isfinite(x):
        return x
    return "NaN" if math.isnan(x) else ("Infinity" if x > 0 else "-Infinity")


def _key(key: Any, depth: int, seen: frozenset[int]) -> str:
    value = _jsonable(key, depth, seen)
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


def _repr(obj: Any) -> str:
    try:
        return repr(obj)
    except Exception:
        return f"<unrepresentable {type(obj).__name__}>"


def dumps(value: Any) -> str:
    """Strict JSON text of a value made by :func:`to_jsonable` (one line, ASCII)."""
    return json.dumps(value, allow_nan=False)


def step_seconds(latency: Mapping[str, float]) -> float:
    """A step's latency: its ``"total"`` stage when recorded, else the sum of its stages."""
    return float(latency["total"]) if "total" in latency else float(sum(latency.values()))


def decision_record(
    decision: Decision, *, episode: str, t: int, extra: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """One JSON-safe record of ``decision`` at step ``t`` of ``episode``; ``extra`` rides along.

    Keys: type ("decision"), episode, t, kind, action, reason, cause, errors, latency_ms (per
    stage), step_latency_ms, usage (per stage), usage_total (with tokens), feedback, verdicts (of
    the executed action; severity by name), attempts (candidates, verdict rows, feedback, chosen,
    cause), intervened, regenerations, extra.
    """
    total = decision.total_usage
    record = {
        "type": "decision",
        "episode": episode,
        "t": t,
        "kind": decision.kind,
        "action": decision.action,
        "reason": decision.reason,
        "cause": decision.cause,
        "errors": decision.errors,
        "latency_ms": {stage: 1000.0 * s for stage, s in decision.latency.items()},
        "step_latency_ms": 1000.0 * step_seconds(decision.latency),
        "usage": dict(decision.usage),
        "usage_total": {**dataclasses.asdict(total), "tokens": total.tokens},
        "feedback": decision.feedback,
        "verdicts": [_verdict(v) for v in decision.verdicts],
        "attempts": [
            {
                "candidates": a.candidates,
                "verdicts": [[_verdict(v) for v in row] for row in a.verdicts],
                "feedback": a.feedback,
                "chosen": a.chosen,
                "cause": a.cause,
            }
            for a in decision.attempts
        ],
        "intervened": decision.intervened,
        "regenerations": decision.regenerations,
        "extra": dict(extra or {}),
    }
    return to_jsonable(record)


def _verdict(v: Verdict) -> dict[str, Any]:
    return {**to_jsonable(v), "severity": v.severity.name}


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
