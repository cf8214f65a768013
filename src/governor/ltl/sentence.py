"""Sentence-level passes of the clause grammar, on the cue symbols before clauses are read.

Each pass rewrites the symbol list in one left-to-right sweep (linear in the sentence):

- *eventually*: a sentence that opens with "eventually" / "at some point" lists goals in any
  order (the cue is dropped); at a clause end it adds nothing; elsewhere it is ``THEN``.
- a trailing "each time" / "this applies every time" restates the reaction: dropped.
- *gapping*: "do not enter B before A or C before B" becomes two clauses.
- *anaphora*: ``REF`` ("before that", "until then", "until you do", "go there") is the last
  placeholder of the clause before; ``WHICH`` is the placeholder just before it.
- *list references*: a clause without a placeholder about "the previous one" / "the next one"
  refers to the places in the order they were listed (numbered by first mention): "never enter
  one before the previous one" becomes "do not enter P2 before P1, ... P3 before P2", and "do
  not go back to any of them before reaching the next one" becomes "do not re-enter P1 before
  P2, ..."; "visit all three" / "both must be visited" lists them all.
- *permissions*: a clause that only allows something ("visiting B earlier is fine", "extra visits
  are allowed") adds no constraint; it is removed (and :func:`permitted` says so).

Imports nothing of the project.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Sequence

_P = re.compile(r"P\d+")
BOUNDS = frozenset({"STOP", "BUT", "COMMA", "AND"})
_OPENERS = frozenset({"MUST", "CAN", "STOP", "COMMA"})
_COUNT = re.compile(r"(?:LE|GE|EQ|GT|LT|N)_\d+")
_ONCE = re.compile(r"(?:EQ|N)_1")


def eventually(syms: list[str]) -> list[str]:
    """``EVENTUALLY`` dropped where it orders nothing, ``THEN`` elsewhere."""
    lead = next((s for s in syms if s not in _OPENERS), "")
    out: list[str] = []
    for i, s in enumerate(syms):
        if s != "EVENTUALLY":
            out.append(s)
            continue
        nxt = syms[i + 1] if i + 1 < len(syms) else "STOP"
        if lead != "EVENTUALLY" and nxt not in ("STOP", "COMMA", "BUT"):
            out.append("THEN")
    return out


def trailing_whenever(syms: list[str]) -> list[str]:
    """A closing "each time" (after a comma or a full stop, nothing read after it) dropped."""
    out = list(syms)
    for i in range(len(out) - 1, 0, -1):
        if out[i] == "WHENEVER" and out[i - 1] in ("COMMA", "STOP"):
            if not any(_P.fullmatch(s) for s in out[i:]):
                return [*out[: i - 1], *(s for s in out[i + 1 :] if s == "STOP")]
            break
    return out


def gapping(syms: list[str]) -> list[str]:
    """``NOT b BEFORE a OR d BEFORE c`` -> ``NOT b BEFORE a COMMA NOT d BEFORE c``."""
    out: list[str] = []
    for i, s in enumerate(syms):
        out.append(s)
        rest = syms[i + 1 : i + 4]
        pair = len(rest) == 3 and _P.fullmatch(rest[0]) and rest[1] in ("BEFORE", "UNTIL")
        gap = s in ("OR", "AND") and pair and _P.fullmatch(rest[2]) and len(out) >= 5
        if gap and out[-5] == "NOT" and out[-3] in ("BEFORE", "UNTIL") and _P.fullmatch(out[-2]):
            out[-1:] = ["COMMA", "NOT"]
    return out


def anaphora(syms: list[str]) -> list[str]:
    """``REF`` -> the last placeholder before its clause; ``WHICH`` -> the one just before."""
    out = list(syms)
    last: str | None = None  # last placeholder before the current clause
    here: str | None = None  # last placeholder in the current clause
    for i, s in enumerate(syms):
        if _P.fullmatch(s):
            here = s
        elif s in BOUNDS and here is not None:
            last, here = here, None
        elif s == "REF" and last is not None:
            out[i] = last
        elif s == "WHICH" and (here or last) is not None:
            out[i] = here or last or ""
    return out


def clauses_of(syms: Sequence[str], bounds: Iterable[str] = ("STOP", "BUT", "COMMA")) -> list[
    tuple[int, int]
]:  # fmt: skip
    """``(start, end)`` of each stretch between the ``bounds`` symbols."""
    stops = set(bounds)
    out, start = [], 0
    for i, s in enumerate([*syms, "STOP"]):
        if s in stops:
            out.append((start, i))
            start = i + 1
    return out


def _pairs(names: list[str], named: Iterable[str], again: bool) -> list[str]:
    keep = set(named)
    out: list[str] = []
    for a, b in itertools.pairwise(names):
        if again and (not keep or a in keep):
            out += ["COMMA", "NOT", "AGAIN", a, "BEFORE", b]
        elif not again:
            out += ["COMMA", "NOT", b, "BEFORE", a]
    return out[1:]


def _list_clause(part: list[str], names: list[str]) -> list[str] | None:
    """The explicit clauses a clause about "the previous / next one" stands for, or None."""
    named = [s for s in part if _P.fullmatch(s)]
    if len(names) < 2 or any(n not in names[:-1] for n in named):
        return None
    order = {"BEFORE", "UNTIL", "AHEAD"} & set(part)
    first = min((part.index(s) for s in order), default=len(part))
    if named and (not order or any(_P.fullmatch(s) for s in part[first:])):
        return None  # its own target is named: an ordinary clause
    strict = {"AGAIN", "STRICT", "LEAVE"} & set(part) or any(_ONCE.fullmatch(s) for s in part)
    if strict and order:
        return _pairs(names, named, again=True)
    if not named and "NOT" in part and order and not any(_COUNT.fullmatch(s) for s in part):
        return _pairs(names, (), again=False)
    return None


_ALL = frozenset({"ANY", "MUST", "BE", "AND", "THEN", "ALWAYS"})


def list_references(syms: list[str], places: Iterable[str]) -> list[str]:
    """Clauses about the listed places by their position ("the previous one") made explicit."""
    names = sorted(set(places) & set(syms), key=syms.index)
    out: list[str] = []
    for start, end in clauses_of(syms):
        part = syms[start:end]
        sep = [syms[end]] if end < len(syms) else []
        found = _list_clause(part, names)
        if found is None and "ANY" in part and set(part) <= _ALL and names:
            seen = [n for n in names if n in syms[:start]]
            found = [x for n in seen for x in ("AND", n)][1:] or None
        out += [*(found if found is not None else part), *sep]
    return out


def permissions(syms: list[str]) -> tuple[list[str], bool]:
    """The symbols without the clauses that only permit something, and whether there were any.

    A permission runs from the full stop or "but" before ``PERMIT`` to the next full stop; it
    restricts nothing when it has no negation, "only", count or "until"."""
    out: list[str] = []
    found = False
    for start, end in clauses_of(syms, ("STOP", "BUT")):
        part = syms[start:end]
        sep = [syms[end]] if end < len(syms) else []
        plain = not {"NOT", "ONLY", "UNTIL"} & set(part) and not any(
            _COUNT.fullmatch(s) for s in part
        )
        if "PERMIT" in part and plain:
            found = True
            part = []
        if part or (out and out[-1] not in ("STOP", "BUT")):
            out += [*part, *sep]
    return out, found


def prepare(syms: list[str], places: Iterable[str]) -> tuple[list[str], bool]:
    """All the passes, in order; and whether a permission was removed."""
    syms = trailing_whenever(eventually(syms))
    syms, permitted = permissions(syms)
    syms = anaphora(gapping(syms))
    return list_references(syms, places), permitted
