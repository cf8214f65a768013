"""`governor bench ltl-translate --file SET.jsonl --domain-file D.yaml`: the offline English-to-LTL
translator on any set of sentences with gold formulas (written by people, say).

One JSON object a line: ``text`` (the sentence) and ``ltl`` (its gold formula, infix by default,
``--gold-format prefix`` for prefix; ``~`` is read as ``!``); other fields are kept as they are.
Each sentence is translated offline over the domain file's vocabulary (no world's verbs: the
domain file says everything), and scored by exact equivalence: ``gold xor translated`` must have
no finite trace over the domain's alphabet for the propositions either mentions (one place at a
time where the domain declares places), found by an exhaustive search of
:mod:`governor.ltl.satisfiability`; a search cut off by its budget counts as not equivalent. A
gold atom ``x`` names the place ``agent_at(x)`` when the domain declares ``x`` a place.

The figures: translated (of all), equivalent (of translated), crashes (a translation that came
back with an internal error; it is a failed record, never a lost batch), the wrong readings
whose gold names other propositions than the reading (the sentence says one place and its gold
another: where the gold is in error, no translator is right), the wrong readings the gold
implies (the gold says more than the sentence: "go to A without changing floors" read as A on
the floor the run starts on, its gold naming one floor), the wrong readings of a sentence that
has another gold formula elsewhere in the set (the same words, lower case, spaces collapsed:
the gold disputed), per shape of the gold
formula (its atoms renamed ``a``, ``b``... in order of appearance), and the list of wrong
readings, the output that matters most: a wrong reading offered is worse than none.

World-free: imports the error tree, the file readers, the LTL logic and the translator.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from governor.errors import ConfigError, GovernorError, expected
from governor.files import json_lines
from governor.ltl import operators as op
from governor.ltl import syntax as s
from governor.ltl.domain import Domain
from governor.ltl.english.translate import substitute, translate_offline
from governor.ltl.parser import parse, parse_prefix
from governor.ltl.satisfiability import search

GOLD_FORMATS = ("infix", "prefix")
MAX_RECORDS = 20_000
"""Most sentences a set may hold."""
MAX_TEXT = 1_000
"""Longest sentence scored; a longer one fails its record."""
MAX_STATES = 200_000
"""State budget of one equivalence search."""
CRASH = "internal error:"
"""How the translator's error of a sentence that reached a bug begins."""


def load_gold_set(path: Path, gold_format: str = "infix") -> list[dict[str, Any]]:
    """The records of a JSON-lines set: ``text`` and ``ltl`` each; an error names the line."""
    if gold_format not in GOLD_FORMATS:
        raise ConfigError(f"--gold-format: {expected(' or '.join(GOLD_FORMATS), gold_format)}")
    reader = parse if gold_format == "infix" else parse_prefix
    out = []
    for i, rec in json_lines(path):
        if not isinstance(rec, dict) or not all(
            isinstance(rec.get(k), str) for k in ("text", "ltl")
        ):
            raise ConfigError(
                f"{path}:{i}: {expected('the string fields text and ltl', str(rec)[:60])}"
            )
        try:
            gold = reader(rec["ltl"].replace("~", "!"))
        except GovernorError as exc:
            what = f"a gold formula in {gold_format} syntax"
            raise ConfigError(
                f"{path}:{i}: ltl: {expected(what, rec['ltl'][:60])} ({exc})"
            ) from None
        out.append(rec | {"line": i, "gold": gold})
        if len(out) > MAX_RECORDS:
            raise ConfigError(f"{path}: {expected(f'at most {MAX_RECORDS:,} sentences', 'more')}")
    if not out:
        raise ConfigError(f"{path}: {expected('at least one sentence', 'none')}")
    return out


def shape(f: s.Formula) -> str:
    """``f`` with its atoms renamed ``a``, ``b``... in order of first appearance."""
    names: dict[str, s.Formula] = {}
    for a in _atoms_in_order(f):
        names.setdefault(a.name, s.Atom(chr(ord("a") + len(names) % 26)))
    return str(substitute(f, names))


def _atoms_in_order(f: s.Formula) -> Iterator[s.Atom]:
    stack = [f]
    while stack:
        g = stack.pop()
        if isinstance(g, s.Atom):
            yield g
        elif isinstance(g, s.Unary):
            stack.append(g.arg)
        elif isinstance(g, s.Binary):
            stack += [g.right, g.left]
        elif isinstance(g, s.NAry):
            stack += reversed(g.args)


def grounded_gold(gold: s.Formula, domain: Domain) -> s.Formula:
    """The gold formula over the domain's propositions: ``x`` is ``agent_at(x)`` for a place."""
    places = {f"agent_at({a.name})": s.Atom("agent_at", (a.name,)) for a in gold.atoms()}
    mapping: dict[str, s.Formula] = {
        name[len("agent_at(") : -1]: atom for name, atom in places.items() if name in domain.rooms
    }
    return substitute(gold, mapping)


def equivalent(a: s.Formula, b: s.Formula, domain: Domain) -> bool:
    """Whether no finite trace of the domain tells ``a`` and ``b`` apart."""
    try:
        alphabet = domain.alphabet_for(a, b)
    except GovernorError:
        return False
    found = search(op.Not(op.Iff(a, b)), alphabet, max_depth=64, max_states=MAX_STATES)
    return found.trace is None and found.exhaustive


