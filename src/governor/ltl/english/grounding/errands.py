"""Errands: a thing or a person carried to a place, or fetched from one, is a visit to the place
("take the cart to the kitchen", "bring the parcel first to reception", "escort the visitors
into the atrium", "pick up your sister at school", "drop the letters off at the post office").

The words are rewritten before grounding: the verb and the noun phrase it carries become "go",
so that the place phrase after "to" / "into" / "at" is read as any other motion. Only a noun
phrase that names nothing of the domain is carried off (the household's "put the apple in the
fridge" names an object and stays an action), and only when a place of the domain follows.
One left-to-right pass with a bounded look-ahead: linear in the sentence.

Imports the lexicon, the cue words and the domain.
"""

from __future__ import annotations

from collections.abc import Sequence

from governor.ltl.domain import Domain
from governor.ltl.english import lexicon as lx
from governor.ltl.english.phrases.symbols import CUE_WORDS

__all__ = ["errands"]


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split(" "))


CARRY = _words(
    "take takes taking took bring brings bringing brought carry carries carrying carried wheel"
    " wheels wheeling push pushes pushing deliver delivers delivering delivered escort escorts"
    " escorting escorted lead leads leading led guide guides guiding guided haul hauls hauling"
    " drive drives driving drove"
)
"""Verbs that move a thing or a person to a place ("take the cart to ...")."""
FETCH = _words("pick picks picking picked collect collects collecting collected")
"""Verbs that fetch from a place ("pick up your sister at school"); ``drop ... off at`` too."""
TO = frozenset({"to", "into"})
AT = frozenset({"at", "from"})
BETWEEN = frozenset({"first", "over", "down", "back", "straight", "up", "off", "out"})
"""Adverbs and particles allowed between the thing carried and its place."""
MAX_THING = 4
"""Most words of the noun phrase carried."""


def _names_domain(domain: Domain, words: Sequence[str]) -> bool:
    """Whether any one to three consecutive ``words`` name an object of the domain."""
    return any(
        domain.resolve("".join(words[i : i + n])) is not None
        for n in (1, 2, 3)
        for i in range(len(words) - n + 1)
    )


def _place_at(domain: Domain, toks: Sequence[str], i: int) -> bool:
    """Whether a place of the domain is named at ``i`` (after determiners)."""
    while i < len(toks) and toks[i] in lx.DETERMINERS:
        i += 1
    return any(domain.resolve("".join(toks[i : i + n])) in domain.room_names for n in (3, 2, 1))


def _carried(domain: Domain, toks: Sequence[str], i: int) -> int | None:
    """The index of the place word ("to", "at") ending an errand whose verb is at ``i``."""
    verb = toks[i]
    start = i + 1 + (verb in FETCH and toks[i + 1 : i + 2] == ["up"])
    if verb == "drop":
        start = i + 1
    ends = TO if verb in CARRY else AT
    j = start
    while j < len(toks) and j - start <= MAX_THING + 2:
        word = toks[j]
        if word in ends or (verb == "drop" and word == "at"):
            thing = [w for w in toks[start:j] if w not in BETWEEN and w not in lx.DETERMINERS]
            plain = thing and not any(w in CUE_WORDS or w in (",", ".") for w in thing)
            if plain and len(thing) <= MAX_THING and not _names_domain(domain, thing):
                return j if _place_at(domain, toks, j + 1) else None
            return None
        j += 1
    return None


def errands(toks: Sequence[str], domain: Domain) -> list[str]:
    """``toks`` with each errand to a place said as going there (see the module docstring)."""
    out: list[str] = []
    i = 0
    while i < len(toks):
        word = toks[i]
        end = _carried(domain, toks, i) if word in CARRY | FETCH | {"drop"} else None
        if end is None:
            out.append(word)
            i += 1
            continue
        out += ["go", "to"]
        i = end + 1
    return out
