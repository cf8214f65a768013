"""Readings: what the clause grammar understood a sentence to mean, and the named choices made.

A :class:`Reading` is a pattern family of :data:`governor.ltl.patterns.PATTERNS` over
placeholders (``P1``, ``P2``), with a count where the family takes one, and the notes that name
every choice between two readings ("strong until", "a visit is entering", ...). A :class:`Parse`
is the default reading first and the other readings a genuinely ambiguous sentence has.

Conventions: :data:`SAFETY_CHIP` (the default) and :data:`LANG2LTL` differ only in future
avoidance: the Safety Chip ships ``G(a -> G !b)``, Lang2LTL writes ``G(a -> X G !b)``; they agree
whenever ``a`` and ``b`` cannot hold together (two places). Both read past avoidance with the
strong until ``!a U b``.

World-free: imports the LTL syntax, operators and patterns.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from governor.errors import SpecError, expected
from governor.ltl import operators as op
from governor.ltl import patterns as pt
from governor.ltl import syntax as s

SAFETY_CHIP, LANG2LTL = "safety_chip", "lang2ltl"
DRONE_COMMANDS = "drone_commands"
CONVENTIONS = (SAFETY_CHIP, LANG2LTL, DRONE_COMMANDS)
"""The named conventions; the first is the default. :data:`DRONE_COMMANDS` reads short
navigation commands only, by the shapes of :mod:`governor.ltl.english.grammar.commands`."""

STRONG = (
    "strong until: the awaited place or event must eventually happen (the authors' past avoidance)"
)
WEAK = "weak until: the awaited place or event need not happen (precedence)"
FUTURE = {
    SAFETY_CHIP: "b is forbidden from the step a happens on: G(a -> G !b), the Safety Chip's form"
    " (Lang2LTL's G(a -> X G !b) starts at the next step; the same when a and b exclude each other)",
    LANG2LTL: "b is forbidden from the step after a: G(a -> X G !b), Lang2LTL's form (the Safety"
    " Chip's G(a -> G !b) includes a's step; the same when a and b exclude each other)",
}
VISIT = "a visit is entering: an unbroken stay counts once"
BEFORE_AVOID = (
    "'before' as avoidance: the second is not entered before the first, which must happen"
)
BEFORE_ORDER = "'before' as an ordered visit: both must be visited, the first one first"
ONLY_AFTER_ORDER = (
    "'you must go to B only after A' as an ordered visit: B is a task, A must come first"
)
AFTER_REACT = "'after' as a reaction: each time the first happens, the second must follow; the first is not required"
AFTER_SEQ = "'after' as a sequence: the first must be visited, and the second after it"
AFTER_PERF = (
    "ambiguous: 'after you have been to A' presupposes the visit (a sequence); each visit"
    " followed (the reaction) is the alternative"
)
ORDER_STRICT = (
    "'in this order' as an ordered visit: none is visited before the one listed ahead of it"
)
ORDER_LOOSE = "'in this order' as a sequenced visit: early extra visits are allowed"
THEN_LOOSE = "sequenced: a later place may also be visited early"
COUNT_EXACT = "a bare count is exact"
COUNT_LEAST = "a bare count is a minimum"
NEXT_STRONG = "at the next step: that step must exist (strong X)"
WITHIN = "then or within the next n steps, which must exist (nested strong X)"
THEN_OR_LATER = "then or later: the same step counts"
SAME_STEP = "at the same step"
PATROL = "on a finite trace: after every step each place is visited again (G F)"
PERMISSION = "a clause that only allows something adds no constraint"
PERMISSION_LOOSE = "'in this order' with extra visits allowed: a sequenced visit"
PAST_EVENT = (
    "a past-tense action is the event of it happening (it holds now and did not at the step "
    "before, Y), not a state that may already hold at the start"
)


NEXT_WEAK = "not at the next step: no next step is needed (weak X)"
ONCE_BEFORE = "entered once before the next: not re-entered before it (the authors' strict pair)"


def single_visit(a: s.Formula, b: s.Formula) -> s.Formula:
    """``a`` not entered a second time before ``b``: ``!a U (a U (!a U b))``, the pair clause of
    the authors' strictly ordered visit."""
    return op.Until(op.Not(a), op.Until(a, op.Until(op.Not(a), b)))


