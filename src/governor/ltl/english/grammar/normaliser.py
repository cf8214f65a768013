"""The normaliser of the clause grammar: a lifted sentence's tokens to a string of cue symbols.

Cue phrases (longest first, at most :data:`LONGEST` words) become symbols: ``NOT`` ("never",
"avoid", "stay out of", "off limits"), ``IF`` ("if", "when", "as soon as", a clause-opening
"once"), ``WHENEVER`` ("every time"), ``AFTER``, ``BEFORE``, ``UNTIL`` ("unless"), ``THEN``
("then", "after that", "later", "finally"), ``NEXT`` ("immediately", "at the next step"),
``ORDER`` ("in this order"), ``ANYORDER`` ("the order does not matter"), ``REPEAT`` ("keep",
"patrol", "again and again"), ``IFF`` ("if and only if"), ``EVENTUALLY`` ("at some point"),
``PERMIT`` ("is fine", "are allowed"), ``REF`` ("before that", "until you do": an anaphor),
``WHICH``, ``AHEAD`` ("skip ahead", "early"), ``STAY``, ``LEAVE``, ``ONLY``, ``PERF``
("have"), ``TOGETHER`` ("go together", "both or neither"), ... Counts become ``LE_2`` (at most
2), ``GE_2``, ``EQ_2``, ``GT_2``, ``LT_2``, ``N_2`` (a bare "twice", or a number before a place:
"two visits to A") and ``WITHIN_3`` ("within 3 steps", "no more than 3 steps later", "in 3
steps or fewer"; "within 3 steps of a" is ``WITHIN_3 IF a``); number words are read as numbers.
"from A to B to C" is ``A THEN B THEN C``; "a second visit to A" is ``AGAIN A``; "no more b"
is ``NOT FROMNOW b`` (from then on); other counts denied after a count ("three times: not two,
not four") restate it and are dropped. Placeholders
(``P1``) stay. A number no count reads becomes ``NUM`` and a past step ("at the step before")
``PREV``, which no clause reads: the sentence fails rather than lose them. A fact said of a
place ("the vault is being cleaned") is marked ``FACT`` (:mod:`governor.ltl.english.grammar.sentence.shape`
reads it). Every other word is
dropped. One left-to-right pass: linear in the sentence.

Imports its phrase tables (:mod:`governor.ltl.english.phrases.symbols`), the facts said of a place
(:mod:`governor.ltl.english.grammar.facts`) and the numbers (:mod:`governor.ltl.english.grammar.numbers`) only.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from governor.ltl.english.grammar.facts import is_fact
from governor.ltl.english.grammar.numbers import number, other_counts, unread_number, visit_of
from governor.ltl.english.phrases.fillers import filler_holds, no_more
from governor.ltl.english.phrases.symbols import (
    AFTER_N,
    BEFORE_N,
    CUE_WORDS,
    LONGEST,
    STEPS,
    SYMBOLS,
    TIMES,
    WITHIN,
)
from governor.ltl.english.phrases.time_units import unread_unit

__all__ = ["CUE_WORDS", "number", "symbols"]
_PLACEHOLDER = re.compile(r"P\d+")


def _framed(toks: Sequence[str], i: int) -> bool:
    """Whether a placeholder at ``i`` closes with a comma: "In P1, ..." opening a sentence."""
    return bool(_PLACEHOLDER.fullmatch(toks[i] if i < len(toks) else "")) and toks[
        i + 1 : i + 2
    ] == [","]


def _is_placeholder(toks: Sequence[str], i: int) -> bool:
    """Whether a placeholder stands at ``i``."""
    return bool(_PLACEHOLDER.fullmatch(toks[i] if i < len(toks) else ""))


def _starts(toks: Sequence[str], i: int, phrase: tuple[str, ...]) -> bool:
    return tuple(toks[i : i + len(phrase)]) == phrase


def _within(toks: Sequence[str], i: int) -> tuple[str, int] | None:
    """A step bound at ``i``: "within 3 steps" -> ``("WITHIN_3", end)``."""
    for lead in WITHIN:
        if not _starts(toks, i, lead):
            continue
        j = i + len(lead)
        j += 2 if toks[j : j + 2] in (["the", "next"], ["the", "following"]) else 0
        found = number(toks, j)
        if found is None:
            continue
        for step in STEPS:
            if _starts(toks, found[1], tuple(step.split())):
                return f"WITHIN_{found[0]}", found[1] + len(step.split())
    return None


def _count(toks: Sequence[str], i: int) -> tuple[str, int] | None:
    """A count or step bound at ``i``: ``("LE_2", end)``, ``("WITHIN_3", end)``."""
    within = _within(toks, i)
    if within is not None:
        return within
    if i and toks[i] == "one" and toks[i - 1] in ("each", "every"):
        return None  # "coming back to each one time after time": a pronoun, no count
    kind = None
    for phrase, k in BEFORE_N:
        if _starts(toks, i, phrase) and number(toks, i + len(phrase)):
            kind, i = k, i + len(phrase)
            break
    found = number(toks, i)
    if found is None:
        return None
    n, j = found
    if kind is not None and toks[j : j + 1] and toks[j] in STEPS:
        return None  # "exactly one step after a": a time, not a count
    if kind is None and toks[j : j + 1] and toks[j] in STEPS:  # "in 3 steps or fewer"
        for phrase, k in AFTER_N:
            if k == "LE" and _starts(toks, j + 1, phrase):
                return f"WITHIN_{n}", j + 1 + len(phrase)
    has_times = toks[i] in ("once", "twice", "thrice")
    for t in TIMES:
        if toks[j : j + 1] == [t]:
            j, has_times = j + 1, True
            break
    if kind is None:
        by = next((len(a) for a in _BY_AGENT if has_times and _starts(toks, j, a)), 0)
        for phrase, k in AFTER_N:  # "two visits (from you) at the very most"
            if _starts(toks, j + by, phrase):
                kind, j = k, j + by + len(phrase)
                break
    again = number(toks, j + 2) if toks[j : j + 2] == ["and", "only"] else None
    if again is not None and again[0] == n:  # "once and only once"
        kind, j = "EQ", again[1] + (toks[again[1] : again[1] + 1] in (["times"], ["time"]))
    at = j + (has_times and toks[j : j + 1] in (["to"], ["at"], ["in"], ["into"]))
    if kind is None and _PLACEHOLDER.fullmatch(toks[at] if at < len(toks) else ""):
        for phrase, k in AFTER_N:  # "five (trips to) P1 at most": the place's count
            if _starts(toks, at + 1, phrase):
                return f"{k}_{n}", at
    place = _PLACEHOLDER.fullmatch(toks[at] if at < len(toks) else "")
    if kind is None and not has_times and not place:
        return None  # a number is a count when "times" or a place follows it ("two visits to A")
    return f"{kind or 'N'}_{n}", j


def _once_is_if(toks: Sequence[str], i: int) -> bool:
    """Whether "once" at ``i`` opens a clause ("once you have seen it") rather than counting."""
    prev = toks[i - 1] if i else ""
    nxt = toks[i + 1] if i + 1 < len(toks) else ""
    opens = prev in ("", ",", ".", "and", "but", "then", "that")
    subject = nxt in ("you", "we", "it", "the", "a", "an", "they", "i")
    return subject or (opens and nxt not in ("", ",", ".", "and", "then", "before", "in"))


_BY_AGENT = [tuple(a.split()) for a in ("from you", "by you", "from the robot", "by the robot")]


def _perfect_follows(toks: Sequence[str], i: int) -> bool:
    """Whether "once" at ``i`` opens a sentence with a perfect ("Once you've been to A, ..."):
    "after", a sequence; "go to B once you have been to A" stays a condition."""
    opens = i == 0 or toks[i - 1] in (".", ",", ";")
    return opens and toks[i + 1 : i + 2] in (["you"], ["we"]) and toks[i + 2 : i + 3] == ["have"]


def _route(toks: Sequence[str], i: int) -> tuple[list[str], int] | None:
    """ "from A to B (to C)" at ``i``: the places in the order travelled, ``A THEN B THEN C``."""
    at = toks[i + 1 : i + 4]
    if toks[i] != "from" or len(at) < 3 or at[1] != "to":
        return None
    if not (_PLACEHOLDER.fullmatch(at[0]) and _PLACEHOLDER.fullmatch(at[2])):
        return None
    out, j = [at[0]], i + 2
    while toks[j : j + 1] == ["to"] and j + 1 < len(toks) and _PLACEHOLDER.fullmatch(toks[j + 1]):
        out += ["THEN", toks[j + 1]]
        j += 2
    return out, j


def symbols(toks: Sequence[str], dropped: list[str] | None = None) -> list[str]:
    """The cue symbols of lifted tokens (placeholders kept, other words dropped; each dropped
    word is appended to ``dropped`` when given)."""
    toks = list(toks)
    out: list[str] = []
    i = 0
    while i < len(toks):
        w = toks[i]
        if _PLACEHOLDER.fullmatch(w):
            out.append(w)
            i += 1
            continue
        if w == "in" and toks[i - 1 : i] in ([], ["."]) and _framed(toks, i + 1):
            out.append("WHILE")  # "In the clean room, wearing a mask is mandatory": a condition
            i += 1
            continue
        if is_fact(toks, i, symbols):
            out.append("FACT")  # "the vault is being cleaned, ...": perhaps a reason, no rule
        route = _route(toks, i)
        if route is not None:
            out += route[0]
            i = route[1]
            continue
        ends = range(2, LONGEST + 1)  # "once there ,", "once that is done ,": a phrase
        phrase = w == "once" and any(tuple(toks[i : i + n]) in SYMBOLS for n in ends)
        if w == "once" and not phrase and _once_is_if(toks, i):
            out.append("AFTER" if _perfect_follows(toks, i) else "IF")
            i += 1
            continue
        if toks[i : i + 2] in (["no", "more"], ["no", "further"]) and _is_placeholder(toks, i + 2):
            out += ["NOT", "FROMNOW"]  # "no more orders may be accepted": from then on
            i += 2
            continue
        if denied := other_counts(toks, i):
            i += denied  # "three times: not two, not four": the count restated
            continue
        counted = None if phrase else _count(toks, i)
        if counted is not None:
            out.append(counted[0])
            i = counted[1]
            if counted[0].startswith("WITHIN_") and toks[i : i + 1] == ["of"]:
                out.append("IF")  # "within 2 steps of a fire being detected": after each
                i += 1
            continue
        for n in range(min(LONGEST, len(toks) - i), 0, -1):
            found = SYMBOLS.get(tuple(toks[i : i + n]))
            if found == () and not filler_holds(toks[i : i + n], toks[i + n : i + n + 1]):
                continue  # "but not more than three times": a count, not the filler
            at = len(out) - 1 - (out[-1:] == ["COMMA"])
            if found == () and no_more(toks[i : i + n]) and at >= 0 and out[at][:3] == "GE_":
                out[at] = f"EQ_{out[at][3:]}"  # "at least twice, but no more": exactly twice
            if found is not None:
                if found == ("NEXTAFTER",):
                    found = ("NEXT", "AFTER")
                out.extend(found)
                i += n
                break
        else:
            if unread_number(toks, i):
                out.append("NUM")
            if unread_unit(toks, i):
                out.append("TIME")  # "two turns later": a time no phrase read
            if w in ("second", "another", "repeat") and visit_of(toks, i + 1):
                out.append("AGAIN")  # "no second (trip into) A before B": a return
            elif dropped is not None:
                dropped.append(w)
            i += 1
    return out
