"""Reading a trace back: its decision records in the order written and its episode summaries.

Works on both formats written by :mod:`governor.trace.store`; a file that is not a trace is a
:class:`~governor.errors.ConfigError` naming the file and, for JSONL, the line. A torn last line
(a writer died in the middle of it) is skipped with a :class:`TornRecordWarning`; the rest is
kept. When a file holds several runs, episode ids are qualified by run (``RUN/EPISODE``) so that
two runs never merge into one episode.
"""

from __future__ import annotations

import json
import sqlite3
import warnings
from contextlib import closing
from pathlib import Path
from typing import Any

from governor.errors import ConfigError, expected
from governor.files import json_loads
from governor.trace.store import trace_format

Records = list[dict[str, Any]]
Summaries = dict[str, dict[str, Any]]


class TornRecordWarning(UserWarning):
    """The last line of a JSONL trace was cut off by a writer that died; it was skipped."""


def read_trace(path: str | Path) -> tuple[Records, Summaries]:
    """The decision records in the order written, and the episode summaries by episode id (a
    later summary of the same run and episode replaces an earlier one)."""
    path = Path(path)
    kind = trace_format(path)
    if not path.is_file():
        raise ConfigError(f"{path}: {expected('a trace file', 'no such file')}")
    decisions, summaries = _read_jsonl(path) if kind == "jsonl" else _read_sqlite(path)
    return _by_run(decisions, summaries)


def _by_run(
    decisions: Records, summaries: list[tuple[str, str, dict[str, Any]]]
) -> tuple[Records, Summaries]:
    """Episode ids qualified by run when the trace holds more than one run."""
    runs = {str(d.get("run") or "") for d in decisions} | {run for run, _, _ in summaries}
    several = len(runs) > 1

    def key(run: str, episode: str) -> str:
        return f"{run}/{episode}" if several and run else episode

    for d in decisions:
        d["episode"] = key(str(d.get("run") or ""), d["episode"])
    return decisions, {key(run, episode): summary for run, episode, summary in summaries}


def clip_text(text: str, n: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


def _valid(item: Any, kind: str) -> bool:
    if not isinstance(item, dict) or item.get("type") != kind:
        return False
    if kind == "episode":
        return isinstance(item.get("episode"), str) and isinstance(item.get("summary"), dict)
    return isinstance(item.get("episode"), str) and isinstance(item.get("t"), int)


def _read_jsonl(path: Path) -> tuple[Records, list[tuple[str, str, dict[str, Any]]]]:
    decisions: Records = []
    episodes: list[tuple[str, str, dict[str, Any]]] = []
    try:
        with path.open(encoding="utf-8") as file:
            for lineno, line in enumerate(file, 1):
                if not line.strip():
                    continue
                item = _loads(line)
                if _valid(item, "decision"):
                    decisions.append(item)
                elif _valid(item, "episode"):
                    episodes.append((str(item.get("run") or ""), item["episode"], item["summary"]))
                elif not line.endswith("\n"):  # only the last line can lack one: a torn write
                    found = clip_text(line)
                    message = f"{path}, line {lineno}: skipped a torn last record ({found})"
                    warnings.warn(message, TornRecordWarning, stacklevel=3)
                else:
                    wanted = 'a JSON object with "type" decision or episode'
                    raise ConfigError(f"{path}, line {lineno}: {expected(wanted, clip_text(line))}")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: {expected('a UTF-8 JSONL trace', str(exc))}") from exc
    return decisions, episodes


def _read_sqlite(path: Path) -> tuple[Records, list[tuple[str, str, dict[str, Any]]]]:
    try:
        with closing(sqlite3.connect(path.resolve().as_uri() + "?mode=ro", uri=True)) as db:
            rows = db.execute("SELECT id, record FROM decisions ORDER BY id").fetchall()
            tables = {name for (name,) in db.execute("SELECT name FROM sqlite_master")}
            summaries = []
            if "episodes" in tables:  # written before run ids
                sql = "SELECT '', episode, summary FROM episodes ORDER BY rowid"
                summaries += db.execute(sql).fetchall()
            if "episode_summaries" in tables:
                sql = "SELECT run, episode, summary FROM episode_summaries ORDER BY rowid"
                summaries += db.execute(sql).fetchall()
    except sqlite3.Error as exc:
        raise ConfigError(f"{path}: {expected('a governor SQLite trace', str(exc))}") from exc
    decisions: Records = []
    for row_id, text in rows:
        item = _loads(text)
        if not _valid(item, "decision"):
            found = clip_text(str(text))
            raise ConfigError(f"{path}, decisions row {row_id}: {expected('a record', found)}")
        decisions.append(item)
    episodes: list[tuple[str, str, dict[str, Any]]] = []
    for run, episode, text in summaries:
        item = _loads(text)
        if not isinstance(item, dict):
            found = clip_text(str(text))
            raise ConfigError(f"{path}, episode {episode!r}: {expected('a JSON object', found)}")
        episodes.append((str(run or ""), episode, item))
    return decisions, episodes


def _loads(text: Any) -> Any:
    try:
        return json_loads(text)
    except (TypeError, json.JSONDecodeError):
        return None
