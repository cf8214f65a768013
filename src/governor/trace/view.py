"""Reading a trace back: its records (:func:`read_trace`), decisions for replay, a rich view.

Works on both formats written by :mod:`governor.trace`, which exports these functions too.
:func:`render_trace` shows one trajectory: a header of counts, then one row per step (with its
attempts and candidates when ``verbose``).
"""

from __future__ import annotations

import json
import math
import sqlite3
import statistics
from collections import Counter
from collections.abc import Mapping, Sequence
from contextlib import closing
from pathlib import Path
from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from governor.core import (
    Attempt,
    Candidate,
    Decision,
    DecisionKind,
    Feedback,
    FeedbackKind,
    RejectionCause,
    Severity,
    Verdict,
)
from governor.errors import ConfigError, expected
from governor.usage import Usage

JSONL_SUFFIXES = (".jsonl",)
SQLITE_SUFFIXES = (".sqlite", ".sqlite3", ".db")
Records = list[dict[str, Any]]
KIND_STYLES = {
    "execute": "green",
    "execute_with_feedback": "cyan",
    "regenerate": "magenta",
    "fallback": "yellow",
    "defer": "red",
    "abort": "red",
}
_NONFINITE = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}


def trace_format(path: Path) -> str:
    """``"jsonl"`` or ``"sqlite"``, by the file's suffix; a ConfigError for any other suffix."""
    suffix = path.suffix.lower()
    if suffix in JSONL_SUFFIXES or suffix in SQLITE_SUFFIXES:
        return "jsonl" if suffix in JSONL_SUFFIXES else "sqlite"
    wanted = "a trace file ending in " + ", ".join(JSONL_SUFFIXES + SQLITE_SUFFIXES)
    raise ConfigError(f"{path}: {expected(wanted, suffix or path.name)}")


def read_trace(path: str | Path) -> tuple[Records, dict[str, dict[str, Any]]]:
    """The decision records in the order written, and the episode summaries by episode id."""
    path = Path(path)
    kind = trace_format(path)
    if not path.is_file():
        raise ConfigError(f"{path}: {expected('a trace file', 'no such file')}")
    return _read_jsonl(path) if kind == "jsonl" else _read_sqlite(path)


def _clip(text: str, n: int = 80) -> str:
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
                    raise ConfigError(f"{path}, line {lineno}: {expected(wanted, _clip(line))}")
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
            found = _clip(str(text))
            raise ConfigError(f"{path}, decisions row {row_id}: {expected('a record', found)}")
        decisions.append(item)
    episodes: dict[str, dict[str, Any]] = {}
    for episode, text in summaries:
        item = _loads(text)
        if not isinstance(item, dict):
            found = _clip(str(text))
            raise ConfigError(f"{path}, episode {episode!r}: {expected('a JSON object', found)}")
        episodes[episode] = item
    return decisions, episodes


def _loads(text: Any) -> Any:
    try:
        return json.loads(text)
    except (TypeError, json.JSONDecodeError):
        return None


def from_json_float(value: Any) -> float | None:
    """A float as :func:`governor.trace.to_jsonable` wrote it ("Infinity" etc.); None stays."""
    if value is None:
        return None
    return _NONFINITE[value] if isinstance(value, str) else float(value)


def decision_from_record(record: Mapping[str, Any]) -> Decision:
    """The decision a record was made from; actions come back in their JSON form (lists, dicts)."""
    try:
        return Decision(
            kind=DecisionKind(record["kind"]),
            action=record["action"],
            verdicts=tuple(_verdict(v) for v in record["verdicts"]),
            feedback=_feedback(record["feedback"]),
            reason=record["reason"],
            cause=_cause(record["cause"]),
            attempts=tuple(_attempt(a) for a in record["attempts"]),
            latency={k: float(ms) / 1000.0 for k, ms in record["latency_ms"].items()},
            usage={k: Usage(**u) for k, u in record["usage"].items()},
            errors=tuple(record["errors"]),
        )
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        found = f"{type(exc).__name__}: {exc}"
        raise ConfigError(f"decision record: {expected('a decision_record', found)}") from exc


