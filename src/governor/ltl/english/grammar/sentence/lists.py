"""List references of the sentence passes (:mod:`governor.ltl.english.grammar.sentence.passes`): a clause without a
placeholder about "the previous one" / "the next one" refers to the places in the order they
were listed (numbered by first mention): "never enter one before the previous one" becomes "do
not enter P2 before P1, ... P3 before P2", and "do not go back to any of them before reaching
the next one" becomes "do not re-enter P1 before P2, ..."; "visit all three" / "both must be
visited" / "visiting each of them again and again" lists them all (with the clause's own
modifiers; "never drive into either" avoids them all). One sweep over the clauses: linear in the sentence.

Imports nothing of the project.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Sequence

_P = re.compile(r"P\d+")
_COUNT = re.compile(r"(?:LE|GE|EQ|GT|LT|N)_\d+")
_ONCE = re.compile(r"(?:EQ|N)_1")


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
    if {"LEAVE", "STRICT", "THEN"} <= set(part):  # "after you leave one, on to the next without
        order.add("THEN")  # returning to it": no return to it before the next
    first = min((part.index(s) for s in order), default=len(part))
    if named and (not order or any(_P.fullmatch(s) for s in part[first:])):
        return None  # its own target is named: an ordinary clause
    strict = {"AGAIN", "STRICT", "LEAVE"} & set(part) or any(_ONCE.fullmatch(s) for s in part)
    if strict and order:
        ahead = ["COMMA", *_pairs(names, (), again=False)] if {"NOT", "AHEAD"} <= set(part) else []
        return [*_pairs(names, named, again=True), *ahead]  # "... and never out of order"
    if named or any(_COUNT.fullmatch(s) for s in part):
        return None
    only_after = "ONLY" in part and "AFTER" in part  # "each entered only after the previous one"
    if ("NOT" in part and order) or (only_after and "NOT" not in part):
        return _pairs(names, (), again=False)
    if "ANY" in part and "AFTER" in part and not {"NOT", "ONLY"} & set(part):
        return [x for n in names for x in ("THEN", n)][1:]  # "each one after the one before it"
    return None


def _after_list(part: list[str], names: list[str]) -> list[str] | None:
    """A clause that lists the places and then refers to them by position, with no comma
    between ("A, B and C in sequence without revisiting any of them before the next"): the list,
    then the clauses the reference stands for."""
    last = max((k for k, s in enumerate(part) if _P.fullmatch(s)), default=-1)
    if last < 0 or not {"BEFORE", "UNTIL", "AHEAD", "AFTER"} & set(part[last + 1 :]):
        return None
    found = _list_clause(part[last + 1 :], names)
    mods = [s for s in part[last + 1 :] if s in ("ORDER", "STRICT", "REPEAT")]
    return [*part[: last + 1], *mods, "COMMA", *found] if found else None


def _merge_lists(syms: Sequence[str], parts: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The clauses with a comma between two places not a boundary ("A, B and C each ..."), and
    a leading condition one with its clause ("once you leave A or B, do not go back ...")."""
    out: list[tuple[int, int]] = []
    for start, end in parts:
        after = out and start < end and syms[start - 1] == "COMMA"
        listed = after and _P.fullmatch(syms[start - 2]) and _P.fullmatch(syms[start])
        lead = [x for x in syms[out[-1][0] : out[-1][0] + 2] if x != "AND"][:1] if out else []
        condition = after and lead in (["IF"], ["AFTER"])
        if listed or condition:
            out[-1] = (out[-1][0], end)
            continue
        out.append((start, end))
    return out


_ALL = frozenset({"ANY", "MUST", "BE", "AND", "THEN", "ALWAYS", "REPEAT", "ORDER", "AGAIN"})


def list_references(syms: list[str], places: Iterable[str]) -> list[str]:
    """Clauses about the listed places by their position ("the previous one") made explicit."""
    names = sorted(set(places) & set(syms), key=syms.index)
    out: list[str] = []
    part: list[str] = []
    for start, end in _merge_lists(syms, clauses_of(syms)):
        prev, part = part, syms[start:end]
        sep = [syms[end]] if end < len(syms) else []
        found = _list_clause(part, names) or _after_list(part, names)
        restated = "NOT" in part and "NOT" in prev  # "A and B are off limits; never enter either"
        if found is None and "ANY" in part and set(part) <= _ALL | {"NOT"} and names:
            seen = [n for n in names if n in syms[:start]]
            found = [x for n in seen for x in ("AND", n)][1:] or None
            found = found and [*found, *(s for s in ("REPEAT", "ORDER") if s in part)]
            found = found and (["NOT", *found] if restated else None if "NOT" in part else found)
            if found and out[-1:] == ["COMMA"]:  # "A and B, both": no place listed twice
                out[-1] = "STOP"
        out += [*(found if found is not None else part), *sep]
    return out
