"""A rule and its converse said in two clauses: the clause grammar reads the pair as one iff.

A reaction "b at the next step whenever a" (or "whenever a, b" at the same step) followed by a
clause that says b holds *only* then is the bound delay ``G(a <-> X b)`` (the bound reaction
``G(a <-> b)``). The converse may take any of the shapes people use for "only then":

- "b only right after a step where a" / "b at no step except right after a";
- "b only at a step if a just before it"; "b at a step if and only if a at the step before";
- "if no a at the previous step, not b"; "not b in every step that does not directly follow a";
- "and vice versa: b at the next step means a now";
- "b at no other step" / "and never at other steps" (``OTHERWISE``); "never b unless a at the
  step just before" / "b is never on at a step unless a the step before" (``NOT b UNTIL a PREV``);
- the rule said again of the negated condition: "if not a, not b at the next step", "whenever
  it isn't (``OTHERWISE``), b is off at the next step", "not b at the next step whenever not a";
- for the bound reaction, "b only while a, and always while you are there" (``b IFF a``); a
  converse whose condition is elided, said by a negation alone:
  "b whenever a, and not b whenever nobody is" / "... whenever you aren't there" / "and whenever
  you're not, b is off" is "and not b whenever not a" (the condition of the rule before, negated).

The rule and its converse are rewritten to ``b NEXT IFF a`` (the rule of
:mod:`governor.ltl.english.grammar.clause.reactions` reads it); a converse with other names, or alone, is left
as it was (and stays unread). One regex sweep: linear in the sentence.

Imports nothing of the project.
"""

from __future__ import annotations

import re

__all__ = ["converse"]

_A, _B = r"(?:BE )?(?P<a>P\d+)", r"(?:MUST )?(?:BE )?(?P<b>P\d+)"
_RULES = (
    rf"(?:WHENEVER|IF) {_A}(?: NOW)? COMMA {_B} NEXT",
    rf"NEXT (?:WHENEVER|AFTER) (?:ANY )?{_A} (?:COMMA )?{_B}",
    rf"{_B} NEXT (?:AFTER|WHENEVER) (?:ANY )?{_A}",
)
"""The rule "b at the next step whenever a", in the shapes the converse may follow."""
_SEP = r" (?:COMMA |STOP )*(?:AND )?(?:STOP |COMMA )*"
_B2, _A2 = r"(?:BE )?(?P=b)", r"(?:BE )?(?P=a)"
_CONVERSES = (
    rf"{_B2} ONLY NEXT AFTER {_A2}",
    rf"{_B2} ONLY (?:IF|WHENEVER) {_A2} (?:ONLY )?(?:BEFORE|PREV)",
    r"IF NOT (?P=a) PREV COMMA NOT (?P=b)",
    r"NOT (?P=b) ANY NOT NEXT (?:AFTER )?(?P=a)",
    rf"{_B2} NEXT MEANS {_A2} NOW PREV",
    rf"(?:{_B2} )?(?:NOT )?OTHERWISE",
    rf"(?:NOT )?{_B2} (?:UNTIL|ONLY IF|ONLY WHENEVER) {_A2} (?:ONLY )?PREV",
    rf"NOT UNTIL {_A2} (?:ONLY )?PREV",
    rf"(?:IF|WHENEVER|WHILE) NOT {_A2}(?: NOW)? COMMA (?:MUST )?NOT (?:MUST )?{_B2} NEXT",
    rf"OTHERWISE COMMA (?:MUST )?NOT (?:MUST )?{_B2} NEXT",
    rf"(?:BE )?(?:MUST )?NOT (?:MUST )?{_B2} NEXT (?:IF|WHENEVER|WHILE) NOT {_A2}",
)
"""The converse "b only then", in the shapes of the module docstring."""
_DELAYS = tuple(
    re.compile(rf"(?:^|(?<=STOP )){rule}{_SEP}(?:{'|'.join(_CONVERSES)})(?= STOP|$)")
    for rule in _RULES
)
_PREVIOUS = re.compile(r"\b(P\d+) IFF (P\d+) PREV\b")
"""b at a step if and only if a at the step before: b at the next step iff a."""
_ELIDED = re.compile(
    r"\b(?P<rule>(?:(?:BE )?P\d+ (?:IF|WHENEVER|WHILE) (?:BE )?(?P<a>P\d+)|(?:IF|WHENEVER|WHILE)"
    r" (?:BE )?(?P<a2>P\d+) COMMA (?:BE )?P\d+)) (?:COMMA )?AND (?:NOT (?P<b>P\d+) (?P<w>IF|WHENEVER|WHILE)"
    r" (?:BE )?NOT|(?P<w2>IF|WHENEVER|WHILE) (?:BE )?NOT COMMA NOT (?P<b2>P\d+))(?= STOP|$)"
)
"""A converse "and not b whenever nobody is": its condition elided."""


_ALWAYS_THERE = re.compile(
    r"\b(?:REPEAT )?(?P<b>P\d+) ONLY (?P<w>WHILE|WHENEVER|IF) (?:BE )?(?P<a>P\d+) (?:COMMA )?AND"
    r" ALWAYS (?:WHILE|WHENEVER|IF)(?: BE)?(?: (?:(?P=a)|REF))?(?= STOP|$)"
)
"""A bound reaction said as "b only while a, and always while a (you are there)"."""


def _elided(m: re.Match[str]) -> str:
    a, b, w = m["a"] or m["a2"], m["b"] or m["b2"], m["w"] or m["w2"]
    return f"{m['rule']} COMMA AND NOT {b} {w} NOT {a}"


def converse(syms: list[str]) -> list[str]:
    """``syms`` with a rule and its converse said as one iff (see the module docstring)."""
    text = _PREVIOUS.sub(r"\1 NEXT IFF \2", " ".join(syms))
    for pattern in _DELAYS:
        text = pattern.sub(r"\g<b> NEXT IFF \g<a>", text)
    text = _ALWAYS_THERE.sub(r"\g<b> IFF \g<a>", text)
    return _ELIDED.sub(_elided, text).split()
