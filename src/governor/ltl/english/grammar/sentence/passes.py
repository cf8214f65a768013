"""Sentence-level passes of the clause grammar, on the cue symbols before clauses are read.

Each pass rewrites the symbol list in one left-to-right sweep (linear in the sentence):

- *time frame*: an opening "before the day is out," / "until the end," that names nothing is
  the whole run: dropped.
- *eventually*: a sentence that opens with "eventually" / "at some point" lists goals in any
  order (the cue is dropped); at a clause end it says the clause must happen (``MUST``);
  elsewhere it is ``THEN``.
- *restated timing* and *shape* (:mod:`governor.ltl.english.grammar.sentence.shape`): "immediately
  afterwards, at the following step" is one ``NEXT``; "head to A and be there within n steps"
  is ``A WITHIN_n``; facts said as reasons, and a rule said each way, are read once.
- a trailing "each time" / "this applies every time" restates the reaction: dropped (after a
  comma, or closing a sentence with a condition), and so is a closing "at every moment when a"
  that repeats the condition a.
- *gapping* (:mod:`governor.ltl.english.grammar.sentence.gaps`): "do not enter B before A or C before B"
  becomes two clauses ("do not return to A before B or to B before C", "B stays off limits
  until A, and C until B" too); "nor C before B" is "do not enter C before B".
- *anaphora*: ``REF`` ("before that", "until then", "until you do", "go there") is the last
  placeholder of the clause before; ``WHICH`` is the placeholder just before it; ``IT`` ("it
  has to be visited") is the first placeholder of the clause before (its subject). A clause
  opening "once you have been there," / "when done," before a place is ``THEN``. "Do not
  leave before that" leaves the last place named; "without visiting B first" in a sentence of
  two places is "not B before the other".
- *list references* (:mod:`governor.ltl.english.grammar.sentence.lists`): "never enter one before the previous
  one", "visit all three" refer to the places in the order they were listed.
- *permissions*: a clause that only allows something ("visiting B earlier is fine", "extra visits
  are allowed", "..., it is fine if you pass B early") adds no constraint; it is removed (and
  :func:`permissions` says so).

Imports the list references, the elided clauses (:mod:`governor.ltl.english.grammar.sentence.gaps`), the
returns said with leaving (:mod:`governor.ltl.english.grammar.sentence.returns`) and the shape passes.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from governor.ltl.english.grammar.sentence.converse import converse
from governor.ltl.english.grammar.sentence.gaps import gapping
from governor.ltl.english.grammar.sentence.lists import clauses_of, list_references
from governor.ltl.english.grammar.sentence.returns import returns
from governor.ltl.english.grammar.sentence.shape import restated, shape
from governor.ltl.english.grammar.sentence.tails import tails

__all__ = [
    "anaphora", "clauses_of", "gapping", "leave_reference", "list_references", "not_first",
    "permissions", "prepare", "time_frame",
]  # fmt: skip

_P = re.compile(r"P\d+")
BOUNDS = frozenset({"STOP", "BUT", "COMMA", "AND"})
_OPENERS = frozenset({"MUST", "CAN", "STOP", "COMMA"})
_COUNT = re.compile(r"(?:LE|GE|EQ|GT|LT|N)_\d+")


def eventually(syms: list[str]) -> list[str]:
    """``EVENTUALLY`` dropped where it orders nothing, ``THEN`` elsewhere."""
    lead = next((s for s in syms if s not in _OPENERS), "")
    out: list[str] = []
    for i, s in enumerate(syms):
        if s != "EVENTUALLY":
            out.append(s)
            continue
        nxt = syms[i + 1] if i + 1 < len(syms) else "STOP"
        if lead != "EVENTUALLY" and nxt not in ("STOP", "COMMA", "BUT", "AND"):
            out.append("THEN")
        elif lead in ("IF", "WHENEVER") and "COMMA" in out:
            k = len(out) - out[::-1].index("COMMA")  # "whenever a, b eventually": b later
            out.insert(k, "THEN")
        elif lead != "EVENTUALLY":
            out.append("MUST")  # "the bell rings eventually": it must happen
    return out


def time_frame(syms: list[str]) -> list[str]:
    """An opening "before the day is out," / "until the end of the mission,": a time limit that
    names nothing (no place, event or reference before the comma) is the whole run: dropped;
    not before a negation ("until the whistle blows, stay out of A" awaits an unread event)."""
    out: list[str] = []
    for i, s in enumerate(syms):
        bare = out[-1:] in (["BEFORE"], ["UNTIL"]) and out[-2:-1] in ([], ["STOP"])
        rest = syms[i + 1 : syms.index("STOP", i) if "STOP" in syms[i:] else len(syms)]
        if s == "COMMA" and bare and "NOT" not in rest:
            out.pop()
            continue
        out.append(s)
    return out


_CONDITIONS = frozenset({"IF", "WHENEVER", "AFTER", "WHILE"})


def trailing_whenever(syms: list[str]) -> list[str]:
    """A closing "each time" (after a comma or a full stop, or closing a conditional sentence;
    nothing read after it, or only the condition again: "if it rains, be in the garage - at
    every moment when it rains") dropped."""
    out = list(syms)
    tail = len(out)  # from here on only full stops
    while tail and out[tail - 1] == "STOP":
        tail -= 1
    cond = next((i for i, s in enumerate(out) if s in _CONDITIONS), len(out))
    said = out[cond + 1 : cond + 2]  # the condition's place or proposition
    for i in range(len(out) - 1, 0, -1):
        closing = i + 1 >= tail and cond < i
        if out[i] == "WHENEVER" and (out[i - 1] in ("COMMA", "STOP") or closing):
            named = [s for s in out[i + 1 : tail] if s != "STOP"]
            if not named or (cond < i - 1 and named == said and _P.fullmatch(said[0])):
                return [*out[: i - 1], *(s for s in out[i + 1 :] if s == "STOP")]
            break
    return out


_WINDOW = 24


def _positive_rest(syms: list[str], i: int) -> bool:
    """Whether the clause from ``i`` to the full stop names a place first and restricts nothing."""
    window = syms[i : i + _WINDOW]  # bounded: the pass stays linear
    rest = window[: window.index("STOP")] if "STOP" in window else window
    lead = next((s for s in rest if s not in ("MUST", "THEN", "BE")), "")
    barred = {"NOT", "UNTIL", "BEFORE", "NEXT", "ONLY"} & set(rest)
    return bool(_P.fullmatch(lead)) and not barred and not any(_COUNT.fullmatch(s) for s in rest)


def perfect_anaphora(syms: list[str]) -> list[str]:
    """ "once you have been there, go to B" opening a clause is ``THEN B`` (when the clause names
    a place and restricts nothing)."""
    out: list[str] = []
    i = 0
    while i < len(syms):
        s, nxt = syms[i], syms[i + 1] if i + 1 < len(syms) else "STOP"
        j = i + 1 + (nxt == "PERF")
        opens = s in ("IF", "AFTER") and (not out or out[-1] in BOUNDS)
        if opens and syms[j : j + 2] == ["REF", "COMMA"] and _positive_rest(syms, j + 2):
            out.append("THEN")
            i = j + 2
            continue
        out.append(s)
        i += 1
    return out


def leave_reference(syms: list[str], places: Iterable[str]) -> list[str]:
    """A forbidden ``LEAVE`` with no place, then "before" / "until" ("do not leave before
    that"), leaves the last place named before it."""
    where, last = set(places), None
    out: list[str] = []
    for i, s in enumerate(syms):
        nxt = syms[i + 1] if i + 1 < len(syms) else ""
        barred = [x for x in out[-3:] if x not in ("CAN", "MUST")][-1:] == ["NOT"]
        out.append(s)
        if s == "LEAVE" and barred and last is not None and nxt in ("BEFORE", "UNTIL"):
            out.append(last)
        last = s if s in where else last
    return out


def anaphora(syms: list[str]) -> list[str]:
    """``REF`` -> the last placeholder before its clause; ``WHICH`` -> the one just before;
    ``IT`` ("it has to be visited") -> the clause before's subject ("it has to be charging": MUST)."""
    out = list(syms)
    last: str | None = None  # last placeholder before the current clause
    here: str | None = None  # last placeholder in the current clause
    lead: str | None = None  # first placeholder of the clause before
    first: str | None = None  # first placeholder in the current clause
    for i, s in enumerate(syms):
        if _P.fullmatch(s):
            here, first = s, first or s
        elif s == "IT" and _P.fullmatch(next((x for x in syms[i + 1 :] if x != "MUST"), "")):
            out[i] = "MUST"  # "it has to be charging": the subject of a proposition said next
        elif s == "IT":
            out[i] = lead or s
        elif s in BOUNDS and here is not None:
            last, here, lead, first = here, None, first, None
        elif s == "REF" and last is not None:
            out[i] = last
        elif s == "WHICH" and (here or last) is not None:
            out[i] = here or last or ""
    return out


def not_first(syms: list[str]) -> list[str]:
    """ "without visiting B first" / "never B before it." / "B must not come first" in a
    sentence of two places A and B:
    ``NOT B BEFORE A``."""
    names = list(dict.fromkeys(s for s in syms if _P.fullmatch(s)))
    if len(names) != 2:
        return syms
    out: list[str] = []
    for i, s in enumerate(syms):
        closes = i + 1 == len(syms) or syms[i + 1] in BOUNDS
        said = [x for x in out[-3:] if x not in ("MUST", "CAN")]  # "B must not come first"
        if s == "FIRST" and closes and said[-2:-1] in [[n] for n in names] and said[-1] == "NOT":
            while out[-1] != said[-2]:
                out.pop()
            out[-1:] = ["NOT", said[-2]]
        if s in ("FIRST", "BEFORE") and closes and out[-2:-1] == ["NOT"] and out[-1] in names:
            out += ["BEFORE", names[1] if out[-1] == names[0] else names[0]]
            continue
        out.append(s)
    return out


_OPENS = ["COMMA", "PERMIT"]


def permissions(syms: list[str]) -> tuple[list[str], bool]:
    """The symbols without the clauses that only permit something, and whether there were any.

    A permission runs from the full stop or "but" before ``PERMIT`` (or from a comma just before
    it: "..., it is fine if ...") to the next full stop; it restricts nothing when it has no
    negation, "only", count or "until". A sentence opening "you may" that names no place ("you
    may pass through other places in between") permits too."""
    out: list[str] = []
    found = False
    for start, end in clauses_of(syms, ("STOP", "BUT")):
        part = syms[start:end]
        sep = [syms[end]] if end < len(syms) else []
        opens = next((k for k in range(1, len(part)) if part[k - 1 : k + 1] == _OPENS), None)
        if opens is not None and "PERMIT" not in part[:opens]:  # the rest is the permission
            rest, found_here = permissions(part[opens:])
            if found_here and not rest:
                found = True
                out += [*part[: opens - 1], *sep]
                continue
        plain = not {"NOT", "ONLY", "UNTIL"} & set(part) and not any(
            _COUNT.fullmatch(s) for s in part
        )
        named = any(_P.fullmatch(s) for s in part)  # "you may pass through other places": no
        early = "BEFORE" in part  # "you are allowed to be in B before A (too)": a permission
        lead = [s for s in part if s != "BE"][:1] == ["CAN"]
        if ("PERMIT" in part or (lead and (early or not named))) and plain:  # place named
            found = True
            part = []
        if part or (out and out[-1] not in ("STOP", "BUT")):
            out += [*part, *sep]
    return out, found


def prepare(
    syms: list[str], places: Iterable[str], props: Iterable[str] = ()
) -> tuple[list[str], bool]:
    """All the passes, in order; and whether a permission was removed."""
    places = frozenset(places)
    syms = shape(tails(syms, frozenset(props)), places)
    syms = trailing_whenever(eventually(time_frame(converse(syms))))
    syms, permitted = permissions(syms)
    syms = not_first(leave_reference(anaphora(perfect_anaphora(gapping(syms))), places))
    syms = returns(restated(syms))
    return list_references(syms, places), permitted
