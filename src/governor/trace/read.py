"""Reading a trace back: its decision records in the order written and its episode summaries.

Works on both formats written by :mod:`governor.trace.store`; a file that is not a trace is a
:class:`~governor.errors.ConfigError` naming the file and, for JSONL, the line.
"""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

from governor.errors import ConfigError, expected
from governor.trace.store import trace_format

Records = list[dict[str, Any]]


def read_trace(path: str | Path) -> tuple[Records, dict[str, dict[str, Any]]]:
    """The decision records in the order written, and the episode summaries by episode id."""
    path = Path(path)
    kind = trace_format(path)
    if not path.is_file():
        raise ConfigError(f"{path}: {expected('a trace file', 'no such file')}")
    return _read_jsonl(path) if kind == "jsonl" else _read_sqlite(path)


def clip_text(text: str, n: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


def _valid(item: Any, kind: str) -> bool:
    if not isinstance(item, dict) or item.get("type") != kind:
        return False
    if kind == "episode":
        return isinstance(item.get("episode"), str) and isinstance(item.get("summary"), dict)
    return isinstance(item.get("episode"), str) and isinstance(item.get("t"), int)


def _read_jsonl(path: Path) -> tuple[Records, dict[str, dict[str, Any]]]:
    decisions: Records = []
    episodes: dict[str, dict[str, Any]] = {}
    try:
        with path.open(encoding="utf-8") as file:
            for lineno, line in enumerate(file, 1):
                if not line.strip():
                    continue
                item = _loads(line)
                if _valid(item, "decision"):
                    decisions.append(item)
                elif _valid(item, "episode"):
                    episodes[item["episode"]] = item["summary"]
                else:
                    wanted = 'a JSON object with "type" decision or episode'
                    raise ConfigError(f"{path}, line {lineno}: {expected(wanted, clip_text(line))}")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: {expected('a UTF-8 JSONL trace', str(exc))}") from exc
    return decisions, episodes


def _read_sqlite(path: Path) -> tuple[Records, dict[str, dict[str, Any]]]:
    try:
        with closing(sqlite3.connect(path.resolve().as_uri() + "?mode=ro", uri=True)) as db:
            rows = db.execute("SELECT id, record FROM decisions ORDER BY id").fetchall()
            sql = "SELECT episode, summary FROM episodes ORDER BY rowid"
            summaries = db.execute(sql).fetchall()
    except sqlite3.Error as exc:
        raise ConfigError(f"{path}: {expected('a governor SQLite trace', str(exc))}") from exc
    decisions: Records = []
    for row_id, text in rows:
        item = _loads(text)
        if not _valid(item, "decision"):
            found = clip_text(str(text))
            raise ConfigError(f"{path}, decisions row {row_id}: {expected('a record', found)}")
        decisions.append(item)
    episodes: dict[str, dict[str, Any]] = {}
    for episode, text in summaries:
        item = _loads(text)
        if not isinstance(item, dict):
            found = clip_text(str(text))
            raise ConfigError(f"{path}, episode {episode!r}: {expected('a JSON object', found)}")
        episodes[episode] = item
    return decisions, episodes


def _loads(text: Any) -> Any:
    try:
        return json.loads(text)
    except (TypeError, json.JSONDecodeError):
        return None
