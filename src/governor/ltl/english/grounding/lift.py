"""Offline grounding: referring expressions found by rule, grounded to the domain's propositions,
and replaced by placeholders ``P1``, ``P2``, ... (one per distinct grounding) to lift a sentence.

A referring expression names one checkable fact: going to, entering, visiting, sitting on or
walking past X, and a bare room, -> ``agent_at(X)``; a passive visit (``kitchen is visited``)
lifts to ``you have P1``. A world's actions and described states come from the phrase table its
domain carries (:mod:`governor.ltl.english.grounding.world_phrases`; the household's grounds an
action to the state it leaves, ``close X`` -> ``!is_open(X)``, and lifts a described state,
``the microwave is open``, to ``P1 holds``). ``it`` is the object named last; after a bare
proposition, "it is not green" / "it does not ring" is that proposition negated. The words are
read by :mod:`governor.ltl.english.grounding.scanner` (objects, places) and the domain's phrase
table (actions, states); a bare proposition by :mod:`governor.ltl.english.grounding.mentions`
(its own words) or else by :mod:`governor.ltl.english.grounding.events` (an event phrase in
other words: "an order comes in" for ``order_received``; a negation said of it stays a word,
"not", before its placeholder).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from governor.ltl.domain import Domain
from governor.ltl.english import lexicon as lx
from governor.ltl.english.grounding import event_words as ew
from governor.ltl.english.grounding.asides import without_asides
from governor.ltl.english.grounding.errands import errands
from governor.ltl.english.grounding.event_refs import continued, described, elided
from governor.ltl.english.grounding.events import PRONOUNS, EventMatcher
from governor.ltl.english.grounding.mentions import PropMatcher
from governor.ltl.english.grounding.scanner import NoSuchPredicate, Scanner
from governor.ltl.english.grounding.world_phrases import phrases_of
from governor.ltl.operators import Not
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
    toks = errands(without_asides(lx.tokens(sentence)), domain)
    scan = Scanner(toks, domain)
    table = phrases_of(domain)
    bare = [p for p in domain.propositions if "(" not in p and p not in domain.rooms]
    mentions = PropMatcher(bare) if bare else None
    events = EventMatcher(bare)
    out: list[str] = []
    marked: list[str] = []
    phrases: list[Phrase] = []
    names: dict[Formula, str] = {}
    said: list[str] = []  # the bare propositions mentioned, last first ("it" in "it is not green")
    i = ended = 0
    while i < len(toks):
        last = said[0] if said else None
        found = (mentions.match(toks, i) or mentions.pronoun(toks, i, last)) if mentions else None
        relative = said and i == ended and lx.RELATIVE & set(phrases[-1].text.split())
        event = continued(events, toks, i, said[0]) if found is None and relative else None
        if event is not None:  # "every order that is placed | must be shipped": a condition
            _condition(out, marked, phrases[-1].placeholder)
        if found is None and said and event is None:  # "..., and closed whenever ...": the
            event = elided(events, toks, i, said)  # subject said before
        if found is None and event is None and bare:  # "it": a proposition said, or described
            refs = said + described(events, toks, i) if toks[i] in PRONOUNS else said
            event = events.match(toks, i, refs)
            if (
                event is not None
                and "never" in toks[i : event.end]
                and not _conditioned(toks, event.end)
            ):
                event = None  # "it must never be shipped": a time, not only a negation
        if event is not None:
            found = (event.end, event.formula)
        if found is not None:
            g = found[1].arg if isinstance(found[1], Not) else found[1]
            if isinstance(g, Atom):
                said.insert(0, g.name)
        event_like = found is not None  # a proposition said: no place phrase's "back"
        if found is None and table is not None:
            found = _soft(lambda k: table.action(scan, k), i)
        found = found or scan.motion(i)
        shape = "{}"
        if found is None and table is not None:
            st = _soft(lambda k: table.state(scan, k), i)
            if st is not None:
                found, shape = st[:2], st[2]
        found = found or scan.bare(i)
        if found is None:
            scan.indefinite(i)
            out.append(toks[i])
            marked.append(toks[i])
            i += 1
            continue
        end, formula = found
        if event_like and isinstance(formula, Not):  # "it does not open", "the button is
            formula = formula.arg  # not pressed": the negation said, before the placeholder
            said_not = "never" if "never" in toks[i:end] else "not"  # "is never on"
            out.append(said_not)
            marked.append(said_not)
        name = names.setdefault(formula, f"P{len(names) + 1}")
        words = toks[i:end]
        phrases.append(Phrase(" ".join(words), name, formula))
        out.append(shape.format(name))
        obliged = re.search(  # "has to come", "is going to arrive"
            r"\b(?:has|have|had) to\b|\b(?:is|are) going to\b", " ".join(words)
        )
        if {"has", "have", "had"} & set(words) and not obliged:
            marked.append("have")
        if lx.MODALS & set(words) or obliged:
            marked.append("must")  # "the battery must become full": said to happen
        if words and words[0] in lx.STATIVE:
            marked.append("be")
        elif lx.RETURNING & set(words) - set(re.split(r"[\W_]+", str(formula))) and not event_like:
            marked.append("again")
        marked.append(name)
        kept = [w for w in words if w in ew.CARRIED]  # "it must eventually be reset"
        out += kept
        marked += kept
        i = ended = max(end, i + 1)
    plain = " ".join(w for w in out if w not in lx.PUNCTUATION)
    text = re.sub(r"\b(?:go|come) (?:to|and) (?=P\d)", "", plain)
    return Lifted(text, tuple(phrases), tuple(marked))


def _conditioned(toks: Sequence[str], end: int) -> bool:
    """Whether a state's condition or a time from then on follows at ``end`` ("the light is
    never on | while ...", "the door must never be unlocked | from that point on", "the pump
    must never run | again")."""
    return toks[end : end + 1] in (["while"], ["whenever"], ["when"], ["from"], ["ever"], ["again"])


def _condition(out: list[str], marked: list[str], name: str) -> None:
    """The subject with a relative clause ("any request that is made") read as a condition:
    ``whenever P1 ,`` before its predicate."""
    for words in (out, marked):
        k = len(words) - 1 - words[::-1].index(name)
        q = k - 1 if k and words[k - 1] in ew.QUANTIFIERS else k  # "every order that ..."
        words[q : k + 1] = ["whenever", name, ","]


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
