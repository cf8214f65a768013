"""``governor ltl conflicts``: do the constraints contradict each other or the task, under the
domain's action rules?

The sentences are translated offline in the task's household domain; the task's goal comes from
``task_vh.json``; the check (:func:`governor.worlds.household.ltl_rules.check_task`) searches the
simulator's rules for an execution that meets every constraint and ends with the goal met. It
prints the verdict, a minimal conflicting subset in English or the steps of a witness, and with
``--json OUT`` writes ``{"conflict", "undecided", "states", "minimal", "goal_involved",
"minimal_exact", "witness", ...}``. Exit status 1 on a conflict, 0 otherwise (an undecided check
included), 2 on bad input (an unknown task, a sentence that does not translate).

With ``--domain-file FILE --goal GOAL`` the domain is the user's: the sentences are translated
against the file's propositions, the goal is a formula over them (or a sentence: "put the pallet
in the truck", whose ``F`` is dropped), and the search runs over the file's actions
(:mod:`governor.ltl.domain_actions`); the file's rules are checked as constraints too.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape

from governor.errors import ConfigError, SpecError, expected
from governor.files import write_json
from governor.ltl.conflicts import MAX_STATES, ConflictReport, check_conflicts
from governor.ltl.domain import Domain
from governor.ltl.english.domain_file import read_domain_file
from governor.ltl.english.translate import translate_offline
from governor.ltl.operators import Eventually
from governor.ltl.parser import parse
from governor.ltl.syntax import Formula
from governor.worlds.household.ltl_domain import household_domain
from governor.worlds.household.ltl_phrases import HOUSEHOLD_PHRASES
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
        description="Either --task KEY (the household simulator's rules) or --domain-file FILE"
        " --goal GOAL (your domain file's init, actions, moves and invariants; its rules are"
        ' checked too). --json writes {"conflict", "minimal", "witness", "undecided", "states",'
        " ...}. Exit status 1 on a conflict, 0 otherwise, 2 on bad input.",
    )
    cf.add_argument("text", nargs="+", help="constraint sentence(s), one per argument")
    cf.add_argument("--domain", choices=DOMAINS, help="built-in domain (household, the default)")
    cf.add_argument("--task", help="task key (experiment/id) of task_vh.json")
    cf.add_argument(
        "--domain-file", type=Path, metavar="FILE.yaml",
        help="your domain (YAML or JSON) with init and actions (see examples/domains/); needs"
        " --goal",
    )  # fmt: skip
    cf.add_argument(
        "--goal", metavar="GOAL",
        help="with --domain-file: what must hold at the end, a formula over the file's"
        " propositions (is_in(pallet, truck) & !is_grabbed(pallet)) or a sentence",
    )  # fmt: skip
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
    if args.domain_file is not None:
        return _file_command(args, console)
    if args.task is None or args.goal is not None:
        raise ConfigError("conflicts: expected --task KEY, or --domain-file FILE with --goal GOAL")
    task = find_task(args.task)
    scene = default_scene()
    domain = household_domain(task, scene=scene)
    named, texts = _translated(args.text, domain)
    report = check_task(task, named, scene=scene, max_states=args.max_states)
    goal = goal_condition(task, scene)
    data = _record(report, texts) | {
        "task": task.key,
        "goal": None if goal is None else str(goal),
        "constraints": [{"text": texts[n], "formula": str(f)} for n, f in named],
    }
    if args.json is not None:
        write_json(args.json, data)
    _show(console, f"task {task.key}", data)
    return 1 if report.conflict else 0


def _file_command(args: argparse.Namespace, console: Console) -> int:
    """The check over a domain file's actions."""
    if args.domain is not None or args.task is not None or args.goal is None:
        raise ConfigError("--domain-file: expected --goal GOAL, and neither --domain nor --task")
    parts = read_domain_file(args.domain_file, HOUSEHOLD_PHRASES)
    if parts.actions is None:
        what = "actions (or moves: true) and init in the file, for the conflicts check"
        raise ConfigError(f"{args.domain_file}: {expected(what, 'none')}")
    named, texts = _translated(args.text, parts.domain)
    for i, (text, formula) in enumerate(parts.rules, 1):
        named.append((f"r{i}", formula))
        texts[f"r{i}"] = f"rule: {text}"
    goal = read_goal(args.goal, parts.domain)
    report = check_conflicts(named, parts.actions, goal, max_states=args.max_states)
    data = _record(report, texts) | {
        "domain": parts.domain.name,
        "goal": str(goal),
        "constraints": [{"text": texts[n], "formula": str(f)} for n, f in named],
    }
    if args.json is not None:
        write_json(args.json, data)
    _show(console, f"domain {parts.domain.name}", data)
    return 1 if report.conflict else 0


def _translated(
    sentences: list[str], domain: Domain
) -> tuple[list[tuple[str, Formula]], dict[str, str]]:
    named, texts = [], {}
    for i, sentence in enumerate(sentences, 1):
        found = translate_offline(sentence, domain)
        if found.formula is None:
            raise ConfigError(f"cannot translate {sentence!r}: {found.error}")
        named.append((f"c{i}", found.formula))
        texts[f"c{i}"] = sentence
    return named, texts


def read_goal(text: str, domain: Domain) -> Formula:
    """The goal: a formula over the domain's propositions, or a sentence translated offline
    (``F x`` read as ``x``); an error unless it has no temporal operator."""
    try:
        goal = domain.check(parse(text))
    except SpecError:
        found = translate_offline(text, domain)
        if found.formula is None:
            what = "a formula over the domain's propositions or a sentence"
            raise ConfigError(f"--goal: {expected(what, text)} ({found.error})") from None
        goal = found.formula.arg if isinstance(found.formula, Eventually) else found.formula
    if goal.has_future or goal.has_past:
        what = "a condition on the last state, without temporal operators"
        raise ConfigError(f"--goal: {expected(what, str(goal))}")
    return goal


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


def _show(console: Console, header: str, data: dict[str, Any]) -> None:
    goal = data["goal"] or "none (any end state)"
    console.print(f"{escape(header)}: goal {escape(goal)}", highlight=False)
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
