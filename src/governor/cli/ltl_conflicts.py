"""``governor ltl conflicts``: do the constraints contradict each other or the task, under the
domain's action rules?

The sentences are translated offline in the task's household domain; the task's goal comes from
``task_vh.json``; the check (:func:`governor.worlds.household.ltl_rules.check_task`) searches the
simulator's rules for an execution that meets every constraint and ends with the goal met. It
prints the verdict, a minimal conflicting subset in English or the steps of a witness, and with
``--json OUT`` writes ``{"conflict", "undecided", "states", "minimal", "goal_involved",
"minimal_exact", "witness", ...}``. Exit status 1 on a conflict, 0 otherwise (an undecided check
included), 2 on bad input (an unknown task, a sentence that does not translate).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape

from governor.errors import ConfigError, expected
from governor.files import write_json
from governor.ltl.conflicts import MAX_STATES, ConflictReport
from governor.ltl.translate import translate_offline
from governor.worlds.household.ltl_domain import household_domain
from governor.worlds.household.ltl_rules import check_task, goal_condition
from governor.worlds.household.sim import default_scene
from governor.worlds.household.tasks import find_task

DOMAINS = ("household",)
MAX_CONSTRAINTS = 32
"""Most constraint sentences one check takes (the minimal subset costs one search each)."""


def add_conflicts_parser(ltl_subparsers: Any) -> argparse.ArgumentParser:
    """Add ``conflicts`` to the ``ltl`` command group's subparsers."""
    cf = ltl_subparsers.add_parser(
        "conflicts",
        help="check that constraints can hold together with a task under the domain's rules",
    )
    cf.add_argument("text", nargs="+", help="constraint sentence(s), one per argument")
    cf.add_argument("--domain", choices=DOMAINS, default="household", help="built-in domain")
    cf.add_argument("--task", required=True, help="task key (experiment/id) of task_vh.json")
    cf.add_argument(
        "--max-states", type=int, default=MAX_STATES, metavar="N",
        help=f"cap on the states one search explores (default {MAX_STATES:,}); past it the"
        " answer is 'undecided', never a conflict",
    )  # fmt: skip
    cf.add_argument("--json", type=Path, metavar="OUT.json", help="write the verdict as JSON")
    cf.set_defaults(handler=conflicts_command)
    return cf


def conflicts_command(args: argparse.Namespace, console: Console) -> int:
    """Translate, check, print the verdict; exit status 1 on a conflict."""
    if len(args.text) > MAX_CONSTRAINTS:
        what = f"at most {MAX_CONSTRAINTS} sentences"
        raise ConfigError(f"conflicts: {expected(what, len(args.text))}")
    if args.max_states < 1:
        raise ConfigError(f"--max-states: {expected('at least 1', args.max_states)}")
    task = find_task(args.task)
    scene = default_scene()
    domain = household_domain(task, scene=scene)
    named, texts = [], {}
    for i, sentence in enumerate(args.text, 1):
        found = translate_offline(sentence, domain)
        if found.formula is None:
            raise ConfigError(f"cannot translate {sentence!r}: {found.error}")
        named.append((f"c{i}", found.formula))
        texts[f"c{i}"] = sentence
    report = check_task(task, named, scene=scene, max_states=args.max_states)
    goal = goal_condition(task, scene)
    data = _record(report, texts) | {
        "task": task.key,
        "goal": None if goal is None else str(goal),
        "constraints": [{"text": texts[n], "formula": str(f)} for n, f in named],
    }
    if args.json is not None:
        write_json(args.json, data)
    _show(console, task.key, data)
    return 1 if report.conflict else 0


def _record(report: ConflictReport, texts: dict[str, str]) -> dict[str, Any]:
    return {
        "conflict": report.conflict,
        "undecided": report.undecided,
        "minimal": [texts[n] for n in report.minimal],
        "goal_involved": report.goal_involved,
        "minimal_exact": report.minimal_exact,
        "witness": None if report.witness is None else list(report.witness),
        "states": report.states,
        "searches": report.searches,
    }


def _show(console: Console, key: str, data: dict[str, Any]) -> None:
    goal = data["goal"] or "none (any end state)"
    console.print(f"task {escape(key)}: goal {escape(goal)}", highlight=False)
    for c in data["constraints"]:
        console.print(f"  {escape(c['text'])}  [{escape(c['formula'])}]", highlight=False)
    if data["undecided"]:
        console.print(
            f"[yellow]undecided within {data['states']:,} states: no conflict proven and no"
            " execution found (raise --max-states)[/yellow]"
        )
    elif data["conflict"]:
        if data["minimal"]:
            with_goal = " together with the task's goal" if data["goal_involved"] else ""
            console.print(f"[red]conflict: these constraints cannot all hold{with_goal}:[/red]")
            for text in data["minimal"]:
                console.print(f"  - {escape(text)}", highlight=False)
            if not data["minimal_exact"]:
                console.print("  (a search hit the cap: the set may not be minimal)")
        else:
            console.print("[red]conflict: the goal cannot be reached in this domain at all[/red]")
    else:
        steps = data["witness"] or []
        console.print(f"no conflict: an execution meets every constraint ({len(steps)} steps):")
        for i, step in enumerate(steps, 1):
            console.print(f"  {i}. {escape(step)}", highlight=False)
    console.print(f"{data['states']:,} states in {data['searches']} search(es)")
