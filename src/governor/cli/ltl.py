"""The ``governor ltl`` commands: translate constraints (and accept them), check a trace.

``translate`` shows each constraint's formula, its English back-translation and a violating
example trace; ``--accept`` then appends the shown specs to a YAML file as verified.
The propositions come from the built-in household domain (``--domain household``, the default),
or from the user: ``--props``/``--places`` lists, or a ``--domain-file``
(:mod:`governor.ltl.english.domain_file`). ``--file`` translates a file of sentences in one batch.
``check`` runs a monitor over a JSON trace (a list of steps, each a list of true propositions)
and prints ``{"steps": [...], "final": ...}``; exit status 1 when the trace violates the formula.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from governor.cli.ltl_batch import (
    BATCH_HELP,
    alternatives,
    batch_command,
    print_json,
    translate_sentences,
)
from governor.cli.ltl_check import add_check_parser
from governor.cli.ltl_conflicts import add_conflicts_parser
from governor.errors import ConfigError, expected
from governor.flags import add_backend_args, backend_config_from_args
from governor.ltl.domain import Domain
from governor.ltl.english.domain_file import flag_domain, load_domain_file
from governor.ltl.english.grammar.readings import CONVENTIONS, SAFETY_CHIP
from governor.ltl.english.translate import spec_from
from governor.ltl.english.verify import verify_view
from governor.ltl.specs import append_specs
from governor.usage import metered
from governor.worlds.household.ltl_domain import household_domain
from governor.worlds.household.ltl_phrases import HOUSEHOLD_PHRASES

DOMAINS = ("household",)
DOMAIN_FILE_HELP = (
    "your domain, YAML or JSON: name, propositions (a list), and optional places, aliases"
    " (phrase -> object) and rules (formulas that always hold); see examples/domains/"
)


def add_ltl_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``ltl`` command group (``translate``, ``check``) to ``subparsers``."""
    ltl = subparsers.add_parser("ltl", help="translate constraints to LTL; check traces")
    sub = ltl.add_subparsers(dest="ltl_command", required=True, parser_class=type(ltl))
    tr = sub.add_parser(
        "translate", help="translate constraint sentences and show how to verify them"
    )
    tr.add_argument("text", nargs="*", help="constraint sentence(s), one per argument")
    tr.add_argument("--domain", choices=DOMAINS, help="built-in domain (the default)")
    tr.add_argument("--props", metavar="A,B(X),...", help="your propositions, comma-separated")
    tr.add_argument("--places", metavar="P,Q,...", help="your places (agent_at(P)), one at a time")
    tr.add_argument("--domain-file", type=Path, metavar="FILE.yaml", help=DOMAIN_FILE_HELP)
    tr.add_argument("--file", type=Path, metavar="SENTENCES.txt", help=BATCH_HELP)
    tr.add_argument("--out", type=Path, metavar="PATH.json", help="with --file: write the records")
    tr.add_argument("--task", help="task key (experiment/id): only its objects may be named")
    tr.add_argument("--llm", action="store_true", help="translate through the LLM endpoint")
    tr.add_argument(
        "--convention",
        choices=CONVENTIONS,
        help="the offline translator's conventions: the Safety Chip's future avoidance"
        " G(a -> G !b) (the default), Lang2LTL's G(a -> X G !b), or drone_commands (short"
        " navigation commands read by the drone-planning set's conventions: docs/ltl-english.md);"
        " overrides the conventions a --domain-file declares",
    )
    add_backend_args(tr)
    tr.add_argument(
        "--accept", type=Path, metavar="PATH.yaml", help="append the shown specs, as verified"
    )
    tr.add_argument("--json", action="store_true", help="print JSON instead of tables")
    tr.set_defaults(handler=translate_command)
    add_check_parser(sub)
    add_conflicts_parser(sub)
    return ltl


def _domain(args: argparse.Namespace) -> Domain:
    given = {"--props": args.props, "--places": args.places, "--domain-file": args.domain_file}
    mine = [flag for flag, value in given.items() if value is not None]
    if args.domain_file is not None and len(mine) > 1:
        raise ConfigError("--domain-file: not with --props or --places (list them in the file)")
    if mine and args.domain is not None:
        raise ConfigError(f"--domain {args.domain}: not with {' or '.join(mine)}: choose one")
    if mine and args.task:
        raise ConfigError(f"--task names a household task: not with {' or '.join(mine)}")
    if args.domain_file is not None:
        return load_domain_file(args.domain_file, HOUSEHOLD_PHRASES)
    if mine:
        return flag_domain(args.props, args.places, HOUSEHOLD_PHRASES)
    if (args.domain or "household") not in DOMAINS:
        raise ConfigError(f"--domain: {expected(' or '.join(DOMAINS), args.domain)}")
    return household_domain(args.task)