def _attempt(a: Mapping[str, Any]) -> Attempt:
    return Attempt(
        tuple(
            Candidate(c["action"], c["text"], c["error"], from_json_float(c["logprob"]))
            for c in a["candidates"]
        ),
        tuple(tuple(_verdict(v) for v in row) for row in a["verdicts"]),
        _feedback(a["feedback"]),
        a["chosen"],
        _cause(a["cause"]),
    )


def _verdict(v: Mapping[str, Any]) -> Verdict:
    margin, severity = from_json_float(v["margin"]), Severity[v["severity"]]
    return Verdict(**{**v, "margin": margin, "severity": severity})


def _feedback(f: Mapping[str, Any] | None) -> Feedback | None:
    if f is None:
        return None
    return Feedback(FeedbackKind(f["kind"]), f["text"], tuple(f["constraints"]))


def _cause(value: str | None) -> RejectionCause | None:
    return None if value is None else RejectionCause(value)


def summarize(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The counts shown in an episode's header, from its decision records.

    Keys: steps, kinds (a Counter), interventions, regenerations, llm_calls, tokens,
    latency_p50_ms, latency_max_ms.
    """
    latencies = [float(r.get("step_latency_ms") or 0.0) for r in records]
    totals = [r.get("usage_total") or {} for r in records]
    return {
        "steps": len(records),
        "kinds": Counter(str(r.get("kind")) for r in records),
        "interventions": sum(bool(r.get("intervened")) for r in records),
        "regenerations": sum(int(r.get("regenerations") or 0) for r in records),
        "llm_calls": sum(int(u.get("calls") or 0) for u in totals),
        "tokens": sum(int(u.get("tokens") or 0) for u in totals),
        "latency_p50_ms": statistics.median(latencies) if latencies else 0.0,
        "latency_max_ms": max(latencies, default=0.0),
    }


def render_trace(
    path: str | Path,
    *,
    episode: str | None = None,
    console: Console | None = None,
    verbose: bool = False,
) -> None:
    """Print one episode of the trace at ``path`` (the first when ``episode`` is None)."""
    console = console or Console()
    decisions, summaries = read_trace(path)
    ids = list(dict.fromkeys([r["episode"] for r in decisions] + list(summaries)))
    if not ids:
        console.print(Text(f"{path}: the trace holds no decisions"))
        return
    if episode is not None and episode not in ids:
        raise ConfigError(f"{path}: episode {episode!r} not found; expected one of {_few(ids)}")
    chosen = ids[0] if episode is None else episode
    records = sorted((r for r in decisions if r["episode"] == chosen), key=lambda r: r["t"])
    console.print(_header(chosen, summarize(records), summaries.get(chosen, {})))
    console.print(_table(records, verbose, console.width))
    if episode is None and len(ids) > 1:
        others = f"{len(ids) - 1} other episode(s) in this trace: {_few(ids[1:])}"
        console.print(Text(f"{others}; select one with --episode ID", style="dim"))


def _few(ids: Sequence[str], n: int = 8) -> str:
    more = f" and {len(ids) - n} more" if len(ids) > n else ""
    return ", ".join(ids[:n]) + more


# Summary keys the header already shows from the decisions themselves.
SHOWN_BELOW = {
    "outcome",
    "steps",
    "interventions",
    "regenerations",
    "decisions",
    "llm_calls",
    "tokens",
}


def _header(episode: str, stats: Mapping[str, Any], summary: Mapping[str, Any]) -> Text:
    text = Text.assemble(("episode ", "bold"), (episode, "bold"), f" · {stats['steps']} steps")
    if "outcome" in summary:
        text.append(" · outcome: ").append(str(summary["outcome"]), "bold")
    for key, value in summary.items():
        if key not in SHOWN_BELOW:
            text.append(f" · {key}: {_show(value, 40)}")
    text.append("\ndecisions:")
    for kind, count in sorted(stats["kinds"].items(), key=lambda kc: -kc[1]):
        text.append(" ").append(kind, KIND_STYLES.get(kind, "")).append(f" {count}")
    text.append(
        f"\ninterventions {stats['interventions']} · regenerations {stats['regenerations']}"
        f" · LLM calls {stats['llm_calls']} · tokens {stats['tokens']}"
        f"\nstep latency p50 {stats['latency_p50_ms']:.1f} ms"
        f" · max {stats['latency_max_ms']:.1f} ms"
    )
    return text


def _show(value: Any, limit: int | None = None) -> str:
    text = "—" if value is None else value if isinstance(value, str) else json.dumps(value)
    return text if limit is None else _clip(text, limit)


def verdict_summary(rows: Sequence[Mapping[str, Any]]) -> str:
    """``"✓ all 3"``, or the failing constraints (``"safety_filter ✗ margin -0.12"``)."""
    if not rows:
        return "—"
    failed = [v for v in rows if not v.get("admissible")]
    if not failed:
        noted = sum(1 for v in rows if (v.get("deviation") or 0) > 0)
        return f"✓ all {len(rows)}" + (f" ({noted} within tolerance)" if noted else "")
    parts = []
    for v in failed:
        margin, name = v.get("margin"), v.get("constraint", "?")
        if v.get("error"):
            parts.append(f"{name} ✗ error")
        elif isinstance(margin, (int, float)):
            parts.append(f"{name} ✗ margin {margin:.2f}")
        else:
            parts.append(f"{name} ✗ deviation {v.get('deviation', 0):.2f}")
    return ", ".join(parts)


def _table(records: Sequence[Mapping[str, Any]], verbose: bool, width: int) -> Table:
    """One row per step; the free text goes last, where wrapping keeps it in one piece."""
    table = Table(box=box.SIMPLE_HEAD, show_edge=False)
    for name in ("t", "decision", "action", "verdicts", "ms", "LLM", "feedback / reason"):
        table.add_column(name, justify="right" if name in ("t", "ms", "LLM") else "left")
    table.columns[-1].overflow = "fold"  # reasons are never cut, only wrapped
    table.columns[2].max_width = max(12, width // 6)
    table.columns[3].max_width = max(16, width // 5)
    for r in records:
        kind, attempts = str(r.get("kind")), r.get("attempts") or []
        verdicts = verdict_summary(r.get("verdicts") or [])
        if not r.get("verdicts") and attempts:
            verdicts = "rejected: " + _first_rejection(attempts[-1])
        feedback = (r.get("feedback") or {}).get("text")
        notes = [r.get("reason"), feedback and f"feedback: {feedback}"]
        notes += [f"error: {e}" for e in r.get("errors") or []]
        if r.get("extra"):  # what the caller recorded beside the decision, e.g. the state
            notes.append(f"context: {_show(r['extra'])}")
        note = "\n".join(n if verbose else _clip(n, 60) for n in notes if n)
        cells: list[str | Text] = [str(r.get("t")), Text(kind, KIND_STYLES.get(kind, ""))]
        cells += [_show(r.get("action"), None if verbose else 30), verdicts]
        cells += [f"{float(r.get('step_latency_ms') or 0):.1f}"]
        cells += [str((r.get("usage_total") or {}).get("calls", 0)), note or "—"]
        table.add_row(*[c if isinstance(c, Text) else Text(c) for c in cells])
        if verbose:
            for k, attempt in enumerate(attempts, 1):
                _attempt_rows(table, k, attempt)
    return table


def _first_rejection(attempt: Mapping[str, Any]) -> str:
    """The verdicts of the first judged candidate, or the first candidate's parse error."""
    rows = attempt.get("verdicts") or []
    for candidate, row in zip(attempt.get("candidates") or [], rows, strict=False):
        if row:
            return verdict_summary(row)
        if candidate.get("error"):
            return f"invalid ({candidate['error']})"
    return "—"


def _attempt_rows(table: Table, k: int, attempt: Mapping[str, Any]) -> None:
    feedback = (attempt.get("feedback") or {}).get("text") or "no feedback"
    cause = attempt.get("cause") or f"chose #{attempt.get('chosen')}"
    table.add_row(
        "", Text(f"attempt {k}", "dim"), "", Text(str(cause)), "", "", Text(feedback, "dim")
    )
    rows = attempt.get("verdicts") or []
    for j, c in enumerate(attempt.get("candidates") or []):
        mark = " ←" if attempt.get("chosen") == j else ""
        row = rows[j] if j < len(rows) else []
        verdicts = f"invalid: {c['error']}" if c.get("error") else verdict_summary(row)
        note = f"text: {_show(c.get('text'))} · logprob: {_show(c.get('logprob'))}"
        cells = [f"  #{j}{mark}", _show(c.get("action")), verdicts, "", "", note]
        table.add_row("", *[Text(x) for x in cells])
