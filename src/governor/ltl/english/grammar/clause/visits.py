"""Clause rules over lists of places and counts: visits, sequenced, ordered and strictly ordered
visits (by their separators and flags), patrolling, "A before B", and counted visits ("at most
twice", "exactly once", "never more than three times").

Imports the readings and the clause kit.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import replace

from governor.ltl.english.grammar import readings as rd
from governor.ltl.english.grammar.clause.clean import Clause
from governor.ltl.english.grammar.clause.kit import names, one, reading, rule
from governor.ltl.english.grammar.readings import Parse

_COUNT = re.compile(r"(LE|GE|EQ|GT|LT|N)_(\d+)")


@rule(
    30,
    r"^(?P<neg>NOT )?(?:ONLY )?(?P<a>{P})(?: ONLY)?(?: NOT)? (?P<c>(?:LE|GE|EQ|GT|LT|N)_\d+)(?: ONLY)?$",
    r"^(?P<neg>NOT )?(?:ONLY )?(?P<c>(?:LE|GE|EQ|GT|LT|N)_\d+) (?P<a>{P})$",
)
def _counted(m: re.Match[str], c: Clause) -> Parse | None:
    kind, n = _COUNT.fullmatch(m["c"]).groups()  # type: ignore[union-attr]
    n_, a = int(n), m["a"]
    neg = bool(m["neg"]) or " NOT " in f" {m.group(0)} "
    only = "ONLY" in m.group(0)
    if neg:
        table = {"GT": ("upper_rest_avoid", n_), "N": ("upper_rest_avoid", n_ - 1)}
        table |= {"GE": ("upper_rest_avoid", n_ - 1)}
    else:
        table = {"LE": ("upper_rest_avoid", n_), "GE": ("lower_rest_avoid", n_)}
        table |= {"EQ": ("exact_rest_avoid", n_), "LT": ("upper_rest_avoid", n_ - 1)}
        table |= {"GT": ("lower_rest_avoid", n_ + 1)}
        table |= {"N": ("upper_rest_avoid" if only else "exact_rest_avoid", n_)}
    if kind not in table or table[kind][1] < (0 if "upper" in table[kind][0] else 1):
        return None
    family, count = table[kind]
    if family == "exact_rest_avoid" and count == 0:
        family = "upper_rest_avoid"
    if kind == "N" and not neg and not only:  # "visit the lab twice": exact or at least?
        exact = reading(family, (a,), count, rd.COUNT_EXACT)
        return one(exact, reading("lower_rest_avoid", (a,), count, rd.COUNT_LEAST))
    return one(reading(family, (a,), count))


@rule(40, r"^(?:IF|AFTER|WHENEVER) (?P<a>{P}) (?:COMMA )?NOT (?P<b>{P})$")
def _once_only(m: re.Match[str], c: Clause) -> Parse | None:
    if m["a"] != m["b"]:
        return None
    return one(reading("upper_rest_avoid", (m["a"],), 1))


@rule(50, r"^(?P<l>{L})$", r"^(?P<l>{L}) COMMA$")
def _plain_list(m: re.Match[str], c: Clause) -> Parse | None:
    places = list(dict.fromkeys(names(m["l"])))
    if "FIRST" in c.flags and len(names(m["l"])) == 1:  # "go to A first": ordered by the others
        return one(reading("visit", places))
    if "REPEAT" in c.flags:
        return one(reading("patrolling", places))
    if set(places) <= c.props and "MUST" not in c.flags:
        return None  # "answer the doorbell": an event named, not said to happen
    if " OR " in m["l"] or {"ORDER", "FIRST"} & c.flags or len(places) < len(names(m["l"])):
        return ordered(places, c) if len(places) > 1 and "OR" not in m["l"] else None
    return one(reading("visit", places))


def ordered(names: list[str], c: Clause) -> Parse | None:
    if len(names) < 2:
        return None
    if "STRICT" in c.flags:
        return one(reading("strictly_ordered_visit", names))
    if "ORDER" in c.flags:
        strict = reading("ordered_visit", names, None, rd.ORDER_STRICT)
        loose = reading("sequenced_visit", names, None, rd.ORDER_LOOSE)
        return one(loose, strict) if "LOOSE" in c.flags else one(strict, loose)
    return one(reading("sequenced_visit", names))


@rule(140, r"^(?P<a>{P}) BEFORE (?P<b>{P})$")
def _before(m: re.Match[str], c: Clause) -> Parse | None:
    a, b = m["a"], m["b"]
    if a == b:
        return None
    if "ORDER" in c.flags:
        return ordered([a, b], c)
    avoid = reading("past_avoid", (b, a), None, rd.BEFORE_AVOID)
    return one(
        avoid,
        reading("ordered_visit", (a, b), None, rd.BEFORE_ORDER),
        reading("precedence", (a, b)),
    )


@rule(
    145,
    r"^(?P<a>{P}) ONLYTHEN (?P<b>{P})$",
    r"^(?P<b>{P}) COMMA NOT (?:BEFORE|UNTIL) (?P<a>{P})$",
    r"^(?P<b>{P}) AFTER (?P<a>{P}) COMMA NOT (?:BEFORE|UNTIL) (?P=a)$",
)
def _only_then(m: re.Match[str], c: Clause) -> Parse | None:
    """ "visit A and only after that B", "reach B, but not before A", "go to B after A, never
    before it": both, A first ("only after that *may* you enter B"
    permits B: past avoidance)."""
    if m["a"] == m["b"] or "CAN" in c.flags:
        return None
    return ordered([m["a"], m["b"]], replace(c, flags=c.flags | {"ORDER"}))


@rule(
    150,
    r"^(?P<l>{P}(?: (?:(?:ONLY )?[A-Z]+_1 )?(?:COMMA|AND|THEN|BEFORE) {P})+)(?: (?:ONLY )?[A-Z]+_1)?$",
)
def _sequence(m: re.Match[str], c: Clause) -> Parse | None:
    text = m["l"]
    places = names(text)
    if len(set(places)) < len(places):  # "A, then B, and after that back to A": a sequence
        plain = set(re.findall(r"[A-Z]+", text)) <= {"P", "COMMA", "AND", "THEN"}
        adjacent = any(a == b for a, b in itertools.pairwise(places))
        loose = plain and "THEN" in text and not adjacent and not {"ORDER", "STRICT"} & c.flags
        return one(reading("sequenced_visit", places)) if loose else None
    once = re.search(r"\b(?:EQ|N)_1\b", m.group(0)) is not None
    c2 = replace(c, flags=c.flags | ({"STRICT"} if once else set()))
    if "BEFORE" in text and "THEN" not in text:
        if len(places) < 3 and not once and "ORDER" not in c.flags:
            return None
        return one(reading("strictly_ordered_visit" if once else "ordered_visit", places))
    if "THEN" not in text and not {"ORDER", "FIRST", "STRICT"} & c2.flags:
        return None
    return ordered(places, c2)