def prompt_avoidance(a: s.Formula, b: s.Formula) -> s.Formula:
    """Whenever ``a``, not ``b`` at the next step (if there is one): ``G(a -> WX !b)``."""
    return op.Always(op.Implies(a, op.WeakNext(op.Not(b))))


CLAUSE_PATTERNS: dict[str, Callable[..., s.Formula]] = {
    "single_visit": single_visit,
    "prompt_avoid": prompt_avoidance,
}
"""Clause readings that are part of a family rather than one (conjoined with other clauses)."""


@dataclass(frozen=True)
class Reading:
    """A family over placeholders, its count, and the named choices it makes."""

    family: str
    args: tuple[str, ...]
    n: int | None = None
    notes: tuple[str, ...] = ()
    negated: tuple[str, ...] = ()  # args read negated (``instant_react(a, !b)``)

    def formula(self, convention: str = SAFETY_CHIP) -> s.Formula:
        """The lifted formula over atoms named by the placeholders."""
        xs: list[s.Formula] = [
            op.Not(s.Atom(a)) if a in self.negated else s.Atom(a) for a in self.args
        ]
        if self.family == "future_avoid" and convention == LANG2LTL:
            return pt.future_avoidance_next(*xs)
        build = CLAUSE_PATTERNS.get(self.family) or pt.PATTERNS[self.family]
        return build(*xs, self.n) if self.n is not None else build(*xs)

    def with_notes(self, *notes: str) -> Reading:
        return Reading(self.family, self.args, self.n, (*self.notes, *notes), self.negated)


@dataclass(frozen=True)
class Parse:
    """The default reading, then any other the sentence allows."""

    reading: Reading
    alternatives: tuple[Reading, ...] = ()

    @property
    def ambiguous(self) -> bool:
        return bool(self.alternatives)


def check_convention(name: str) -> str:
    if name not in CONVENTIONS:
        raise SpecError(f"convention: {expected(' or '.join(CONVENTIONS), name)}")
    return name


def family_notes(family: str, convention: str = SAFETY_CHIP) -> tuple[str, ...]:
    """The choices every reading of ``family`` makes."""
    notes = {
        "past_avoid": (STRONG,),
        "precedence": (WEAK,),
        "wait": (STRONG,),
        "future_avoid": (FUTURE.get(convention, FUTURE[SAFETY_CHIP]),),
        "upper_rest_avoid": (VISIT,),
        "lower_rest_avoid": (VISIT,),
        "exact_rest_avoid": (VISIT,),
        "prompt_react": (NEXT_STRONG,),
        "prompt_avoid": (NEXT_WEAK,),
        "single_visit": (ONCE_BEFORE, VISIT),
        "bound_delay": (NEXT_STRONG,),
        "bounded_react": (WITHIN,),
        "delay_react": (THEN_OR_LATER,),
        "instant_react": (SAME_STEP,),
        "sequenced_visit": (THEN_LOOSE,),
        "strictly_ordered_visit": (VISIT,),
        "patrolling": (PATROL,),
    }
    return notes.get(family, ())


def reading_text(english: str, notes: tuple[str, ...], convention: str = SAFETY_CHIP) -> str:
    """The back-translation with its named choices: ``... (reading: a; b)`` (the future
    avoidance named by ``convention``)."""
    swap = {FUTURE[SAFETY_CHIP]: FUTURE.get(convention, FUTURE[SAFETY_CHIP])}
    unique = tuple(dict.fromkeys(swap.get(n, n) for n in notes))
    return f"{english} (reading: {'; '.join(unique)})" if unique else english
