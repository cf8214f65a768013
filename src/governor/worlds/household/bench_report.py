"""Reporting the Safety Chip benchmark: the command, the lines the table leaves out, the demo.

Imports the benchmark's configuration, runner and agents; :mod:`governor.worlds.household.bench`
(the entry point) imports it.
"""

from __future__ import annotations

import argparse
import html
from pathlib import Path
from typing import Any

from rich.console import Console

from governor.files import write_json
from governor.flags import backend_config_from_args, dataclass_from_args
from governor.report import Section, print_table
from governor.worlds.household.bench_agents import NL_NOTE
from governor.worlds.household.bench_config import SafetyChipBenchConfig
from governor.worlds.household.bench_run import run, table_lines


def run_command(args: argparse.Namespace, console: Console) -> int:
    """Run the benchmark from parsed flags; print the table and what it leaves out."""
    cfg = dataclass_from_args(SafetyChipBenchConfig, args)
    result = run(cfg, backend_config_from_args(args), trace_path=args.trace)
    print_table(console, "Safety Chip (Table I layout)", list(table_lines(result)))
    for line in summary_lines(result):
        console.print(line, highlight=False)
    if args.json is not None:
        write_json(args.json, result)
    return 0


def summary_lines(result: dict[str, Any]) -> list[str]:
    """What the table leaves out: formulas, exclusions, notes."""
    out = [f"formulas: {result['formulas']}"]
    for key, why in result["excluded_tasks"].items():
        out.append(f"excluded {key}: {why}")
    for cell in result["unachievable"]:
        what = "; ".join(cell["conflict"])
        out.append(f"left out {cell['task']} k={cell['k']}: in TestScene1 these conflict: {what}")
    for cell in result["untranslated"]:
        out.append(f"untranslated {cell['task']} k={cell['k']}: {cell['sentences']}")
    out += result["notes"]
    for agent in dict.fromkeys(r["agent"] for r in result["rows"]):
        mine = [r for r in result["rows"] if r["agent"] == agent]
        calls, failed = sum(r["llm_calls"] for r in mine), sum(r["llm_failed"] for r in mine)
        if calls or failed:
            out.append(f"{agent}: {calls} LLM call(s), {failed} failed")
    out.append(f"{result['seconds']:.1f} s")
    return out


def demo_section(out_dir: Path, console: Console) -> Section:
    """A small offline run (simulated planner, four tasks, k = 1..3) for the demo report."""
    cfg = SafetyChipBenchConfig(
        constraints="1-3",
        repeats=2,
        tasks="rooms/0_1,rooms/0_7,mobile_manip/0_9,mobile_manip/3_3",
    )
    result = run(cfg, progress=False)
    write_json(out_dir / "safety_chip.json", result, "demo")
    table = list(table_lines(result))
    print_table(console, "Safety Chip: household agents (simulated planner)", table)
    paragraphs = [
        "The Safety Chip's household tasks: a planner proposes one VirtualHome action at a time; "
        "the Safety Chip monitors each natural-language constraint as an LTL formula, prunes an "
        "action that would violate one, explains why and re-prompts. The planner here is a "
        "seeded simulated stand-in that follows the task's program with plausible deviations, "
        "not a language model. Safety is judged by fresh monitors on the executed trace; an "
        "obligation still pending at the end counts as a violation.",
        html.escape(f"Formulas: {result['formulas']}. {NL_NOTE}."),
    ]
    return Section("Safety Chip: household agents", paragraphs, table, [], ["safety_chip.json"])
