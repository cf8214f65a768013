""" "Without changing floors": the run stays on the member of a declared group it starts on.

A domain may declare groups (:attr:`governor.ltl.domain.Domain.groups`: a name such as
``floor`` -> propositions of which at most one holds at a time). A phrase saying that the
group's member does not change:

- "without changing floors", "do not change floors", "never switching floors" (the plural of
  the group's name after a negated verb of changing);
- "without leaving the current floor", "staying on the same floor", "remaining on this floor"

is cut from the sentence (:func:`cut`) when its noun is a group's name or a head noun of the
domain's names (``floor`` of ``first_floor`` and ``second_floor``; a phrase of another noun,
"without leaving this room" where no name ends in "room", is left to the grammar); the rest is read on its own and the reading is conjoined
with :func:`stay_formula`: ``G m1 | G m2 | ...``, the member true at the first step stays true
at every step (at most one holds at a time, so no other is ever true). A sentence that says
such a phrase of a noun the domain declares no group for fails and says what the domain lacks:
which propositions are the floors is not in the sentence.

Linear: one regular-expression scan of the sentence (no nested repetition).

World-free: imports the LTL syntax, operators and parser only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from governor.ltl import operators as op
from governor.ltl import syntax as s
from governor.ltl.parser import atom

_NEG = r"(?:without|never|not|no|do\s+not|don'?t|do\s+n'?t|dont)"
_CHANGE = r"(?:changing|change|switching|switch|swapping|swap)"
_KEEP = r"(?:leaving|leave|ever\s+leaving)"
_STAY = r"(?:staying|stay|remaining|remain|keeping|keep)"
_THIS = r"(?:the\s+same|the\s+current|your\s+current|this|your|the\s+one\s+you\s+are\s+on)"
PHRASE = re.compile(
    r"(?:,\s*)?(?:\b(?:and|but|while)\s+)?\b(?:"
    rf"{_NEG}\s+(?:ever\s+)?{_CHANGE}\s+(?:the\s+|your\s+)?(?P<plural>[a-z]+)s\b"
    rf"|{_NEG}\s+{_KEEP}\s+{_THIS}\s+(?P<kept>[a-z]+)\b"
    rf"|{_STAY}\s+(?:on|in|at|within)\s+{_THIS}\s+(?P<stayed>[a-z]+)\b"
    r")"
)
"""A phrase of not changing a group's member, the noun (singular) in one of its groups."""


@dataclass(frozen=True)
class Cut:
    """The sentence without the phrase, the phrase as said, and the noun it names (singular)."""

    rest: str
    phrase: str
    noun: str


def cut(sentence: str) -> Cut | None:
    """The first phrase of not changing a group's member, cut from ``sentence``; None if none."""
    low = sentence.lower()
    m = PHRASE.search(low)
    if m is None:
        return None
    noun = m["plural"] or m["kept"] or m["stayed"] or ""
    rest = f"{sentence[: m.start()]} {sentence[m.end() :]}"
    rest = re.sub(r"\s+", " ", rest).strip()
    rest = re.sub(r"\s+([.,;!?])", r"\1", rest)
    rest = re.sub(r"^(?:and|but|while)\b\s*|[\s,;]*(?:\b(?:and|but|while))?[\s,;]*$", "", rest)
    return Cut(rest.strip(" ,;"), m[0].strip(" ,"), noun)


def stay_formula(members: tuple[str, ...]) -> s.Formula:
    """``G m1 | G m2 | ...``: the member true at the first step is true at every step."""
    return op.Or(tuple(op.Always(atom(m)) for m in members))


def note(noun: str, name: str, members: tuple[str, ...]) -> str:
    """What the reading says of the phrase."""
    return (
        f"not changing {noun}s: the run stays on the {name} it starts on (the domain's"
        f" {name}s, at most one at a time: {', '.join(members)})"
    )
