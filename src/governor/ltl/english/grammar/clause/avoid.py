"""Clause rules of avoidance: never any of a list, past avoidance ("don't enter B until / before
A", "only enter B after A", strong until by default, the weak precedence offered), a return
forbidden before the next place ("don't go back to A before B", the strict pair), and a
permission that implies the prohibition ("you may enter B after A").

Imports the readings and the clause kit.
"""

from __future__ import annotations

import re

from governor.ltl.english.grammar import readings as rd
from governor.ltl.english.grammar.clause.clean import Clause
from governor.ltl.english.grammar.clause.kit import names, one, reading, rule
from governor.ltl.english.grammar.readings import Parse, Reading


@rule(60, r"^NOT (?P<l>{L})$", r"^(?P<l>{L}) NOT$")
def _avoid(m: re.Match[str], c: Clause) -> Parse | None:
    if "FIRST" in c.flags or ("REPEAT" in c.flags and "NOT" not in m.group(0)):
        return None
    return one(reading("global_avoid", dict.fromkeys(names(m["l"]))))


@rule(
    70,
    r"^NOT (?P<a>{P}) (?:BEFORE|UNTIL) (?P<b>{P})$",
    r"^(?P<a>{P}) NOT (?:BEFORE|UNTIL) (?P<b>{P})$",
    r"^(?:IF|AFTER) LEAVE (?P<x>{P}) (?:COMMA )?NOT (?P<a>{P}) (?:BEFORE|UNTIL) (?P<b>{P})$",
    r"^NOT (?P<a>{P}) (?:N|EQ)_2 (?:BEFORE|UNTIL) (?P<b>{P})$",
)
def _no_revisit(m: re.Match[str], c: Clause) -> Parse | None:
    """ "do not go back to A before B"; "once you leave A, do not go back into A before B";
    "do not visit A twice before B"."""
    again = m["a"] in c.again or re.search(r"\b(?:N|EQ)_2\b", m.group(0)) is not None
    if not again or m["a"] == m["b"] or m.groupdict().get("x") not in (None, m["a"]):
        return None
    return one(reading("single_visit", (m["a"], m["b"])))


def _past(b: str, a: str, c: Clause, *extra: Reading) -> Parse:
    default = reading("past_avoid", (b, a))
    return one(default, *extra, reading("precedence", (a, b)))


@rule(
    80,
    r"^NOT (?P<b>{P}) (?:UNTIL|BEFORE) (?P<a>{P})$",
    r"^NOT (?P<b>{P}) (?:COMMA )?(?:IF|WHENEVER|AFTER) NOT (?P<a>{P})$",
    r"^(?P<b>{P}) NOT (?:UNTIL|BEFORE) (?P<a>{P})$",
    r"^(?:UNTIL|BEFORE) (?P<a>{P}) (?:COMMA )?NOT (?P<b>{P})$",
    r"^(?:UNTIL|BEFORE) (?P<a>{P}) (?:COMMA )?(?P<b>{P}) NOT$",
    r"^NOT (?:UNTIL|BEFORE) (?P<a>{P}) (?:COMMA )?(?P<b>{P})$",
    r"^(?:ONLY )?(?P<b>{P}) (?:COMMA )?ONLY (?:AFTER|IF|WHENEVER|UNTIL|BEFORE) (?P<a>{P})$",
    r"^ONLY (?P<b>{P}) (?:AFTER|IF|WHENEVER) (?P<a>{P})$",
    r"^ONLY (?:AFTER|IF|WHENEVER) (?P<a>{P}) (?:COMMA )?(?:THEN )?(?P<b>{P})$",
    r"^BEFORE (?P<b>{P}) (?:COMMA )?(?P<a>{P})$",
    r"^IF NOT (?P<a>{P}) (?:COMMA )?NOT (?P<b>{P})$",
)
def _past_avoid(m: re.Match[str], c: Clause) -> Parse | None:
    only_if = re.search(r"\bONLY (?:IF|WHENEVER)\b", m.group(0)) is not None
    state = m["a"] not in c.places or m["a"] in c.stative
    if only_if and m["a"] not in c.perf and state:
        return None  # "in the mill only when the alarm sounds": a state, not an order of visits
    negated = re.search(r"\b(?:IF|WHENEVER|AFTER) NOT\b", m.group(0)) is not None
    if negated and ("FROMNOW" in c.flags or (m["a"] not in c.perf and state)):
        return None  # "if the light is off, never enter B from then on": no order of visits
    if m["a"] == m["b"]:
        return None
    after = re.search(r"^(?:{b}) (?:COMMA )?ONLY AFTER\b".format(b=m["b"]), m.group(0)) or (
        m["a"] in c.perf  # "B, but only once you have been to A"
        and re.search(r"^(?:{b}) (?:COMMA )?ONLY IF\b".format(b=m["b"]), m.group(0))
    )
    order = reading("ordered_visit", (m["a"], m["b"]), None, rd.ONLY_AFTER_ORDER)
    if after and "MUST" in c.flags and "CAN" not in c.flags:  # "you must go to B only after A"
        return one(order, reading("past_avoid", (m["b"], m["a"])))
    return _past(m["b"], m["a"], c, *([order] if after else []))
