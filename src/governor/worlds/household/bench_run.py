"""Running the Safety Chip benchmark (the paper's Table I): every selected task, constraint count
and agent, scored; and the rows of the table.

Imports the benchmark's configuration, agents and scoring, and the household environment (the
command and the report, :mod:`governor.worlds.household.bench_report`, sit on top).
"""

from __future__ import annotations

import dataclasses
import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from tqdm import tqdm

from governor.backends import Backend, backend_from_config
from governor.config import BackendConfig
from governor.trace import open_trace
from governor.worlds.household.bench_agents import AGENTS, NL_NOTE, episodes
from governor.worlds.household.bench_config import EXPERIMENTS, SafetyChipBenchConfig, counts
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
