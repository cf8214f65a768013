"""`governor demo`: every offline capability at a small budget, written to a report folder."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Console

from governor.bench import reguard_report
from governor.config import write_json
from governor.report import Section, markdown_table, print_table, write_index
from governor.worlds.driving import bench as driving
from governor.worlds.driving.plots import plot_driving
from governor.worlds.household import bench as safety_chip
from governor.worlds.smalltalk import bench as smalltalk


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
        list(driving.table_lines(result)),
        ["driving.png"],
        ["driving.json", "driving.md", "trace.jsonl"],
    )


def run_demo(
    out: Path,
    *,
    episodes: int = 100,
    seed: int = 0,
    train_minutes: float = 1.0,
    console: Console | None = None,
) -> Path:
    """Run the offline demo into ``out``; returns the index.html path."""
    console = console or Console()
    out.mkdir(parents=True, exist_ok=True)
    cfg = driving.DrivingBenchConfig(episodes=episodes, seed=seed, monitor_states=400)
    result = driving.run(cfg, trace_path=out / "trace.jsonl")
    write_driving(result, out / "driving.json", out / "driving.png")
    rows = list(driving.table_lines(result))
    (out / "driving.md").write_text(markdown_table(rows), encoding="utf-8")
    print_table(console, "Driving: base policies under three guards", rows)
    section = driving_section(result)
    for line in section.paragraphs[1:]:
        console.print(line.replace("&gt;", ">"))
    sections = [
        section,
        safety_chip.demo_section(out, console),
        smalltalk.demo_section(out, console),
        reguard_report.demo_section(
            out, console, episodes=max(1, episodes // 2), train_minutes=train_minutes
        ),
    ]
    return write_index(out, "governor offline demo", sections)
