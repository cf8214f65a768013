"""Offline grounding: referring expressions found by rule, grounded to the domain's propositions,
and replaced by placeholders ``P1``, ``P2``, ... (one per distinct grounding) to lift a sentence.

A referring expression names one checkable fact. Actions are grounded to the state they leave:
``open X`` -> ``is_open(X)``, ``close X`` -> ``!is_open(X)``, ``pick up``/``grab X`` ->
``is_grabbed(X)``, ``put X in Y`` -> ``is_in(X, Y)``, ``put X on Y`` -> ``is_on(X, Y) |
is_in(X, Y)`` (putting into a surface makes ``is_in``), ``turn on X`` -> ``is_switchedon(X)``;
going to, entering, visiting, sitting on or walking past X, and a bare room, -> ``agent_at(X)``.
A described state (``the microwave is open``) lifts to ``P1 holds``, a passive visit
(``kitchen is visited``) to ``you have P1``. ``it`` is the object named last.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from governor.errors import SpecError
from governor.ltl import lexicon as lx
from governor.ltl.cues import CUE_WORDS
from governor.ltl.domain import Domain
from governor.ltl.mentions import PropMatcher
from governor.ltl.operators import Not, Or
from governor.ltl.parser import atom
from governor.ltl.syntax import Formula

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


class _Scanner:
    """Reads one sentence left to right, grounding what it recognises."""

    def __init__(self, toks: list[str], domain: Domain) -> None:
        self.toks, self.domain = toks, domain
        self.last: str | None = None  # the object named last, for "it"

    def at(self, i: int) -> str:
        return self.toks[i] if 0 <= i < len(self.toks) else ""

    def obj(self, i: int) -> tuple[str | None, int]:
        """The object named at ``i`` (after determiners) and the index after it."""
        while self.at(i) in lx.DETERMINERS:
            i += 1
        if self.at(i) in lx.PRONOUNS:
            return (self.last, i + 1) if self.last else (None, i)
        for n in (3, 2, 1):
            if i + n <= len(self.toks):
                found = self.domain.resolve("".join(self.toks[i : i + n]))
                if found is not None:
                    self.last = found
                    return found, i + n
        return None, i

    def need(self, i: int, start: int) -> tuple[str, int]:
        """The object at ``i``, or an error when a content word there names none."""
        found, j = self.obj(i)
        if found is None:
            word = self.at(j)
            phrase = " ".join(self.toks[start : j + 1])
            if word in lx.PRONOUNS:
                raise SpecError(f"cannot ground {phrase!r}: {word!r} refers to nothing before it")
            raise self.domain.unknown_object(word or "the end of the sentence", phrase)
        return found, j

    def content(self, i: int) -> bool:
        """Whether a noun may start at ``i``: an object, a pronoun or an unknown content word."""
        while self.at(i) in lx.DETERMINERS:
            i += 1
        word = self.at(i)
        if word in lx.PRONOUNS:
            return True
        return (
            bool(word) and word not in lx.FUNCTION and word not in lx.VERBS and not word.isdigit()
        )

    def prop(self, predicate: str, *args: str) -> Formula:
        label = f"{predicate}({', '.join(args)})"
        if label not in self.domain.known:
            if not any(p.startswith(predicate + "(") for p in self.domain.known):
                raise _NoSuchPredicate(label)
            raise self.domain.unknown_proposition(label)
        return atom(label)

    def place(self, obj: str) -> Formula:
        label = self.domain.location(obj)
        if label is None:
            raise self.domain.unknown_proposition(f"agent_at({obj})")
        return atom(label)

    def onto(self, x: str, y: str) -> Formula:
        known = [f"{p}({x}, {y})" for p in ("is_on", "is_in")]
        found = [atom(k) for k in known if k in self.domain.known]
        if not found:
            raise self.domain.unknown_proposition(known[0])
        return found[0] if len(found) == 1 else Or(tuple(found))

    def action(self, i: int) -> tuple[int, Formula] | None:
        """An action phrase at ``i``: open, close, grab, pick up, switch on/off, put."""
        w, nxt = self.at(i), self.at(i + 1)
        needs = [p for words, p in _ACTION_PREDICATES if w in words]
        if needs and not any(p.startswith(needs[0]) for p in self.domain.known):
            # a domain without this kind of action: "take the lift" names a place, "pick a
            # route" no object; "pick up the chicken" still names a missing proposition
            target, _ = self.obj(i + 1 + (nxt in ("up", "on", "off")))
            if (target and self.domain.location(target)) or (w in lx.PICK and nxt != "up"):
                return None
        if w in lx.PICK and nxt == "up":
            x, j = self.need(i + 2, i)
            return j, self.prop("is_grabbed", x)
        if w in lx.PICK and self.content(i + 1):
            x, j = self.need(i + 1, i)
            return (j + 1, self.prop("is_grabbed", x)) if self.at(j) == "up" else None
        if w in lx.SWITCH and nxt in ("on", "off"):
            x, j = self.need(i + 2, i)
            f = self.prop("is_switchedon", x)
            return j, f if nxt == "on" else Not(f)
        if w in lx.SWITCH and self.content(i + 1):
            x, j = self.need(i + 1, i)
            if self.at(j) not in ("on", "off"):
                return None
            f = self.prop("is_switchedon", x)
            return j + 1, f if self.at(j) == "on" else Not(f)
        if w in lx.GRAB | lx.OPEN | lx.CLOSE | lx.PUT and self.content(i + 1):
            x, j = self.need(i + 1, i)
            if w in lx.GRAB:
                return j, self.prop("is_grabbed", x)
            if w in lx.OPEN | lx.CLOSE:
                f = self.prop("is_open", x)
                return j + (self.at(j) == "up"), f if w in lx.OPEN else Not(f)
            prep = self.at(j)
            if prep not in lx.IN | lx.ON:
                return None
            y, k = self.need(j + 1, i)
            return k, self.prop("is_in", x, y) if prep in lx.IN else self.onto(x, y)
        return None

    def motion(self, i: int) -> tuple[int, Formula] | None:
        """Going to, entering, visiting, ... a place."""
        if self.at(i) not in lx.MOTION:
            return None
        j = i + 1
        while self.at(j) in lx.PARTICLES:
            j += 1
        if not self.content(j):
            return None
        if j == i + 1 and self.at(j) not in lx.DETERMINERS and self.obj(j)[0] is None:
            return None  # "be away from": no particle, no object; not a place phrase
        found, after = self.obj(j)
        if found is None and (self.at(after) in CUE_WORDS or self.at(i) in lx.STATIVE):
            return None  # "visited at most twice", "be on time": no place named
        x, k = self.need(j, i)
        return k, self.place(x)

    def state(self, i: int) -> tuple[int, Formula, str] | None:
        """A described state at ``i``: ``the fridge is open``, ``salmon is in the fridge``."""
        x, j = self.obj(i)
        if x is None or self.at(j) not in ("is", "are", "was", "has"):
            return None
        k = j + 1 + (self.at(j + 1) == "been")
        neg = self.at(k) == "not"
        k += neg
        w = self.at(k)
        f: Formula
        if w in ("visited", "entered", "reached") and not neg:
            return k + 1, self.place(x), "you have {}"
        if w in ("open", "opened", "closed", "shut"):
            f = self.prop("is_open", x)
            f = f if w in ("open", "opened") else Not(f)
        elif w in lx.IN and self.content(k + 1):
            y, end = self.need(k + 1, i)
            return end, _sign(self.prop("is_in", x, y), neg), "{} holds"
        elif w in lx.ON and self.content(k + 1):
            y, end = self.need(k + 1, i)
            return end, _sign(self.onto(x, y), neg), "{} holds"
        elif w in ("on", "off"):
            f = self.prop("is_switchedon", x)
            f = f if w == "on" else Not(f)
        elif w in ("held", "grabbed"):
            f = self.prop("is_grabbed", x)
        else:
            return None
        return k + 1, _sign(f, neg), "{} holds"

    def bare(self, i: int) -> tuple[int, Formula] | None:
        """A room, or a place after a cue such as ``before`` or ``avoid``."""
        if self.at(i) in lx.PRONOUNS:
            return None
        x, j = self.obj(i)
        if x is None:
            return None
        label = self.domain.location(x)
        if label is None or not (label in self.domain.rooms or self.at(i - 1) in lx.PLACE_CUES):
            return None
        return j, atom(label)


_ACTION_PREDICATES = (
    (lx.PICK | lx.GRAB, "is_grabbed("),
    (lx.OPEN | lx.CLOSE, "is_open("),
    (lx.SWITCH, "is_switchedon("),
    (lx.PUT, "is_"),
)


class _NoSuchPredicate(SpecError):
    """An action or state whose predicate the domain has none of (``take`` in a domain of
    places): the words are not a phrase of this domain, and another reading is tried."""


def _sign(f: Formula, neg: bool) -> Formula:
    return Not(f) if neg else f


def lift(sentence: str, domain: Domain) -> Lifted:
    """The sentence lifted: normalised words, each referring expression replaced by its
    placeholder. Raises :class:`SpecError` for a phrase naming an unknown object or proposition."""
    toks = lx.tokens(sentence)
    scan = _Scanner(toks, domain)
    bare = [p for p in domain.propositions if "(" not in p and p not in domain.rooms]
    mentions = PropMatcher(bare) if bare else None
    out: list[str] = []
    marked: list[str] = []
    phrases: list[Phrase] = []
    names: dict[Formula, str] = {}
    i = 0
    while i < len(toks):
        found = mentions.match(toks, i) if mentions else None
        found = found or _soft(scan.action, i) or scan.motion(i)
        shape = "{}"
        if found is None and (st := _soft(scan.state, i)) is not None:
            found, shape = st[:2], st[2]
        found = found or scan.bare(i)
        if found is None:
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
    except _NoSuchPredicate:
        return None


def ground_phrase(phrase: str, domain: Domain) -> Formula | None:
    """The grounding of one referring expression when the rules recognise all of it."""
    lifted = lift(phrase, domain)
    if len(lifted.phrases) != 1:
        return None
    rest = lifted.text.replace(lifted.phrases[0].placeholder, "").split()
    return lifted.phrases[0].formula if set(rest) <= {"you", "have", "holds"} else None
