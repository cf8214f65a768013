"""`governor bench ltl-translate`: the offline English-to-LTL translator on pattern sentences.

With ``--file SET.jsonl --domain-file D.yaml`` it scores any set of sentences with gold formulas
instead (:mod:`governor.bench.ltl_people`, world-free); without, the shipped sets below.

Reads the sets of ``data/ltl_patterns/``: ``dev.jsonl`` (the rules were developed on it),
``dev2.jsonl`` to ``dev14.jsonl`` (each written independently, scored unseen, then developed
on too) and ``heldout.jsonl`` (written by someone who had not seen the rules; run once with the
rules frozen). One JSON object a line:
``id``, ``family``, ``args``, ``n``, ``places``, ``props``, ``text``. It translates each sentence against
a domain of its places (one at a time) and props, and checks the translation against the
intended formula ``PATTERNS[family](*args[, n])`` (a place ``p`` is ``agent_at(p)``, a prop is
itself), with the household's verbs as `governor ltl translate --props` gives them (which is why it
sits with the papers' reproductions: the phrase table is the household world's). The check is exact: ``intended xor translated`` must have no finite trace over the
alphabet (one place at a time, props free), found by an exhaustive search of
:mod:`governor.ltl.satisfiability`; a search cut off by its budget counts as not equivalent.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import track

from governor.bench import ltl_people as people
from governor.bench.ltl_people import GOLD_FORMATS
from governor.config import check_range
from governor.data import shared_data_dir
from governor.errors import ConfigError, expected
from governor.files import json_lines, write_json
from governor.flags import Subcommands
from governor.ltl import operators as op
from governor.ltl.english.domain_file import load_domain_file, user_domain
from governor.ltl.english.grammar.readings import CONVENTIONS
from governor.ltl.english.translate import translate_offline
from governor.ltl.parser import atom
from governor.ltl.patterns import PATTERNS
from governor.ltl.satisfiability import one_hot, powerset, search
from governor.ltl.syntax import Formula
from governor.worlds.household.ltl_phrases import HOUSEHOLD_PHRASES

SETS = (
    "dev",
    "dev2",
    "dev3",
    "dev4",
    "dev5",
    "dev6",
    "dev7",
    "dev8",
    "dev9",
    "dev10",
    "dev11",
    "dev12",
    "dev13",
    "dev14",
    "heldout",
)
FIELDS = ("id", "family", "args", "n", "places", "props", "text")
MAX_STATES = 200_000
"""State budget of one equivalence search."""


def data_dir() -> Path:
    return shared_data_dir() / "ltl_patterns"


def load_set(path: Path) -> list[dict[str, Any]]:
    """The records of one JSON-lines file; an error names the line and the missing field."""
    out = []
    for i, rec in json_lines(path):
        missing = [k for k in FIELDS if not isinstance(rec, dict) or k not in rec]
        if missing:
            raise ConfigError(f"{path}:{i}: {expected('the fields ' + ', '.join(FIELDS), missing)}")
        if rec["family"] not in PATTERNS:
            raise ConfigError(f"{path}:{i}: family: {expected('a key of PATTERNS', rec['family'])}")
        out.append(rec)
    return out


def intended(rec: dict[str, Any]) -> Formula:
    """``PATTERNS[family](*args[, n])`` over ``agent_at(place)`` and bare props."""
    places = set(rec["places"])
    args = [atom(f"agent_at({a})" if a in places else a) for a in rec["args"]]
    build = PATTERNS[rec["family"]]
    return build(*args, rec["n"]) if rec["n"] is not None else build(*args)


def equivalent(a: Formula, b: Formula, rec: dict[str, Any]) -> bool:
    """Whether no finite trace over the record's alphabet tells ``a`` and ``b`` apart."""
    rooms = [f"agent_at({p})" for p in rec["places"]]
    alphabet = one_hot(rooms, rec["props"]) if rooms else powerset(rec["props"])
    found = search(op.Not(op.Iff(a, b)), alphabet, max_depth=64, max_states=MAX_STATES)
    return found.trace is None and found.exhaustive


def score(rec: dict[str, Any]) -> dict[str, Any]:
    """One record's result: translated, equivalent, the formulas and the reading chosen."""
    domain = user_domain(
        "pattern sentences", rec["props"], rec["places"], phrases=HOUSEHOLD_PHRASES
    )
    t = translate_offline(rec["text"], domain)
    goal = intended(rec)
    same = t.formula is not None and equivalent(goal, t.formula, rec)
    return {
        "id": rec["id"], "family": rec["family"], "text": rec["text"], "translated": t.ok,
        "equivalent": same, "intended": str(goal), "formula": t.formula and str(t.formula),
        "pattern": t.pattern, "reading": t.reading, "ambiguous": t.ambiguous, "error": t.error,
    }  # fmt: skip


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    n, ok = len(rows), sum(r["translated"] for r in rows)
    same = sum(r["equivalent"] for r in rows)
    return {
        "sentences": n, "translated": ok, "equivalent": same,
        "translated_rate": ok / n if n else None, "equivalent_rate": same / ok if ok else None,
        "readings": dict(Counter(r["pattern"] for r in rows if r["pattern"])),
    }  # fmt: skip


