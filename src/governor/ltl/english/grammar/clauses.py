"""The clause grammar: the cue symbols of a lifted sentence (:mod:`governor.ltl.english.grammar.normaliser`) to a
:class:`~governor.ltl.english.grammar.readings.Parse` of one pattern family, or a conjunction of clauses.

The sentence-level passes of :mod:`governor.ltl.english.grammar.sentence.passes` run first (anaphora, list references,
permissions). Each clause is cleaned (:mod:`governor.ltl.english.grammar.clause.clean`) and matched against the
clause templates, tried in order of priority: iff and wait (:mod:`governor.ltl.english.grammar.clause.reactions`),
counts and plain lists (:mod:`governor.ltl.english.grammar.clause.visits`), avoidance, strict pairs and past
avoidance (:mod:`governor.ltl.english.grammar.clause.avoid`), "only while", future avoidance and reactions, then
"A before B" and sequences. A clause with "at the next step" or "within n steps" is read only
by the rules that read those. A sentence no template reads whole is cut at clause boundaries
(". ", "but", ",", "and"; at most :data:`MAX_SPLITS` of them) into as few clauses as can be read,
and read as their conjunction.

Imports the readings, the sentence passes and the clause modules.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from governor.ltl.english.grammar import readings as rd
from governor.ltl.english.grammar.clause import avoid as clause_avoid
from governor.ltl.english.grammar.clause import reactions as clause_reactions
from governor.ltl.english.grammar.clause import visits as clause_lists
from governor.ltl.english.grammar.clause.clean import Clause, clean
from governor.ltl.english.grammar.clause.kit import rules
from governor.ltl.english.grammar.readings import Parse
from governor.ltl.english.grammar.sentence.passes import prepare

__all__ = ["MAX_SPLITS", "Clause", "clean", "read", "read_clause"]

MAX_SPLITS = 16
"""Most clause boundaries tried when a sentence is read as a conjunction."""
_TIMED = (clause_reactions.iff, clause_reactions.conditional)
"""The rules that read "at the next step", "within n steps" and "and only then"; no other reads a
clause with them."""
_RULES = rules()
assert clause_avoid and clause_lists  # their rules are registered on import


def read_clause(c: Clause) -> Parse | None:
    """The first template reading of a cleaned clause."""
    timed = "NEXT" in c.flags or c.within is not None or "OTHERWISE" in c.flags
    for regex, fn in _RULES:
        if timed and fn not in _TIMED:
            continue
        m = regex.fullmatch(c.iff_text if fn is clause_reactions.iff else c.text)
        if m is not None and (found := fn(m, c)) is not None:
            if "STRICT" in c.flags and found.reading.family == "visit":
                return None  # "it has to be strictly ordered": no bare visit
            return found
    return None


def read(
    symbols: list[str], places: Iterable[str], props: Iterable[str] = ()
) -> list[Parse] | None:
    """The clauses of a sentence: one parse, or a conjunction of as few clauses as can be read
    (cut at clause boundaries, at most :data:`MAX_SPLITS` of them); None when nothing reads it."""
    places, props = frozenset(places), frozenset(props)
    symbols, permitted = prepare(symbols, places, props)
    while symbols and symbols[-1] in ("STOP", "COMMA"):
        symbols = symbols[:-1]
    cuts = [i for i, s in enumerate(symbols) if s in ("STOP", "BUT", "COMMA", "AND")]
    bounds = [-1, *cuts[:MAX_SPLITS], len(symbols)]
    best: list[list[Parse] | None] = [[]] + [None] * (len(bounds) - 1)
    for j in range(1, len(bounds)):
        for i in range(j):
            done = best[i]
            segment = symbols[bounds[i] + 1 : bounds[j]]
            if done is None or not segment or _negation_after_stop(segment):
                continue
            found = read_clause(clean(segment, places, props))
            if found is not None:
                if best[j] is None or len(done) + 1 < len(best[j] or []):
                    best[j] = [*done, found]
                break
    parses = _restated_order(best[-1]) if best[-1] else None
    return [_relax(p) for p in parses] if parses and permitted else parses


_P = re.compile(r"P\d+")
_REFERS = frozenset({"ANY", "REF", "IT", "WHICH", "AHEAD", "BETWEEN"})


def _negation_after_stop(segment: list[str]) -> bool:
    """Whether a sentence inside the segment is a bare negation that names nothing ("Go to A,
    then B. Never go back." is no "B, never": the return's place is unsaid; "Keep returning to
    A; there's no point after which you can forget it" is no "never A")."""
    k = segment.index("STOP") + 1 if "STOP" in segment[:-1] else len(segment)
    rest = segment[k:]
    named = any(_P.fullmatch(x) for x in rest) or _REFERS & set(rest)  # "never go to them"
    return bool(rest) and rest[0] == "NOT" and not named


def _restated_order(parses: list[Parse]) -> list[Parse]:
    """ "Visit B, but only after A; B is out of bounds before that": the avoidance said again on
    its own leaves the first clause its task, the ordered visit it offered."""
    out = list(parses)
    for i, p in enumerate(parses):
        order = [a for a in p.alternatives if rd.ONLY_AFTER_ORDER in a.notes]
        if not order or p.reading.family != "past_avoid":
            continue
        same = (p.reading.family, p.reading.args)
        if any((q.reading.family, q.reading.args) == same for j, q in enumerate(parses) if j != i):
            others = tuple(a for a in p.alternatives if a is not order[0])
            out[i] = Parse(order[0], (p.reading, *others))
    return out


def _relax(p: Parse) -> Parse:
    """A parse next to a permission: "in this order" read loosely, and the permission noted."""
    for alt in p.alternatives:
        if rd.ORDER_LOOSE in alt.notes:
            others = tuple(a for a in p.alternatives if a is not alt)
            return Parse(alt.with_notes(rd.PERMISSION_LOOSE), (p.reading, *others))
    return Parse(p.reading.with_notes(rd.PERMISSION), p.alternatives)
