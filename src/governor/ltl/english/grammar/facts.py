"""Facts said of a place, found by the cue normaliser (:mod:`governor.ltl.english.grammar.normaliser` marks them
``FACT``; :mod:`governor.ltl.english.grammar.sentence.shape` reads the mark): "the vault is being mopped",
"rooms 12 and 14 are isolation rooms", "the cellar stairs are icy" (a part of the place). A
fact gives the reason for a rule, or describes; it constrains nothing.

Imports nothing of the project.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

__all__ = ["is_fact"]

_PLACEHOLDER = re.compile(r"P\d+")
_ROUTE_WORDS = frozenset(
    {"first", "last", "final", "next", "start", "end", "goal", "destination", "target", "stop"}
    | {"visit", "visited", "visits", "entered", "reached", "checked", "patrolled"}
)
"""Words that make "A is ..." part of a route or a visit, not a fact about the place."""


def is_fact(toks: Sequence[str], i: int, symbols: Callable[[Sequence[str]], list[str]]) -> bool:
    """Whether a fact about a placeholder opens at ``i`` ("P1 is being mopped", "P1 and P2 are
    isolation rooms"): "is" / "are" after it, then words up to a comma, full stop or "so" that
    name no placeholder and, read by ``symbols``, say no cue but "being"."""
    if i == 0 or toks[i] not in ("is", "are"):
        return False
    if not _PLACEHOLDER.fullmatch(toks[i - 1]) and not _part_of(toks, i - 1, symbols):
        return False
    end = i + 1
    while end < len(toks) and toks[end] not in (",", ".", "so"):
        end += 1
    rest = toks[i + 1 : end]
    if not rest or _ROUTE_WORDS & set(rest) or any(_PLACEHOLDER.fullmatch(w) for w in rest):
        return False
    return symbols(toks[i:end]) in ([], ["BE"])


def _part_of(toks: Sequence[str], j: int, symbols: Callable[[Sequence[str]], list[str]]) -> bool:
    """Whether a noun at ``j`` names a part of the place before it ("P1 stairs", "P1 door"): a
    plain word that says no cue, the subject of the fact in the place's stead."""
    w = toks[j]
    plain = w.isalpha() and w not in _ROUTE_WORDS and not symbols([w])
    return j >= 1 and plain and _PLACEHOLDER.fullmatch(toks[j - 1]) is not None
