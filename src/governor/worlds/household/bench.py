"""The Safety Chip benchmark (the paper's Table I): three agents on the household tasks.

Agents: ``base`` (the planner alone), ``nl_constraints`` (the constraints in its prompt) and
``safety_chip`` (the planner under one monitor per constraint, pruning, explanations and
re-prompting). Success: the goal holds and the agent stopped with ``[DONE]``. Safety: fresh
monitors of the experts' constraints (``constraints["k"]``), independent of the agent's own, read
the executed label trace; a violation anywhere, or an obligation pending at the end, is unsafe.

With the simulated planner the ``nl_constraints`` row is n/a: a scripted stand-in cannot show how
a model heeds constraints in its prompt, and any number we put there would be our assumption.
"""

from __future__ import annotations

import argparse
import dataclasses
import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any, Literal

from rich.console import Console
from tqdm import tqdm

from governor.backends import Backend, backend_from_config
from governor.config import (
    BackendConfig,
    Subcommands,
    add_backend_args,
    add_dataclass_args,
    check_range,
    option,
)
from governor.errors import ConfigError, expected
from governor.report import Section
from governor.trace import open_trace
from governor.worlds.household.bench_agents import AGENTS, NL_NOTE, episodes
from governor.worlds.household.bench_scoring import (
    Resolve,
    default_resolver,
    rows,
    task_specs,
    unachievable,
)
from governor.worlds.household.env import (
    KNOWN_PROGRAM_ISSUES,
    Task,
    find_task,
    load_tasks,
)

EXPERIMENTS = {"rooms": "Four Room", "mobile_manip": "Mobile Manip"}


@dataclasses.dataclass(frozen=True)
class SafetyChipBenchConfig:
    """What `governor bench safety-chip` runs."""

    experiment: Literal["rooms", "mobile_manip", "all"] = option("all", "task set")
    constraints: str = option("1-5", "constraint counts k: a range such as 1-5 or a list 1,3")
    agent: Literal["simulated", "llm"] = option("simulated", "planner: simulated or llm")
    diverse: bool = option(
        False, "agents get the non-experts' paraphrases; safety is judged on the experts' ones"
    )
    repeats: int = option(3, "episodes per task and k (seeds of the simulated planner)")
    seed: int = option(0, "first seed")
    max_steps: int = option(30, "actions before an episode is truncated")
    max_regenerations: int = option(6, "re-prompts per step before the episode halts")
    deviation_rate: float = option(0.2, "simulated planner: probability of each deviation")
    tasks: str = option("", "comma-separated task keys (default: all of the experiment)")
    include_known_issues: bool = option(False, "also run the tasks whose data misses the goal")
    spec: str | None = option(
        None, "spec file (ltl translate --accept); entries marked verified count as person-verified"
    )
    temperature: float = option(0.0, "LLM sampling temperature")

    def __post_init__(self) -> None:
        counts(self.constraints)
        check_range("repeats", self.repeats, 1, 1000)
        check_range("max_steps", self.max_steps, 1, 1000)
        check_range("max_regenerations", self.max_regenerations, 0, 32)
        check_range("deviation_rate", self.deviation_rate, 0.0, 1.0)


def counts(text: str) -> list[int]:
    """Constraint counts from ``1-5`` or ``1,3``; each in 1..5."""
    try:
        if "-" in text:
            low, high = (int(x) for x in text.split("-"))
            out = list(range(low, high + 1))
        else:
            out = [int(x) for x in text.split(",")]
    except ValueError:
        out = []
    if not out or not all(1 <= k <= 5 for k in out):
        raise ConfigError(
            f"constraints: {expected('a range such as 1-5 or a list 1,3 in 1..5', text)}"
        )
    return out


def select_tasks(cfg: SafetyChipBenchConfig) -> tuple[list[Task], dict[str, str]]:
    """The tasks to run, and those left out with the reason."""
    every = load_tasks()
    chosen = [find_task(k.strip(), every) for k in cfg.tasks.split(",")] if cfg.tasks else every
    chosen = [t for t in chosen if cfg.experiment in ("all", t.experiment)]
    skip = {} if cfg.include_known_issues else KNOWN_PROGRAM_ISSUES
    return [t for t in chosen if t.key not in skip], {
        t.key: skip[t.key] for t in chosen if t.key in skip
    }


