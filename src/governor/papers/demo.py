"""`governor demo`: every offline capability at a small budget, written to a report folder."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from governor.papers import reguard_report
from governor.report import markdown_table, print_table, write_index
from governor.worlds.driving import bench as driving
from governor.worlds.household import bench as safety_chip
from governor.worlds.scenarios import bench as supervision
from governor.worlds.smalltalk import bench as smalltalk


def run_demo(
    out: Path,
    *,
    episodes: int = 100,
    seed: int = 0,
    train_steps: int = 10_000,
    console: Console | None = None,
) -> Path:
    """Run the offline demo into ``out``; returns the index.html path."""
    console = console or Console()
    out.mkdir(parents=True, exist_ok=True)
    cfg = driving.DrivingBenchConfig(episodes=episodes, seed=seed, monitor_states=400)
    result = driving.run(cfg, trace_path=out / "trace.jsonl")
    driving.write_driving(result, out / "driving.json", out / "driving.png")
    rows = list(driving.table_lines(result))
    (out / "driving.md").write_text(markdown_table(rows), encoding="utf-8")
    print_table(console, "Driving: base policies under three guards", rows)
    section = driving.driving_section(result)
    for line in section.paragraphs[1:]:
        console.print(line.replace("&gt;", ">"))
    sections = [
        section,
        safety_chip.demo_section(out, console),
        smalltalk.demo_section(out, console),
        supervision.demo_section(out, console),
        reguard_report.demo_section(
            out, console, episodes=max(1, episodes // 2), train_steps=train_steps
        ),
    ]
    return write_index(out, "governor offline demo", sections)