def implies(a: s.Formula, b: s.Formula, domain: Domain) -> bool:
    """Whether every finite trace of the domain satisfying ``a`` satisfies ``b``."""
    try:
        alphabet = domain.alphabet_for(a, b)
    except GovernorError:
        return False
    found = search(op.And((a, op.Not(b))), alphabet, max_depth=64, max_states=MAX_STATES)
    return found.trace is None and found.exhaustive


def score(rec: dict[str, Any], domain: Domain, convention: str) -> dict[str, Any]:
    """One record's result: translated, equivalent, crashed, the formulas and the reading."""
    gold = grounded_gold(rec["gold"], domain)
    base = {
        "line": rec["line"],
        "text": rec["text"],
        "gold": str(gold),
        "shape": shape(rec["gold"]),
    }
    if len(rec["text"]) > MAX_TEXT:
        error = expected(f"at most {MAX_TEXT:,} characters", len(rec["text"]))
        return base | {"translated": False, "equivalent": False, "crashed": False, "error": error}
    t = translate_offline(rec["text"], domain, convention)
    same = t.formula is not None and equivalent(gold, t.formula, domain)
    narrower = t.formula is not None and not same and implies(gold, t.formula, domain)
    return base | {
        "translated": t.ok, "equivalent": same, "gold_narrower": narrower,
        "formula": t.formula and str(t.formula),
        "crashed": bool(t.error and t.error.startswith(CRASH)), "pattern": t.pattern,
        "reading": t.reading, "ambiguous": t.ambiguous, "error": t.error,
    }  # fmt: skip


def _said(text: str) -> str:
    return " ".join(text.lower().split())


def _labels(formula: str | None) -> set[str]:
    return {a.label for a in parse(formula).atoms()} if formula else set()


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Sentences, translated, equivalent (of translated), crashes; and the wrong readings whose
    gold formula names other propositions than the reading (the sentence says one place, its
    gold another: often an error of the gold), those the gold implies (it says more) and those
    whose sentence has another gold elsewhere in the set (the gold disputed)."""
    n, ok = len(rows), sum(r["translated"] for r in rows)
    same = sum(r["equivalent"] for r in rows)
    other = sum(
        r["translated"] and not r["equivalent"] and _labels(r["gold"]) != _labels(r["formula"])
        for r in rows
    )
    return {
        "sentences": n, "translated": ok, "equivalent": same,
        "crashes": sum(r["crashed"] for r in rows), "wrong_other_propositions": other,
        "wrong_gold_narrower": sum(bool(r.get("gold_narrower")) for r in rows),
        "wrong_gold_disputed": sum(
            bool(r.get("gold_disputed")) and r["translated"] and not r["equivalent"] for r in rows
        ),
        "translated_rate": ok / n if n else None, "equivalent_rate": same / ok if ok else None,
    }  # fmt: skip


def run(path: Path, domain: Domain, gold_format: str = "infix", convention: str | None = None,
        limit: int | None = None) -> dict[str, Any]:  # fmt: skip
    """``{"convention", "summary", "shapes": {shape: summary}, "wrong": [...], "records":
    [...]}``; ``convention`` None reads by the domain's conventions, else the default."""
    from governor.ltl.english.grammar.readings import SAFETY_CHIP

    recs = load_gold_set(path, gold_format)[:limit]
    chosen = convention or domain.convention or SAFETY_CHIP
    rows = [score(r, domain, chosen) for r in recs]
    golds: dict[str, set[str]] = {}
    for r in rows:
        golds.setdefault(_said(r["text"]), set()).add(r["gold"])
    for r in rows:
        r["gold_disputed"] = len(golds[_said(r["text"])]) > 1
    counts = Counter(r["shape"] for r in rows)
    shapes = {k: summary([r for r in rows if r["shape"] == k]) for k, _ in counts.most_common()}
    wrong = [
        {k: r[k] for k in ("line", "text", "gold", "formula", "reading")}
        | {
            "other_propositions": _labels(r["gold"]) != _labels(r["formula"]),
            "gold_narrower": r["gold_narrower"],
            "gold_disputed": r["gold_disputed"],
        }
        for r in rows
        if r["translated"] and not r["equivalent"]
    ]
    return {"file": str(path), "domain": domain.name, "convention": chosen, "summary": summary(rows),
            "shapes": shapes, "wrong": wrong, "records": rows}  # fmt: skip


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.1f}%"


def table_lines(result: dict[str, Any], most: int = 25) -> Iterator[list[str]]:
    """Per gold shape (the ``most`` commonest) and all: sentences, translated, equivalent (of
    translated), crashes."""
    yield ["gold shape", "n", "translated", "equivalent", "crashes", "wrong, gold names others",
           "wrong, gold says more", "wrong, gold disputed"]  # fmt: skip
    items = list(result["shapes"].items())
    for name, f in [*items[:most], ("all", result["summary"])]:
        yield [name[:60], str(f["sentences"]), _pct(f["translated_rate"]),
               _pct(f["equivalent_rate"]), str(f["crashes"]),
               str(f["wrong_other_propositions"]), str(f["wrong_gold_narrower"]),
               str(f["wrong_gold_disputed"])]  # fmt: skip
