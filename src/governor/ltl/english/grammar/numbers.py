"""Numbers of the cue normaliser (:mod:`governor.ltl.english.grammar.normaliser`): a number said in digits or words
("three", "once", "a single time"), other counts denied after a count ("three times: not two,
not four", "not once and not a third time"), a number no count reads (kept as ``NUM`` so that the sentence fails rather than
lose it), and "a second (trip into) A" (a return).

Imports the count and number tables and the lexicon's generic place nouns.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from governor.ltl.english.lexicon import GENERIC_PLACES
from governor.ltl.english.phrases.symbols import NUMBERS

__all__ = ["number", "other_counts", "unread_number", "visit_of"]
_PLACEHOLDER = re.compile(r"P\d+")


def number(toks: Sequence[str], i: int) -> tuple[int, int] | None:
    """``(n, index after)`` of a number at ``i``: digits, a number word, once/twice/thrice,
    "a single time", "one time"."""
    w = toks[i] if i < len(toks) else ""
    if w == "a" and i + 1 < len(toks) and toks[i + 1] == "single":
        return 1, i + 2
    if w.isdigit() and len(w) <= 3:
        return int(w), i + 1
    if w in NUMBERS:
        return NUMBERS[w], i + 1
    return (1, i + 1) if w == "once" else None


_VISIT_NOUNS = frozenset({"trip", "visit", "time", "entry", "into", "to", "in", "inside"})


def visit_of(toks: Sequence[str], j: int) -> bool:
    """Whether a place follows at ``j``, after at most three nouns of a visit ("trip into")."""
    for k in range(j, min(j + 4, len(toks))):
        if _PLACEHOLDER.fullmatch(toks[k]):
            return True
        if toks[k] not in _VISIT_NOUNS:
            return False
    return False


_ORDINALS = frozenset({"second", "third", "fourth", "fifth", "sixth", "seventh", "eighth"})


def _denied_count(toks: Sequence[str], i: int) -> int:
    """The index after a count said at ``i`` ("two", "three times", "once", "a third time"), or
    -1 where none is."""
    w = toks[i] if i < len(toks) else ""
    if w == "a" and len(toks) > i + 2 and toks[i + 1] in _ORDINALS and toks[i + 2] == "time":
        return i + 3
    if not (w.isdigit() or w in NUMBERS or w == "once"):
        return -1
    return i + 1 + (toks[i + 1 : i + 2] in (["times"], ["time"]))


def other_counts(toks: Sequence[str], i: int) -> int:
    """How many tokens "not two, not four" (two other counts, each denied) spans at ``i``: "not
    once and not a third time", "not two times nor four"; 0 where it does not stand there."""
    if toks[i : i + 1] not in (["not"], ["no"]) or (j := _denied_count(toks, i + 1)) < 0:
        return 0
    while toks[j : j + 1] in ([","], ["and"], ["or"]):
        j += 1
    if toks[j : j + 1] not in (["not"], ["no"], ["nor"]) or (k := _denied_count(toks, j + 1)) < 0:
        return 0
    return k - i


_LIST_SIZE = frozenset({"all", "the", "these", "those", "of", "both", "any", "every", "each"})


def unread_number(toks: Sequence[str], i: int) -> bool:
    """Whether ``toks[i]`` is a number no count or step bound read ("limit your visits to
    three"), or an "exactly" no phrase read: kept as ``NUM``, which no clause reads, rather than
    dropped. A list size ("all
    three", "two places") and "one" as a pronoun ("the previous one") are not counts."""
    w, nxt = toks[i], toks[i + 1] if i + 1 < len(toks) else ""
    if w in ("exactly", "precisely"):  # "exactly as soon as": no count, order or "exactly when"
        return nxt in ("if", "as", "when", "while", "whenever", "at", "during", "in", "on")
    counted = (w.isdigit() or w in NUMBERS) and w not in ("one", "single")
    size = (toks[i - 1] if i else "") in _LIST_SIZE or nxt in GENERIC_PLACES  # "two places"
    return counted and not size
