"""`governor bench driving`: the command, its table, its JSON file and plot, and its demo section.

The computing is in :mod:`governor.worlds.driving.bench_run` (re-exported here: :func:`run`,
:class:`DrivingBenchConfig`, :func:`start_states`).
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from rich.console import Console

from governor.files import write_json
from governor.flags import (
    Subcommands,
    add_backend_args,
    add_dataclass_args,
    backend_config_from_args,
    dataclass_from_args,
)
from governor.report import Section, print_table
from governor.worlds.driving.bench_run import (
    GUARDS,
    DrivingBenchConfig,
    Row,
    make_guard,
    make_policy,
    run,
    run_pair,
    start_states,
)

__all__ = [
    "GUARDS",
    "DrivingBenchConfig",
    "Row",
    "add_parser",
    "driving_section",
    "make_guard",
    "make_policy",
    "run",
    "run_command",
    "run_pair",
    "start_states",
    "table_lines",
    "write_driving",
]


def table_lines(result: dict[str, Any]) -> Iterator[list[str]]:
    """Header and one row per (policy, guard), formatted for a table; with the LLM calls made
    and how many of them failed when a model was called (a result that depended on a failing
    endpoint says so beside it)."""
    llm = any(r["llm_calls"] or r["llm_failed"] for r in result["rows"])
    header = ["policy", "guard", "episodes", "success", "failure", "stopped", "intervened", "steps"]
    yield header + (["LLM calls", "failed", "invalid"] if llm else [])
    for r in result["rows"]:
        yield [
            r["policy"],
            r["guard"],
            str(r["episodes"]),
            f"{r['success_rate']:.1%}",
            f"{r['failure_rate']:.1%}",
            f"{r['stop_rate']:.1%}",
            f"{r['intervention_rate']:.1%}",
            f"{r['mean_steps']:.1f}",
        ] + (
            [str(r["llm_calls"]), str(r["llm_failed"]), str(r.get("invalid_replies", 0))]
            if llm
            else []
        )


def add_parser(bench: Subcommands) -> None:
    """`governor bench driving`."""
    drive = bench.add_parser(
        "driving", help="driving under no guard, a myopic stop, the exact filter"
    )
    add_dataclass_args(drive, DrivingBenchConfig)
    drive.add_argument("--json", type=Path, help="write the results here")
    drive.add_argument("--plot", type=Path, help="write the safe-set plot (PNG) here")
    drive.add_argument("--trace", type=Path, help="record every decision (.jsonl or .sqlite)")
    add_backend_args(drive)
    drive.set_defaults(handler=run_command)


def run_command(args: argparse.Namespace, console: Console) -> int:
    cfg = dataclass_from_args(DrivingBenchConfig, args)
    result = run(cfg, backend_config_from_args(args), trace_path=args.trace)
    print_table(console, "Driving", list(table_lines(result)))
    mon = result["monitor"]
    if mon:
        console.print(
            f"monitor: {mon['states']} states, agreement {mon['agreement']:.2%}, "
            f"false-safe {mon['false_safe_rate']:.2%} (margin {result['margin']:.3f})"
        )
    console.print(
        f"grid value: {result['grid_seconds']:.1f} s"
        f"{' (cache)' if result['grid_cached'] else ''}; filter decision "
        f"{result['filter_decision_us_p50']:.1f} µs median"
    )
    write_driving(result, args.json, args.plot)
    return 0


def public(result: dict[str, Any]) -> dict[str, Any]:
    """The JSON part of a benchmark result (keys starting with '_' hold live objects)."""
    return {k: v for k, v in result.items() if not k.startswith("_")}


def example_episodes(result: dict[str, Any], policy: str) -> dict[str, list[Any]]:
    """Same-start episodes of ``policy`` unguarded and under the exact filter, for a plot.

    Prefers starts where the unguarded run failed, so the picture shows the filter mattering.
    """
    examples = result["_examples"]
    if (policy, "none") not in examples:
        return {}
    bare, guarded = examples[(policy, "none")], examples[(policy, "exact_filter")]
    order = sorted(range(min(len(bare), len(guarded))), key=lambda i: bare[i].outcome != "failure")
    pick = order[:3]
    return {
        f"{policy}, unguarded": [bare[i] for i in pick],
        f"{policy}, exact filter": [guarded[i] for i in pick],
    }


def write_driving(result: dict[str, Any], json_path: Path | None, plot_path: Path | None) -> None:
    """The JSON result and the safe-set plot of a driving benchmark run."""
    if json_path is not None:
        write_json(json_path, public(result))
    if plot_path is not None:
        policy = result["rows"][-1]["policy"]
        from governor.worlds.driving.plots import plot_driving  # matplotlib: only to plot

        plot_driving(result["_grid"], result["margin"], example_episodes(result, policy), plot_path)


def driving_section(result: dict[str, Any]) -> Section:
    mon = result["monitor"]
    paragraphs = [
        "ReGuard's agentic driving task: a car at constant speed steers right, straight or left "
        "between two obstacles on a road. The <b>exact filter</b> is the least restrictive safety "
        "filter built on the grid safety value (execute the base action iff Q(s,a) &gt; margin, "
        "otherwise argmax Q). <b>myopic_stop</b> only asks whether the next state fails and then "
        "stops (a LlamaGuard-style monitor with refusal as its only fallback). The erratic policy is "
        "a scripted stand-in for an unreliable agent, not a language model.",
        f"Grid value {result['grid_shape']} in {result['grid_seconds']:.1f} s"
        f"{' (loaded from cache)' if result['grid_cached'] else ''}; filter margin "
        f"{result['margin']:.3f}; one filter decision {result['filter_decision_us_p50']:.1f} µs "
        "(median).",
    ]
    if mon:
        paragraphs.append(
            f"Monitor check on {mon['states']} random states against an exact search over action "
            f"sequences: agreement {mon['agreement']:.2%}, false-safe rate {mon['false_safe_rate']:.2%}."
        )
    return Section(
        "Driving under a safety filter",
        paragraphs,
        list(table_lines(result)),
        ["driving.png"],
        ["driving.json", "driving.md", "trace.jsonl"],
    )
