"""Clause rules of conditions and reactions: "b if and only if a" (at the same or the next step),
"stay in a until b", "b only while a", "b when a and only when a", future avoidance ("after a,
never b"; "whenever a, not b at the next step"), and reactions ("whenever a, b" read by their
flags as instant, delayed, prompt or bounded).

Imports the readings and the clause kit.
"""

from __future__ import annotations

import re

from governor.ltl.english.grammar import readings as rd
from governor.ltl.english.grammar.clause.clean import Clause
from governor.ltl.english.grammar.clause.kit import one, reading, rule
from governor.ltl.english.grammar.readings import Parse, Reading


@rule(
    10,
    r"^(?P<x>{P})(?P<xn> NEXT)?(?: COMMA)? IFF (?P<y>{P})(?P<yn> NEXT)?$",
    r"^IFF (?P<y>{P})(?P<yn> NEXT)? (?:COMMA )?(?P<x>{P})(?P<xn> NEXT)?$",
    r"^(?P<xn>NEXT )(?P<x>{P})(?: COMMA)? IFF (?P<y>{P})$",
    r"^(?P<x>{P})(?P<xn> NEXT) IF (?P<y>{P}) (?:COMMA )?(?:AND )?NOT (?P=x) NEXT IF NOT (?P=y)$",
    r"^(?:IF|WHENEVER) (?P<y>{P}) (?:COMMA )?(?P<x>{P})(?P<xn> NEXT) (?:COMMA )?(?:AND )?"
    r"(?:IF|WHENEVER) NOT (?P=y) (?:COMMA )?NOT (?P=x) NEXT$",
    r"^(?P<xn>NEXT) (?:IF|WHENEVER) (?P<y>{P}) (?:COMMA )?(?P<x>{P}) (?:COMMA )?(?:AND )?"
    r"NEXT (?:IF|WHENEVER) NOT (?P=y) (?:COMMA )?NOT (?P=x)$",
    r"^(?P<x>{P}) (?:IF|WHENEVER|WHILE) (?P<y>{P}) (?:COMMA )?(?:AND )?NOT (?P=x)"
    r" (?:IF|WHENEVER|WHILE) NOT (?P=y)$",
    r"^(?:IF|WHENEVER|WHILE) (?P<y>{P}) (?:COMMA )?(?P<x>{P}) (?:COMMA )?(?:AND )?"
    r"(?:IF|WHENEVER|WHILE) NOT (?P=y) (?:COMMA )?NOT (?P=x)$",
    r"^(?:IF|WHENEVER|WHILE) (?P<y>{P}) (?:COMMA )?(?P<x>{P}) (?:COMMA )?(?:AND )?NOT (?P=x)"
    r" (?:IF|WHENEVER|WHILE) NOT (?P=y)$",
)
def iff(m: re.Match[str], c: Clause) -> Parse | None:
    """ "b if and only if a" (either one at the next step); "b at the next step if a, and not b
    at the next step if not a" is the same bound delay; "b whenever a, and not b whenever not
    a" is the bound reaction."""
    x, y, g = m["x"], m["y"], m.groupdict()
    if g.get("xn") and not g.get("yn"):
        return one(reading("bound_delay", (y, x)))
    if g.get("yn") and not g.get("xn"):
        return one(reading("bound_delay", (x, y)))
    return None if g.get("xn") else one(reading("bound_react", (y, x)))


@rule(
    20,
    r"^STAY (?P<a>{P}) UNTIL (?P<b>{P})$",
    r"^(?:BE )?(?P<a>{P}) AND STAY (?P=a) UNTIL (?P<b>{P})$",
    r"^NOT LEAVE (?P<a>{P}) (?:UNTIL|BEFORE) (?P<b>{P})$",
    r"^UNTIL (?P<b>{P}) (?:COMMA )?(?:STAY|NOT LEAVE) (?P<a>{P})$",
    r"^(?P<s>{P}) UNTIL (?P<b>{P})$",
)
def _wait(m: re.Match[str], c: Clause) -> Parse | None:
    groups = m.groupdict()
    a = groups.get("a") or groups.get("s") or ""
    kept = "REPEAT" in c.flags or a in c.props  # "keep the light on", "the valve stays open"
    if groups.get("s") and a not in c.stative and not (kept and a in c.props):
        return None
    return one(reading("wait", (a, m["b"])))


@rule(
    100,
    r"^(?:ONLY )?(?P<b>{P}) (?:COMMA )?ONLY (?P<cw>WHILE|WHENEVER|IF) (?P<a>{P})$",
    r"^ONLY (?P<cw>WHILE|WHENEVER|IF) (?P<a>{P}) (?:COMMA )?(?P<b>{P})$",
    r"^ONLY (?P<b>{P}) (?P<cw>WHILE) (?P<a>{P})$",
)
def _only_while(m: re.Match[str], c: Clause) -> Parse | None:
    """ "be in b only while a": b's state requires a's at the same step."""
    if m["cw"] != "WHILE" and m["b"] not in c.stative and m["b"] not in c.props:
        return None
    return one(reading("instant_react", (m["b"], m["a"])))


