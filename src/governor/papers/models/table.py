"""The tables of `governor bench models`: a compact one per path, and a summary of every row.

Imports the report helpers and the small-talk criteria (the feature names of its likeness table).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from rich.console import Console

from governor.report import print_table
from governor.worlds.smalltalk.metrics import CRITERIA


def _pct(x: Any) -> str:
    return "n/a" if x is None else f"{x:.0%}"


def _share(x: Any) -> str:
    return "n/a" if x is None else f"{x:.2%}"


def _num(x: Any, digits: int = 2) -> str:
    return "n/a" if x is None else f"{x:.{digits}f}"


def driving_lines(m: dict[str, Any]) -> Iterator[list[str]]:
    yield [
        "guard",
        "success",
        "failure",
        "stopped",
        "truncated",
        "deferred steps",
        "intervened",
        "steps",
        "LLM calls",
        "invalid",
        "guard/model time",
    ]
    for guard, r in m.items():
        yield [
            guard, _pct(r["success_rate"]), _pct(r["failure_rate"]), _pct(r["stop_rate"]),
            _pct(r["truncated_rate"]), str(r["deferred_steps"]), _pct(r["intervention_rate"]),
            f"{r['mean_steps']:.1f}", str(r["llm_calls"]), str(r["invalid_replies"]),
            _share(r.get("guard_share_of_model_time")),
        ]  # fmt: skip


def smalltalk_lines(m: dict[str, Any]) -> Iterator[list[str]]:
    yield [
        "condition",
        "turns",
        "implicit",
        "forced",
        "regen",
        "fallbacks",
        "calls/turn",
        "observer/model time",
        "degenerate admitted",
        "invalid",
    ]
    for c in ("base", "observer"):
        r = m[c]
        yield [
            c, str(r["turns"]), _pct(r["implicit_rate"]), _pct(r["forced_rate"]),
            str(r["regenerations"]), str(r["fallbacks"]), _num(r["llm_calls_per_turn"]),
            _share(r["observer_share_of_model_time"]), str(r["degenerate_admitted"]),
            str(r["invalid_candidates"]),
        ]  # fmt: skip


def likeness_lines(m: dict[str, Any]) -> Iterator[list[str]]:
    """Per feature: likeness (W1, lower is closer to human) and drift, base vs observer."""
    yield [
        "feature",
        "human mean",
        "likeness base",
        "likeness observer",
        "drift base",
        "drift observer",
        "drift human",
    ]
    for f in CRITERIA:
        base, obs = m["base"], m["observer"]
        yield [
            f, _num(m["human_means"].get(f)), _num(base["likeness"].get(f)),
            _num(obs["likeness"].get(f)), _num(base["drift"].get(f), 3),
            _num(obs["drift"].get(f), 3), _num(m["human_drift"].get(f), 3),
        ]  # fmt: skip


def chip_lines(m: dict[str, Any]) -> Iterator[list[str]]:
    yield [
        "agent",
        "experiment",
        "episodes",
        "success",
        "safety",
        "LLM calls",
        "halted",
        "regen",
        "guard/model time",
    ]
    shares = m.get("guard_share_of_model_time", {})
    for r in m["rows"]:
        yield [
            r["agent"], r["experiment"], str(r["episodes"]), _pct(r["success_rate"]),
            _pct(r["safety_rate"]), str(r["llm_calls"]), str(r["halted"]), str(r["regenerations"]),
            _share(shares.get(r["agent"])),
        ]  # fmt: skip


def zero_shot_lines(m: dict[str, Any]) -> Iterator[list[str]]:
    yield ["guard", "success", "failure", "stopped", "intervened", "steps", "LLM calls"]
    for guard in ("zero_shot", "exact_filter"):
        r = m[guard]
        yield [
            guard, _pct(r["success_rate"]), _pct(r["failure_rate"]), _pct(r["stop_rate"]),
            _pct(r["intervention_rate"]), f"{r['mean_steps']:.1f}", str(r["llm_calls"]),
        ]  # fmt: skip


def lang2ltl_lines(m: dict[str, Any]) -> Iterator[list[str]]:
    yield ["translator", "sentences", "translated", "= offline", "= shipped", "calls/sentence"]
    n = str(m["sentences"])
    yield [
        "llm",
        n,
        str(m["llm_translated"]),
        str(m["llm_same_as_offline"]),
        str(m["llm_same_as_shipped"]),
        _num(m["llm_calls_per_sentence"], 1),
    ]
    yield ["offline", n, str(m["offline_translated"]), "-", str(m["offline_same_as_shipped"]), "0"]


def chat_lines(m: dict[str, Any]) -> Iterator[list[str]]:
    yield ["user", "bot", "decision"]
    for t in m["transcript"]:
        yield [t["user"], str(t["bot"]), t["decision"]]


def value_lines(m: dict[str, Any]) -> Iterator[list[str]]:
    """A safety value's training, its cost and its metrics against the exact value."""
    yield ["train s", "eval s", "peak RSS MB", "agreement", "value F1", "TP", "TN", "FN"]
    yield [
        _num(m["train_seconds"], 0), _num(m["eval_seconds"], 0), _num(m["peak_rss_mb"], 0),
        _pct(m["agreement"]), _num(m["value_f1"]), _num(m["tp_rate"]), _num(m["tn_rate"]),
        _num(m["fn_rate"]),
    ]  # fmt: skip


TABLES = {
    "driving": (driving_lines,),
    "smalltalk": (smalltalk_lines, likeness_lines),
    "safety-chip": (chip_lines,),
    "reguard-zero-shot": (zero_shot_lines,),
    "lang2ltl": (lang2ltl_lines,),
    "chat": (chat_lines,),
    "reguard-llm-value": (value_lines,),
    "reguard-frozen-value": (value_lines,),
}


def print_rows(console: Console, rows: Sequence[dict[str, Any]], *, summary: bool = False) -> None:
    """Each row's own tables, or (``summary``) one line per row with its counts."""
    if summary:
        lines = [["path", "status", "LLM calls", "failed", "unparsable", "model s", "wall s"]]
        for r in rows:
            lines.append([
                r["path"], r["status"] if len(r["status"]) < 60 else r["status"][:57] + "...",
                str(r["llm_calls"]), str(r["llm_failed"]), str(r["unparsable"]),
                f"{r['model_seconds']:.0f}", f"{r['wall_seconds']:.0f}",
            ])  # fmt: skip
        print_table(console, "LLM paths", lines)
        return
    for r in rows:
        if r["status"] != "ok" or r["path"] not in TABLES:
            console.print(f"{r['path']}: {r['status']}", markup=False)
            continue
        for make in TABLES[r["path"]]:
            print_table(console, r["path"], list(make(r["measures"])))
        console.print(
            f"{r['path']}: {r['llm_calls']} LLM calls, {r['llm_failed']} failed, "
            f"{r['unparsable']} unparsable; {r['wall_seconds']:.0f} s",
            markup=False,
        )
