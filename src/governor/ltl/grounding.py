"""Offline grounding: referring expressions found by rule, grounded to the domain's propositions,
and replaced by placeholders ``P1``, ``P2``, ... (one per distinct grounding) to lift a sentence.

A referring expression names one checkable fact. Actions are grounded to the state they leave:
``open X`` -> ``is_open(X)``, ``close X`` -> ``!is_open(X)``, ``pick up``/``grab X`` ->
``is_grabbed(X)``, ``put X in Y`` -> ``is_in(X, Y)``, ``put X on Y`` -> ``is_on(X, Y) |
is_in(X, Y)`` (putting into a surface makes ``is_in``), ``turn on X`` -> ``is_switchedon(X)``;
going to, entering, visiting, sitting on or walking past X, and a bare room, -> ``agent_at(X)``.
A described state (``the microwave is open``) lifts to ``P1 holds``, a passive visit
(``kitchen is visited``) to ``you have P1``. ``it`` is the object named last; after a bare proposition, "it is not green" / "it does
not ring" is that proposition negated. The words are read
by :mod:`governor.ltl.scanner` (objects, places) and :mod:`governor.ltl.household_phrases`
(actions, states); a bare proposition by :mod:`governor.ltl.mentions`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from governor.ltl import lexicon as lx
from governor.ltl.domain import Domain
from governor.ltl.household_phrases import action, state
from governor.ltl.mentions import PropMatcher
from governor.ltl.operators import Not
from governor.ltl.scanner import NoSuchPredicate, Scanner
from governor.ltl.syntax import Atom, Formula

_T = TypeVar("_T")


@dataclass(frozen=True)
class Phrase:
    """One referring expression: its words, its placeholder and its grounding."""

    text: str
    placeholder: str
    formula: Formula


@dataclass(frozen=True)
class Lifted:
    """A sentence with its referring expressions replaced by placeholders.

    ``text`` has no punctuation (the pattern templates read it); ``tokens`` keeps commas and
    sentence ends, and marks a place phrase that says where the agent *is* (``be in the lab``)
    with a ``be`` before its placeholder, and one that goes back (``return to the lab``) with
    ``again`` (the clause grammar reads them).
    """

    text: str
    phrases: tuple[Phrase, ...]
    tokens: tuple[str, ...] = ()

    def grounding(self) -> dict[str, Formula]:
        """Placeholder -> grounded formula."""
        return {p.placeholder: p.formula for p in self.phrases}


def lift(sentence: str, domain: Domain) -> Lifted:
    """The sentence lifted: normalised words, each referring expression replaced by its
    placeholder. Raises :class:`SpecError` for a phrase naming an unknown object or proposition."""
    toks = lx.tokens(sentence)
    scan = Scanner(toks, domain)
    bare = [p for p in domain.propositions if "(" not in p and p not in domain.rooms]
    mentions = PropMatcher(bare) if bare else None
    out: list[str] = []
    marked: list[str] = []
    phrases: list[Phrase] = []
    names: dict[Formula, str] = {}
    last: str | None = None  # the bare proposition mentioned last ("it" in "it is not green")
    i = 0
    while i < len(toks):
        found = (mentions.match(toks, i) or mentions.pronoun(toks, i, last)) if mentions else None
        if found is not None:
            g = found[1].arg if isinstance(found[1], Not) else found[1]
            last = g.name if isinstance(g, Atom) else last
        found = found or _soft(lambda k: action(scan, k), i) or scan.motion(i)
        shape = "{}"
        if found is None and (st := _soft(lambda k: state(scan, k), i)) is not None:
            found, shape = st[:2], st[2]
        found = found or scan.bare(i)
        if found is None:
            scan.indefinite(i)
            out.append(toks[i])
            marked.append(toks[i])
            i += 1
            continue
        end, formula = found
        name = names.setdefault(formula, f"P{len(names) + 1}")
        words = toks[i:end]
        phrases.append(Phrase(" ".join(words), name, formula))
        out.append(shape.format(name))
        if {"has", "have", "had"} & set(words):
            marked.append("have")
        if lx.MODALS & set(words):
            marked.append("must")  # "the battery must become full": said to happen
        if words and words[0] in lx.STATIVE:
            marked.append("be")
        elif lx.RETURNING & set(words):
            marked.append("again")
        marked.append(name)
        i = max(end, i + 1)
    plain = " ".join(w for w in out if w not in lx.PUNCTUATION)
    text = re.sub(r"\b(?:go|come) (?:to|and) (?=P\d)", "", plain)
    return Lifted(text, tuple(phrases), tuple(marked))


def _soft(read: Callable[[int], _T | None], i: int) -> _T | None:
    try:
        return read(i)
    except NoSuchPredicate:
        return None


def ground_phrase(phrase: str, domain: Domain) -> Formula | None:
    """The grounding of one referring expression when the rules recognise all of it."""
    lifted = lift(phrase, domain)
    if len(lifted.phrases) != 1:
        return None
    rest = lifted.text.replace(lifted.phrases[0].placeholder, "").split()
    return lifted.phrases[0].formula if set(rest) <= {"you", "have", "holds"} else None
