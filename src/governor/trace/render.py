"""The terminal view of a trace: one trajectory, a header of counts, then one row per step.

:func:`render_trace` shows the attempts and candidates of each step when ``verbose``;
:func:`render_records` does the same for decision records read elsewhere (a session store).
"""

from __future__ import annotations

import json
import statistics
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from governor.errors import ConfigError
from governor.trace.read import clip_text, read_trace

KIND_STYLES = {
    "execute": "green",
    "execute_with_feedback": "cyan",
    "regenerate": "magenta",
    "fallback": "yellow",
    "defer": "red",
    "abort": "red",
}


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
    decisions, summaries = read_trace(path)
    render_records(
        decisions, summaries, str(path), episode=episode, console=console, verbose=verbose
    )


def render_records(
    decisions: list[dict[str, Any]],
    summaries: Mapping[str, Mapping[str, Any]],
    source: str,
    *,
    episode: str | None = None,
    console: Console | None = None,
    verbose: bool = False,
) -> None:
    """Print one episode of the decision records ``decisions`` read from ``source`` (a trace
    file, a session store): the first where the guard intervened when ``episode`` is None."""
    console = console or Console()
    path = source
    decisions = [d for d in decisions if d.get("type", "decision") == "decision"]
    ids = list(dict.fromkeys([r["episode"] for r in decisions] + list(summaries)))
    if not ids:
        console.print(Text(f"{path}: the trace holds no decisions"))
        return
    if episode is not None and episode not in ids:
        raise ConfigError(f"{path}: episode {episode!r} not found; expected one of {_few(ids)}")
    chosen = _first_guarded(ids, decisions) if episode is None else episode
    records = sorted((r for r in decisions if r["episode"] == chosen), key=lambda r: r["t"])
    console.print(_header(chosen, summarize(records), summaries.get(chosen, {})))
    console.print(_table(records, verbose, console.width))
    if episode is None and len(ids) > 1:
        rest = [i for i in ids if i != chosen]
        why = (
            "the first where the guard intervened"
            if _intervened(chosen, decisions)
            else "the first"
        )
        others = f"shown: {chosen} ({why}); {len(rest)} other episode(s): {_few(rest)}"
        console.print(Text(f"{others}; select one with --episode ID", style="dim"))


def _intervened(episode: str, decisions: Sequence[Mapping[str, Any]]) -> bool:
    return any(r.get("intervened") for r in decisions if r["episode"] == episode)


def _first_guarded(ids: Sequence[str], decisions: Sequence[Mapping[str, Any]]) -> str:
    """The first episode in which the guard changed something, else the first episode."""
    return next((i for i in ids if _intervened(i, decisions)), ids[0])


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
    return text if limit is None else clip_text(text, limit)


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
        note = "\n".join(n if verbose else clip_text(n, 60) for n in notes if n)
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
