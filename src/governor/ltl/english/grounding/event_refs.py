"""Event references: an event phrase whose subject was said elsewhere in the sentence.

- *continued*: the predicate after a subject with a relative clause ("any request that is made |
  must be served" -> ``request_served``), read as if "it" opened it;
- *elided*: one predicate word after "and" / "but" that says a proposition named before negated,
  its subject elided ("..., and closed whenever ..." -> ``!gate_open``);
- *described*: the propositions whose nouns a sentence said before a position without naming
  the proposition ("Run the safety check, and don't start the mower before it's done": "it" is
  the safety check, ``safety_check_done``), the referents of a later "it".

World-free: imports the event matcher and the event vocabulary.
"""

from __future__ import annotations

from collections.abc import Sequence

from governor.errors import SpecError
from governor.ltl.english.grounding import event_words as ew
from governor.ltl.english.grounding.events import EventMatcher, EventMention
from governor.ltl.operators import Not

__all__ = ["continued", "described", "elided"]


AUXILIARIES = frozenset({"must", "should", "has", "have", "will", "needs", "is", "are", "gets"})
"""Words that open a predicate whose subject is the noun before ("every order that is placed
must be shipped")."""


def continued(
    matcher: EventMatcher, toks: Sequence[str], i: int, subject: str
) -> EventMention | None:
    """The predicate at ``i`` of ``subject``'s noun after a relative clause ("any request that
    is made | must be served" -> ``request_served``): read as if "it" opened it."""
    if i >= len(toks) or toks[i] not in AUXILIARIES:
        return None
    found = matcher.match(["it", *toks[i:]], 0, [subject])
    if found is None or found.name == subject:
        return None
    return EventMention(i + found.end - 1, found.formula, found.name)


def elided(
    matcher: EventMatcher, toks: Sequence[str], i: int, said: Sequence[str]
) -> EventMention | None:
    """One predicate word at ``i`` after "and" / "but" that says a proposition ``said`` before
    negated, its subject elided (the latest that fits): "the gate should be open whenever ...,
    and closed whenever ..." -> ``!gate_open``; read as if "it" opened it. Only a contrast is
    read: a word of the same family may say another thing ("quiet mode ... and inactive")."""
    if i == 0 or toks[i - 1] not in ("and", "but") or i >= len(toks):
        return None
    try:
        found = matcher.match(["it", toks[i]], 0, said)
    except SpecError:
        return None  # two fit: an elided subject is read only when one does
    if found is None or not isinstance(found.formula, Not):
        return None
    return EventMention(i + 1, found.formula, found.name)


def described(matcher: EventMatcher, toks: Sequence[str], i: int) -> list[str]:
    """The propositions whose nouns are all said, next to each other, before ``i`` ("the
    safety check" for ``safety_check_done``), the latest said first."""
    stems = [ew.stem(t) for t in toks[:i]]
    found: list[tuple[int, str]] = []
    for name, nouns in matcher.nouns.items():
        words = [w for w in name.split("_") if ew.stem(w) in nouns]
        n = len(words)
        if not n:
            continue
        said = [stem for stem in (ew.stem(w) for w in words)]
        at = [k for k in range(len(stems) - n + 1) if stems[k : k + n] == said]
        if at:
            found.append((at[-1], name))
    return [name for _, name in sorted(found, reverse=True)]
