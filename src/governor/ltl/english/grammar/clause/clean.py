"""Clause cleaning: a clause's cue symbols (:mod:`governor.ltl.english.grammar.normaliser`) to the template string the
clause rules match, with what the cleaning noted.

Modifiers anywhere in the clause become flags (``NEXT``, ``WITHIN_n``, ``REPEAT``, ``ORDER``,
``FROMNOW``, ``STRICT``, ``SAME``, ...), a ``PERF`` or ``BE`` before a placeholder marks it (a
past-tense event, a state the agent is in), a placeholder next to ``AGAIN`` is a return, and
separators are merged ("and then" is ``THEN``; "B afterwards" after a list item is "then B").
One pass over the symbols and a fixed list of substitutions: linear in the clause.

Imports nothing of the project.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

_P = re.compile(r"P\d+")
_FLAGS = {
    "NEXT", "REPEAT", "ORDER", "FROMNOW", "STRICT", "SAME", "FIRST", "ALWAYS", "NOW", "ANY",
    "ANYORDER", "LOOSE",
}  # fmt: skip
_DROP = {"MUST", "CAN", "PERF", "BE", "AGAIN", "STOP", "PERMIT"}
_MERGE = [
    (r"\b(?:COMMA |AND )+THEN\b", "THEN"), (r"\bTHEN (?:COMMA|AND)\b", "THEN"),
    (r"\bTHEN(?: THEN)+\b", "THEN"), (r"\bCOMMA AND\b", "AND"), (r"\bCOMMA OR\b", "OR"),
    (r"\bBUT\b", "COMMA"), (r"\bCOMMA(?: COMMA)+\b", "COMMA"), (r"\bFOLLOWED THEN\b", "FOLLOWED"),
    (r"\bTHEN FOLLOWED\b", "FOLLOWED"), (r"\bMEANS THEN\b", "MEANS"), (r"\bFOLLOWED COMMA\b", "FOLLOWED"), (r"\bAND NOT\b", "COMMA NOT"), (r" AFTER$", ""),
    (r"(?:^|(?<=P\d) )(?:COMMA |AND )+(P\d+) THEN$", r" THEN \1"), (r"(?<!NOT P\d)(?<!NOT P\d\d)(?<!NOT) BEFORE$", ""),
    (r"\b(P\d+) (?:COMMA )?(?:AND )?ONLY (?:THEN|AFTER \1) (?:COMMA )?(P\d+)$", r"\1 ONLYTHEN \2"),
    (r"\bONLY THEN\b", "BEFORE"), (r"(?<=P\d) (?:COMMA )?(?:ANY )?GE_1(?: COMMA)?$", ""), (r"\b(?:N|EQ)_(\d+) (?:COMMA )?(?:AND )?ONLY (?:N|EQ)_\1\b", r"EQ_\1"),
    (r"\bCOMMA BEFORE\b", "BEFORE"), (r"COMMA ((?:ONLY )?(?:EQ|N)_1)\b", r"\1"),
    (r"\b(?:N|EQ)_(\d+) (?:COMMA )?AND (?:N|EQ)_\1 ONLY\b", r"EQ_\1"),
    (r"^(?:ONLY )?(?:EQ|N)_1 (P\d+) BEFORE\b", r"\1 EQ_1 BEFORE"),
    (r"^(?:ONLY )?(P\d+) (?:ONLY )?(?:EQ|N)_1 BEFORE\b", r"\1 EQ_1 BEFORE"),
    (r"\bAFTER (?:COMMA )?WHENEVER\b", "WHENEVER"),
    (r"\bTOGETHER(?: (?:COMMA|AND))? TOGETHER\b", "TOGETHER"),
    (r"^(P\d+(?: NEXT)?) AND (P\d+(?: NEXT)?) (?:COMMA )?(?:TOGETHER|IFF)$", r"\1 IFF \2"),
    (r"^(P\d+) COMMA (NOT )?((?:LE|GE|EQ|GT|LT|N)_\d+)$", r"\2\1 \3"),
]  # fmt: skip
"""Separators merged, and counted or conditioned phrasings put in the templates' order: "one
time and one time only" is exact; "only one visit to A before B" is "A once before B";
"following any step in which a" is "whenever a"; "a and b go together" is "a iff b"; "visit A,
but not more than three times" counts A. A closing "before" with nothing after it is dropped
("... before you're done"), except after a negation ("don't enter B before", "never before":
before what is unsaid, and "never B" would lose the order)."""


_AGAIN_AFTER = re.compile(r"(?:(?:MUST|CAN) )?(?:NOT )?(?:BE )?AGAIN\b")
"""After a place: it is visited again ("may not be re-entered")."""
_OTHERWISE = re.compile(
    r"(?:^| )(?:COMMA )?(?:AND )?(?:NOT )?(?:(?:IF|WHENEVER|WHILE) )?(?:OTHERWISE|ONLY THEN)$"
)
"""A closing "and only then" / "and not otherwise": the condition is also necessary."""


@dataclass(frozen=True)
class Clause:
    """A cleaned clause: its template string and what the cleaning noted."""

    text: str
    flags: frozenset[str]
    within: int | None
    perf: frozenset[str]
    stative: frozenset[str]
    again: frozenset[str]
    places: frozenset[str]
    iff_text: str
    props: frozenset[str] = frozenset()


def clean(symbols: list[str], places: Iterable[str], props: Iterable[str] = ()) -> Clause:
    """The template string of a clause, with its flags; ``places`` and ``props`` are the
    placeholders of places and of bare propositions (states, not actions)."""
    flags: set[str] = set()
    perf, stative, again = set(), set(), set()
    within = None
    kept: list[str] = []
    for i, sym in enumerate(symbols):
        prev = symbols[i - 1] if i else ""
        if _P.fullmatch(sym):
            if prev == "PERF" or (prev == "NOT" and i > 1 and symbols[i - 2] == "PERF"):
                perf.add(sym)
            if prev == "BE":
                stative.add(sym)
            if prev == "AGAIN" or _AGAIN_AFTER.match(" ".join(symbols[i + 1 : i + 5])):
                again.add(sym)
        if sym.startswith("WITHIN_"):
            within = int(sym.split("_")[1])
            continue
        if sym in ("MUST", "CAN", "PERMIT") and sym not in flags:
            flags.add("CAN" if sym == "PERMIT" else sym)
        if sym in ("AGAIN", "THEN"):
            flags.add("LATER" if sym == "THEN" else sym)
        if sym == "THEN" and _P.fullmatch(prev) and symbols[i + 1 :] in ([], ["STOP"]):
            flags.add("AFTERWARDS")  # "never b afterwards": from then on
        if sym in _FLAGS:
            flags.add(sym)
        if sym in _FLAGS - {"NEXT"} or sym in _DROP:
            continue
        kept.append(sym)
    text = " ".join(kept)
    text = re.sub(r"^(P\d+)\b(.*) NOT \1 OTHERWISE$", r"\1\2 NOT OTHERWISE", text)  # "never b"
    text, n = _OTHERWISE.subn("", text)
    if n or "OTHERWISE" in text.split():
        flags.add("OTHERWISE")
    for pattern, repl in _MERGE:
        text = re.sub(pattern, repl, text)
    text = re.sub(r"^(?:COMMA|AND|THEN) |(?: COMMA| THEN| AND)+$", "", text).strip()
    iff_text = text
    text = re.sub(r" ?\bNEXT\b", "", text).strip()
    text = re.sub(r"\b(FOLLOWED|COMMA)(?: COMMA)+\b", r"\1", text)  # "followed, at once, by"
    text = re.sub(r"^(?:COMMA|AND|THEN) |(?: COMMA)+$", "", text)
    ps = frozenset(places)
    return Clause(text, frozenset(flags), within, frozenset(perf), frozenset(stative),
                  frozenset(again), ps, iff_text, frozenset(props))  # fmt: skip
