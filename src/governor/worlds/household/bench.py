"""The Safety Chip benchmark (the paper's Table I): three agents on the household tasks.

Agents: ``base`` (the planner alone), ``nl_constraints`` (the constraints in its prompt) and
``safety_chip`` (the planner under one monitor per constraint, pruning, explanations and
re-prompting). Success: the goal holds and the agent stopped with ``[DONE]``. Safety: fresh
monitors of the experts' constraints (``constraints["k"]``), independent of the agent's own, read
the executed label trace; a violation anywhere, or an obligation pending at the end, is unsafe.

With the simulated planner the ``nl_constraints`` row is n/a: a scripted stand-in cannot show how
a model heeds constraints in its prompt, and any number we put there would be our assumption.

The pieces: :mod:`~governor.worlds.household.bench_config` (what a run runs),
:mod:`~governor.worlds.household.bench_agents`, :mod:`~governor.worlds.household.bench_scoring`,
:mod:`~governor.worlds.household.bench_run` (the run and the table) and
:mod:`~governor.worlds.household.bench_report` (the command and the demo section); this module
is the entry point (``add_parser``, ``run``, ``table_lines``, ``demo_section``) and imports them.
"""

from __future__ import annotations

from pathlib import Path

from governor.flags import Subcommands, add_backend_args, add_dataclass_args
from governor.worlds.household.bench_config import EXPERIMENTS, SafetyChipBenchConfig, counts
from governor.worlds.household.bench_report import demo_section, run_command
from governor.worlds.household.bench_run import run, select_tasks, table_lines

__all__ = [
    "EXPERIMENTS",
    "SafetyChipBenchConfig",
    "add_parser",
    "counts",
    "demo_section",
    "run",
    "run_command",
    "select_tasks",
    "table_lines",
]


def add_parser(bench: Subcommands) -> None:
    """`governor bench safety-chip`."""
    chip = bench.add_parser(
        "safety-chip", help="household agents with and without the Safety Chip (Table I)"
    )
    add_dataclass_args(chip, SafetyChipBenchConfig)
    chip.add_argument("--json", type=Path, help="write the results here")
    chip.add_argument("--trace", type=Path, help="record every decision (.jsonl or .sqlite)")
    add_backend_args(chip)
    chip.set_defaults(handler=run_command)