def run(which: str = "all", limit: int | None = None, progress: bool = False) -> dict[str, Any]:
    """``{"sets": {SET: summary with "families"}, "records": [...]}`` over the chosen sets."""
    names = SETS if which == "all" else (which,)
    sets, records = {}, []
    for name in names:
        path = data_dir() / f"{name}.jsonl"
        if not path.exists():
            continue
        recs = load_set(path)[:limit]
        rows = [score(r) for r in (track(recs, f"{name}") if progress else recs)]
        for r in rows:
            r["set"] = name
        fams = sorted({r["family"] for r in rows})
        sets[name] = summary(rows) | {
            "families": {f: summary([r for r in rows if r["family"] == f]) for f in fams}
        }
        records += rows
    if not sets:
        raise ConfigError(
            f"{data_dir()}: {expected(' or '.join(f'{s}.jsonl' for s in names), 'none')}"
        )
    return {"sets": sets, "records": records}


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.0f}%"


def table_lines(result: dict[str, Any]) -> Iterator[list[str]]:
    """Per set and family: sentences, translated, equivalent (of translated), other readings."""
    yield ["set", "family", "n", "translated", "equivalent", "other patterns chosen"]
    for name, s in result["sets"].items():
        for fam, f in [*s["families"].items(), ("all", s)]:
            other = [f"{k} {v}" for k, v in sorted(f["readings"].items()) if k != fam]
            shown = ", ".join(other) if fam != "all" else ""
            yield [name, fam, str(f["sentences"]), _pct(f["translated_rate"]),
                   _pct(f["equivalent_rate"]), shown[:48]]  # fmt: skip


def add_parser(bench: Subcommands) -> None:
    """`governor bench ltl-translate`."""
    p = bench.add_parser(
        "ltl-translate",
        help="the offline translator on the shipped pattern sentences, or (--file) on any set"
        " of sentences with gold formulas",
    )
    p.add_argument("--json", type=Path, help="write the results here")
    p.add_argument("--set", choices=(*SETS, "all"), help="a shipped set (default: all)")
    p.add_argument("--limit", type=int, help="only the first N sentences of each set")
    p.add_argument(
        "--file", type=Path, metavar="SET.jsonl",
        help='a set of your own: one {"text", "ltl"} object a line, scored over --domain-file',
    )  # fmt: skip
    p.add_argument("--domain-file", type=Path, metavar="D.yaml", help="with --file: its domain")
    p.add_argument("--gold-format", choices=GOLD_FORMATS, default="infix", help="with --file")
    p.add_argument(
        "--convention", choices=CONVENTIONS,
        help="with --file: the conventions the offline translator reads by (default: those the"
        " domain file declares, else safety_chip)",
    )  # fmt: skip
    p.set_defaults(handler=run_command)


def file_command(args: argparse.Namespace, console: Console) -> int:
    """Score ``--file`` over ``--domain-file``: the shapes' table, then the wrong readings."""
    from governor.report import print_table

    if args.domain_file is None or args.set is not None:
        raise ConfigError("--file: expected --domain-file D.yaml with it, and no --set")
    domain = load_domain_file(args.domain_file)
    result = people.run(args.file, domain, args.gold_format, args.convention, args.limit)
    print_table(
        console,
        f"English to LTL (offline) on {args.file.name}, conventions {result['convention']}",
        list(people.table_lines(result)),
    )
    console.print(f"wrong readings ({len(result['wrong'])}):", markup=False)
    for w in result["wrong"]:
        console.print(f"  {w['line']}: {w['text']}\n    gold {w['gold']}\n    read {w['formula']}",
                      markup=False, highlight=False, soft_wrap=True)  # fmt: skip
    if args.json is not None:
        write_json(args.json, result, "--json")
    return 0


def run_command(args: argparse.Namespace, console: Console) -> int:
    from governor.report import print_table

    if args.limit is not None:
        check_range("limit", args.limit, 1, 1_000_000)
    if args.file is not None:
        return file_command(args, console)
    if args.domain_file is not None:
        raise ConfigError("--domain-file: only with --file SET.jsonl")
    result = run(args.set or "all", args.limit, progress=sys.stdout.isatty())
    print_table(console, "English to LTL (offline) on pattern sentences", list(table_lines(result)))
    if args.json is not None:
        write_json(args.json, result, "--json")
    return 0