@rule(
    110,
    r"^(?P<b>{P}) (?:IF |WHENEVER |WHILE )?(?P<a>{P}) AND ONLY (?:IF |WHENEVER |WHILE )?(?P=a)$",
)
def _and_only(m: re.Match[str], c: Clause) -> Parse | None:
    """ "b when a, and only when a": b exactly when a."""
    return one(reading("bound_react", (m["a"], m["b"]))) if m["a"] != m["b"] else None


_COND = r"(?P<cw>IF|WHENEVER|AFTER|WHILE)"


def _conditioned(then: str) -> tuple[str, str]:
    """The templates "if a, (then) <then>" and "<then> if a"."""
    a = r"(?P<a>{P})"
    return rf"^{_COND} {a} (?:COMMA )?(?:THEN )?{then}$", rf"^{then} (?:COMMA )?{_COND} {a}$"


def _avoid_after(m: re.Match[str], c: Clause) -> Parse | None:
    """ "after a, never b"; "whenever a, not b at the next step"; "while a, not b"."""
    a, b, cw = m["a"], m["b"], m["cw"]
    if a == b or (cw == "COMMA" and not {"LATER", "FROMNOW", "MUST"} & c.flags):
        return None  # "visit A, never B": no "afterwards", "for good" or "you must not"
    event = cw in ("AFTER", "MEANS", "THEN", "AND", "COMMA") or a in c.perf
    if "NEXT" in c.flags:
        return one(reading("prompt_avoid", (a, b))) if cw != "WHILE" else None
    later = {"FROMNOW", "AFTERWARDS"} & c.flags or b in c.again  # "never b again", "no more b"
    if cw == "WHILE" or not (event or later or a in c.places):
        return one(Reading("instant_react", (a, b), None, (rd.SAME_STEP,), (b,)))
    return one(reading("future_avoid", (a, b)))


@rule(
    120,
    *_conditioned(r"(?P<neg>NOT )?(?P<b>{P})"),
    rf"^{_COND} (?P<a>{{P}}) (?:COMMA )?(?:THEN )?(?P<b>{{P}}) (?P<neg>NOT)$",
    r"^(?P<a>{P}) (?:COMMA )?(?P<cw>MEANS|THEN|AND|COMMA)(?: THEN)? (?P<neg>NOT)(?: THEN)? (?P<b>{P})$",
    r"^(?P<b>{P}) (?P<neg>NOT) (?P<cw>AFTER) (?P<a>{P})$",
    r"^(?P<a>{P}) (?P<cw>MEANS|FOLLOWED) (?P<b>{P})$",
    r"^(?P<a>{P}) (?:COMMA |AND )?(?P<cw>THEN) (?P<b>{P})$",
)
def conditional(m: re.Match[str], c: Clause) -> Parse | None:
    """A reaction "whenever a, b" (or, negated, an avoidance after a)."""
    if m.groupdict().get("neg"):
        return _avoid_after(m, c)
    a, b, cw = m["a"], m["b"], m["cw"]
    if a == b or ("FROMNOW" in c.flags and (b in c.stative or "MUST" not in c.flags)):
        return None  # "once a, b is ... from then on": a lasting state, or a negation unread
    if "OTHERWISE" in c.flags:  # "b when a, and only then" / "... and not b otherwise"
        if "NEXT" in c.flags:  # "b one step after a, and only then"
            delay = cw in ("IF", "WHENEVER", "AFTER") and not c.within
            return one(reading("bound_delay", (a, b))) if delay else None
        plain = cw in ("IF", "WHENEVER", "WHILE") and not c.within
        return one(reading("bound_react", (a, b))) if plain else None
    if cw == "THEN" and not ("NEXT" in c.flags or c.within or "CAN" in c.flags):
        return None
    if c.within is not None:
        return one(reading("bounded_react", (a, b), c.within))
    if "NEXT" in c.flags:
        return one(reading("prompt_react", (a, b)))
    stative = b in c.stative or b in c.props
    if (
        cw == "WHILE"
        or "SAME" in c.flags
        or (stative and cw != "FOLLOWED" and "LATER" not in c.flags)
    ):
        return one(reading("instant_react", (a, b)))
    react = reading("delay_react", (a, b))
    if cw == "AFTER" and a in c.places and b in c.places and "ALWAYS" not in c.flags:
        seq = reading("sequenced_visit", (a, b), None, rd.AFTER_SEQ)
        if a in c.perf:  # "after you've been to A, go to B": one visit, presupposed
            return one(seq.with_notes(rd.AFTER_PERF), react.with_notes(rd.AFTER_REACT))
        return one(react.with_notes(rd.AFTER_REACT), seq)
    return one(react)
