"""The small-talk benchmark's tables, JSON file and plot (see :mod:`governor.worlds.smalltalk.bench`)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from rich.console import Console

from governor.files import write_json
from governor.report import print_table
from governor.worlds.smalltalk.metrics import CRITERIA


def table_lines(result: dict[str, Any]) -> Iterator[list[str]]:
    """One row per feature: human, base and observer means, likeness and drift."""
    base, obs = result["conversations"]
    yield [
        "feature",
        "criterion",
        "human",
        "base",
        "observer",
        "like base",
        "like obs",
        "drift base",
        "drift obs",
    ]
    for f, criterion in CRITERIA.items():
        yield [
            f,
            criterion,
            f"{result['human_means'][f]:.3f}",
            _num(base["means"][f]),
            _num(obs["means"][f]),
            f"{base['likeness'][f]:.3f}",
            f"{obs['likeness'][f]:.3f}",
            _drift(base, f),
            _drift(obs, f),
        ]


def rate_lines(result: dict[str, Any]) -> Iterator[list[str]]:
    """One row per condition: feedback rates, regenerations, fallbacks, cost (and the LLM calls
    that failed, when any did: a result that depended on a failing endpoint says so)."""
    failed = any(c.get("llm_failed") for c in result["conversations"])
    yield [
        "condition",
        "turns",
        "implicit",
        "forced",
        "tolerated",
        "regens",
        "fallbacks",
        "LLM calls/turn",
        *(["LLM calls failed"] if failed else []),
        "observer ms p50",
    ]
    for c in result["conversations"]:
        yield [
            c["condition"],
            str(c["turns"]),
            f"{c['implicit_rate']:.1%}",
            f"{c['forced_rate']:.1%}",
            f"{c['tolerated_rate']:.1%}",
            str(c["regenerations"]),
            str(c["fallbacks"]),
            f"{c['llm_calls_per_turn']:.2f}",
            *([str(c.get("llm_failed", 0))] if failed else []),
            f"{c['observer_ms_p50']:.2f}",
        ]


def _num(x: float | None) -> str:
    return "-" if x is None else f"{x:.3f}"


def _drift(condition: dict[str, Any], f: str) -> str:
    se = condition.get("drift_se", {}).get(f)
    return f"{condition['drift'][f]:+.4f}" + ("" if se is None else f" ±{se:.4f}")


def write(result: dict[str, Any], json_path: Path | None, plot_path: Path | None) -> None:
    """The JSON result (keys starting with '_' left out) and the plot."""
    if json_path is not None:
        write_json(json_path, {k: v for k, v in result.items() if not k.startswith("_")})
    if plot_path is not None:
        from governor.worlds.smalltalk.plot import plot_smalltalk

        plot_smalltalk(result, plot_path)


def print_result(console: Console, result: dict[str, Any]) -> None:
    """The acceptance line, the likeness and drift table, and the interventions table."""
    console.print(
        f"held-out human turns accepted: {result['human_accept_rate']:.1%} of "
        f"{result['human_turns']}; base: {result['base_label']}"
    )
    methods = result.get("feature_methods", {})
    if "coherence" in methods:
        weak = " (a weak proxy)" if methods["coherence"] == "lexical overlap" else ""
        console.print(
            f"coherence measured by {methods['coherence']}{weak}; drift ± its standard error"
        )
    print_table(
        console,
        "Small talk: likeness to human replies (lower is closer)",
        list(table_lines(result)),
    )
    print_table(console, "Small talk: the observer's interventions", list(rate_lines(result)))