def translate_command(args: argparse.Namespace, console: Console) -> int:
    """Translate, show the verification view, and append accepted specs (``--accept``)."""
    if args.file is not None:
        if args.text or args.accept:
            raise ConfigError("--file: not with sentences as arguments or with --accept")
    elif not args.text:
        raise ConfigError("translate: expected sentences as arguments, or --file SENTENCES.txt")
    elif args.out is not None:
        raise ConfigError("--out: only with --file (use --json to print JSON)")
    if args.llm and args.convention not in (None, SAFETY_CHIP):
        raise ConfigError(
            f"--convention {args.convention}: only for the offline translator, not with --llm"
        )
    domain = _domain(args)
    backend = None
    if args.llm:
        from governor.backends import backend_from_config

        backend = backend_from_config(backend_config_from_args(args))
    if args.file is not None:
        return batch_command(args, domain, backend, console)
    with metered() as meter:
        translations = translate_sentences(args.text, domain, backend, args.convention)
    views = [_with_readings(verify_view(t, domain), t) for t in translations]
    failed = [t.sentence for t in translations if not t.ok]
    write = bool(args.accept) and not failed  # all or nothing: no spec file silently misses one
    fell_back = [t for t in translations if t.method.startswith("offline (llm failed")]
    if args.json:
        out = {"domain": domain.name, "llm_calls": meter.total.calls, "constraints": views}
        out["llm_failed"] = meter.total.failed
        out["accepted_to"] = str(args.accept) if write else None
        print_json(console, out)
    else:
        for view in views:
            console.print(_table(view))
        console.print(
            f"{domain.name}: {meter.total.calls} LLM call(s), {meter.total.failed} failed"
        )
        if fell_back:
            console.print(
                f"[yellow]the LLM translator failed for {len(fell_back)} sentence(s): they were"
                f" translated offline instead ({escape(fell_back[0].method)})[/yellow]",
                emoji=False,
            )
    if write:
        append_specs(args.accept, [spec_from(t) for t in translations])
        if not args.json:
            console.print(f"{len(translations)} spec(s) appended to {args.accept} as verified")
    elif args.accept and not args.json:
        console.print(
            f"[red]nothing appended to {escape(str(args.accept))}: "
            f"{len(failed)} sentence(s) not translated[/red]"
        )
    return 1 if failed else 0


def _with_readings(view: dict[str, Any], t: Any) -> dict[str, Any]:
    """The view with the reading's named choices and any other readings of the sentence."""
    found = alternatives(t)
    return view | {"reading": t.reading, "ambiguous": t.ambiguous, "alternatives": found}


def _table(view: dict[str, Any]) -> Table:
    table = Table(title=escape(view["text"]), show_header=False, title_justify="left")
    table.add_column(style="bold")
    table.add_column()
    if view["formula"] is None:
        table.add_row("error", f"[red]{escape(str(view['error']))}[/red]")
        if view["grounding"]:
            table.add_row("grounding", escape(_pairs(view["grounding"])))
        return table
    rows = [
        ("formula", view["formula"]),
        ("prefix", view["prefix"]),
        ("reads", view["english"]),
        ("grounding", _pairs(view["grounding"])),
        ("method", f"{view['method']}, pattern {view['pattern'] or 'none'}"),
    ]
    if view.get("reading"):
        rows.append(("reading", view["reading"]))
    for alt in view.get("alternatives", []):
        rows.append(("or (ambiguous)", f"{alt['formula']}: {alt['reading']}"))
    for name, value in rows:
        table.add_row(name, escape(value))
    if view["counterexample"] is not None:
        steps = [
            f"step {i}: {', '.join(s) if s else '(none of its propositions)'}"
            for i, s in enumerate(view["counterexample"])
        ]
        at, n = view["violated_at"], len(view["counterexample"])
        ends = "violated if the trace ends here: an obligation is still pending"
        steps.append(f"violated at step {at}" if at is not None and at < n else ends)
        table.add_row("violated by", escape("\n".join(steps)))
    for note in view["notes"]:
        table.add_row("note", f"[yellow]{escape(note)}[/yellow]")
    table.add_row("verified", "no: accept it with --accept after checking the rows above")
    return table


def _pairs(mapping: dict[str, str]) -> str:
    return "; ".join(f"{k!r} -> {v}" for k, v in mapping.items()) or "none"