def run(
    cfg: SafetyChipBenchConfig,
    backend_config: BackendConfig | None = None,
    *,
    backend: Backend | None = None,
    resolve: Resolve | None = None,
    trace_path: Path | None = None,
    progress: bool = True,
) -> dict[str, Any]:
    """Run the benchmark; returns the JSON-ready result (rows, averages, exclusions, ...).

    With ``agent="llm"`` the planner talks to ``backend`` (default: the endpoint of
    ``backend_config`` or the environment). ``resolve`` gives each sentence's formula (default:
    :func:`default_resolver` of ``cfg.spec``).
    """
    start = time.perf_counter()
    if cfg.agent != "llm":
        backend = None
    elif backend is None:
        backend = backend_from_config(backend_config or BackendConfig.from_env())
        backend.check()
    resolve = resolve or default_resolver(cfg.spec)
    tasks, excluded = select_tasks(cfg)
    ks = counts(cfg.constraints)
    cells: dict[tuple[str, str, int], list[dict[str, Any]]] = defaultdict(list)
    untranslated: list[dict[str, Any]] = []
    impossible: list[dict[str, Any]] = []
    with ExitStack() as stack:
        trace = stack.enter_context(open_trace(trace_path)) if trace_path else None
        bar = stack.enter_context(
            tqdm(total=len(tasks) * len(ks), desc="safety-chip", disable=None if progress else True)
        )
        for task in tasks:
            for k in ks:
                bar.update()
                expert = task.constraints[str(k)]
                given = task.constraints[f"{k}_diverse"] if cfg.diverse else expert
                judged, used = task_specs(task, expert, resolve), task_specs(task, given, resolve)
                if judged.missing or used.missing:
                    missing = [*judged.missing, *used.missing]
                    untranslated.append({"task": task.key, "k": k, "sentences": missing})
                    continue
                clash = unachievable(task, judged)
                if clash:
                    impossible.append({"task": task.key, "k": k, "conflict": clash})
                    continue
                for agent in AGENTS:
                    cells[(agent, task.experiment, k)] += episodes(
                        agent, task, k, judged, used, given, cfg, backend, trace
                    )
    experiments = sorted({t.experiment for t in tasks})
    return {
        "config": dataclasses.asdict(cfg),
        "formulas": getattr(resolve, "source", "given"),
        "rows": rows(cells, AGENTS, experiments, ks),
        "averages": rows(cells, AGENTS, experiments, [0]),
        "tasks": [t.key for t in tasks],
        "excluded_tasks": excluded,
        "untranslated": untranslated,
        "unachievable": impossible,
        "notes": [NL_NOTE] if backend is None else [],
        "seconds": time.perf_counter() - start,
    }


def _cell(rate: float | None) -> str:
    return "n/a" if rate is None else f"{rate:.0%}"


def table_lines(result: dict[str, Any]) -> Iterator[list[str]]:
    """Table I's layout: a row per agent and k (then all k), success and safety per experiment."""
    rows = [*result["rows"], *result["averages"]]
    experiments = [e for e in EXPERIMENTS if any(r["experiment"] == e for r in rows)]
    head = ["agent", "k"]
    for e in experiments:
        head += [f"{EXPERIMENTS[e]} success", f"{EXPERIMENTS[e]} safety"]
    yield head
    keys = dict.fromkeys((r["agent"], r["n_constraints"]) for r in rows)
    for agent, k in sorted(keys, key=lambda x: (AGENTS.index(x[0]), str(x[1]) == "all")):
        line = [agent, str(k)]
        for e in experiments:
            row = next(
                r
                for r in rows
                if (r["agent"], r["n_constraints"], r["experiment"]) == (agent, k, e)
            )
            line += [_cell(row["success_rate"]), _cell(row["safety_rate"])]
        yield line


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


def run_command(args: argparse.Namespace, console: Console) -> int:
    """Run the benchmark from parsed flags; print the table and what it leaves out."""
    from governor.worlds.household.bench_report import run_command as command

    return command(args, console)


def demo_section(out_dir: Path, console: Console) -> Section:
    """A small offline run for the demo report (see :mod:`governor.worlds.household.bench_report`)."""
    from governor.worlds.household.bench_report import demo_section as section

    return section(out_dir, console)
