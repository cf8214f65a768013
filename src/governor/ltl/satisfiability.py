"""Finite-trace satisfiability over an explicit alphabet, by breadth-first search over progressed
states (the automaton of the formula, built on the fly).

An alphabet is the list of label sets a state may have, e.g. ``one_hot(rooms)`` when the agent is
in exactly one room. Domain rules such as "exactly one room at a time" can instead be given as
formulas (``exactly_one(rooms)``) and conjoined with the constraints.
"""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

from governor.errors import SpecError
from governor.ltl import operators as op
from governor.ltl import syntax as s
from governor.ltl.parser import atom
from governor.ltl.progression import FALSE, accepts_empty, progress
from governor.ltl.simplify import conj, neg

Alphabet = Iterable[AbstractSet[str]]


@dataclass(frozen=True)
class SearchResult:
    """What a search found: a shortest satisfying trace, or none.

    ``exhaustive`` is true when every reachable state was explored, so ``trace is None`` means
    that no trace of any length satisfies the formula (not just none up to ``max_depth``).
    """

    trace: list[frozenset[str]] | None
    exhaustive: bool
    states: int


def letters(alphabet: Alphabet) -> list[frozenset[str]]:
    """The alphabet as a list of distinct frozensets, in the given order."""
    out: dict[frozenset[str], None] = {}
    for letter in alphabet:
        if isinstance(letter, str):
            raise SpecError(f"alphabet: expected label sets, found the str {letter!r}")
        out[frozenset(letter)] = None
    if not out:
        raise SpecError("alphabet: expected at least one label set, found none")
    return list(out)


def search(
    formula: s.Formula, alphabet: Alphabet, max_depth: int = 32, max_states: int = 100_000
) -> SearchResult:
    """Breadth-first search for a shortest non-empty trace over ``alphabet`` satisfying it."""
    alpha = letters(alphabet)
    parent: dict[s.Formula, tuple[s.Formula, frozenset[str]] | None] = {formula: None}
    frontier: deque[tuple[s.Formula, int]] = deque([(formula, 0)])
    exhaustive = True
    while frontier:
        state, depth = frontier.popleft()
        if depth >= max_depth or len(parent) >= max_states:
            exhaustive = False
            continue
        for letter in alpha:
            nxt = progress(state, letter)
            if nxt == FALSE:
                continue
            if accepts_empty(nxt):  # before the seen-check: a state may lead back to itself
                return SearchResult([*_path(parent, state), letter], True, len(parent))
            if nxt in parent:
                continue
            parent[nxt] = (state, letter)
            frontier.append((nxt, depth + 1))
    return SearchResult(None, exhaustive, len(parent))


def _path(
    parent: Mapping[s.Formula, tuple[s.Formula, frozenset[str]] | None], end: s.Formula
) -> list[frozenset[str]]:
    out: list[frozenset[str]] = []
    link = parent[end]
    while link is not None:
        state, letter = link
        out.append(letter)
        link = parent[state]
    out.reverse()
    return out


def find_trace(
    formula: s.Formula, alphabet: Alphabet, max_depth: int = 32
) -> list[frozenset[str]] | None:
    """A shortest trace over ``alphabet`` satisfying ``formula``; None if none of at most
    ``max_depth`` positions exists."""
    return search(formula, alphabet, max_depth).trace


def counterexample(
    formula: s.Formula, alphabet: Alphabet, max_depth: int = 32
) -> list[frozenset[str]] | None:
    """A shortest trace over ``alphabet`` violating ``formula`` (to show a person what it forbids)."""
    return find_trace(neg(formula), alphabet, max_depth)


def jointly_satisfiable(
    formulas: Iterable[s.Formula],
    alphabet: Alphabet,
    rules: Iterable[s.Formula] = (),
    max_depth: int = 32,
) -> bool:
    """Whether one trace over ``alphabet`` satisfies every formula and every domain rule."""
    return satisfiable(conj(*formulas, *rules), alphabet, max_depth)


def satisfiable(formula: s.Formula, alphabet: Alphabet, max_depth: int = 32) -> bool:
    """Whether some continuation over ``alphabet``, the empty one included, satisfies ``formula``.

    A search cut off by ``max_depth`` or its state budget counts as yes: a contradiction is reported
    only when it is proven, so nothing is aborted on an unfinished search.
    """
    if accepts_empty(formula):
        return True
    found = search(formula, alphabet, max_depth)
    return found.trace is not None or not found.exhaustive


def minimal_conflict(
    named: Mapping[str, s.Formula] | Sequence[tuple[str, s.Formula]],
    alphabet: Alphabet,
    rules: Iterable[s.Formula] = (),
    max_depth: int = 32,
) -> tuple[str, ...]:
    """The names of a smallest-by-deletion set of formulas that cannot hold together (with the
    rules); ``()`` when all of them can."""
    items = list(named.items()) if isinstance(named, Mapping) else list(named)
    alpha, fixed = letters(alphabet), list(rules)
    if jointly_satisfiable([f for _, f in items], alpha, fixed, max_depth):
        return ()
    keep = list(items)
    for item in items:
        trial = [x for x in keep if x is not item]
        if not jointly_satisfiable([f for _, f in trial], alpha, fixed, max_depth):
            keep = trial
    return tuple(name for name, _ in keep)


def _atoms(props: Iterable[str | s.Formula]) -> list[s.Formula]:
    out = [atom(p) if isinstance(p, str) else p for p in props]
    if not out:
        raise SpecError("expected at least one atom, found none")
    return out


def at_most_one(props: Iterable[str | s.Formula]) -> s.Formula:
    """``G`` (no two of the atoms hold at once)."""
    xs = _atoms(props)
    pairs = [op.Not(op.And((a, b))) for a, b in itertools.combinations(xs, 2)]
    return op.Always(conj(*pairs)) if pairs else s.TRUE


def exactly_one(props: Iterable[str | s.Formula]) -> s.Formula:
    """``G`` (exactly one of the atoms holds), e.g. the agent is in exactly one room."""
    xs = _atoms(props)
    if len(xs) == 1:
        return op.Always(xs[0])
    cases = [op.And((x, *(op.Not(y) for y in xs if y is not x))) for x in xs]
    return op.Always(op.Or(tuple(cases)))


def powerset(props: Iterable[str]) -> list[frozenset[str]]:
    """Every label set over ``props`` (2**n of them; n at most 16)."""
    xs = sorted(dict.fromkeys(atom(p).label for p in props))
    if len(xs) > 16:
        raise SpecError(f"powerset: expected at most 16 propositions, found {len(xs)}")
    return [frozenset(c) for r in range(len(xs) + 1) for c in itertools.combinations(xs, r)]


def one_hot(props: Iterable[str], extra: Iterable[str] = ()) -> list[frozenset[str]]:
    """Label sets with exactly one of ``props`` (rooms), times every subset of ``extra``."""
    xs = [atom(p).label for p in props]
    rest = powerset(extra) if extra else [frozenset()]
    return [frozenset({x}) | r for x in xs for r in rest]
