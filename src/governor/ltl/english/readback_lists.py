"""English readings of the pattern families over several places, and of the bounded reaction:
visit, sequenced, ordered and strictly ordered visits, patrolling, avoidance of several places,
``bounded_react`` and Lang2LTL's future avoidance.

A formula is recognised by rebuilding it: its literals, in order of first appearance (and their
orders, for up to :data:`MAX_PERMUTED` of them), are given to each constructor of
:mod:`governor.ltl.patterns`, and the first that builds the same formula names it. The clause
phrasing comes from :mod:`governor.ltl.english.readback`, which passes its literal reader in (so this
module does not import it).

World-free: imports the LTL syntax, operators and patterns.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

from governor.ltl import patterns as pt
from governor.ltl import syntax as s

MAX_PERMUTED = 4
MAX_STEPS = 12
Literal = Callable[[s.Formula], tuple[str, str] | None]
State = Callable[[s.Formula], str]


def literals(f: s.Formula) -> list[s.Formula]:
    """The atoms of ``f`` in order of first appearance (pre-order)."""
    out: dict[s.Formula, None] = {}
    stack = [f]
    while stack:
        g = stack.pop()
        if isinstance(g, s.Atom):
            out.setdefault(g, None)
        else:
            stack.extend(reversed(list(g.children())))
    return list(out)


def _join(items: list[str], last: str = "and") -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} {last} {items[-1]}"


_LISTS = (
    ("sequenced_visit", pt.sequenced_visit),
    ("ordered_visit", pt.ordered_visit),
    ("strictly_ordered_visit", pt.strictly_ordered_visit),
    ("patrolling", pt.patrolling),
    ("visit", pt.visit),
    ("global_avoid", pt.global_avoidance),
)


def listed(f: s.Formula, literal: Literal, state: State) -> tuple[str, str] | None:
    """The family and English reading of ``f`` when it is one of this module's patterns."""
    atoms = literals(f)
    if not atoms or len(atoms) > 8 or any(literal(a) is None for a in atoms):
        return None
    orders = itertools.permutations(atoms) if len(atoms) <= MAX_PERMUTED else [tuple(atoms)]
    for order in orders:
        for name, build in _LISTS:
            if (len(order) > 1 or name in ("patrolling",)) and build(*order) == f:
                return name, _read(name, [literal(a) for a in order])  # type: ignore[misc]
    if len(atoms) == 2:
        for a, b in itertools.permutations(atoms):
            if pt.future_avoidance_next(a, b) == f:
                return "future_avoid", (
                    f"once {state(a)}, from the next step on {_never(literal(b))}"  # type: ignore[arg-type]
                )
            for n in range(1, MAX_STEPS + 1):
                if pt.bounded_reaction(a, b, n) == f:
                    then = f"{state(b)} then or within the next {n} step{'s' * (n > 1)}"
                    return "bounded_react", f"whenever {state(a)}, {then}"
    return None


def _never(lit: tuple[str, str]) -> str:
    return f"{lit[0]} must never be {lit[1]}"


def _read(name: str, lits: list[tuple[str, str]]) -> str:
    who = lits[0][0] if len({x[0] for x in lits}) == 1 else None
    preds = [x[1] if who else f"{x[0]} {x[1]}" for x in lits]
    subject = f"{who} must be" if who else "it must be that"
    if name == "visit":
        return f"{subject} {_join(preds)}, each at some point"
    if name == "global_avoid":
        return f"{who} must never be {_join(preds, 'or')}" if who else f"never {_join(preds, 'or')}"
    if name == "patrolling":
        return f"{subject} {_join(preds)} again and again (after every step, each once more)"
    chain = ", later ".join(preds)
    if name == "sequenced_visit":
        return f"{subject} {chain} (other visits allowed in between, a later one early too)"
    if name == "ordered_visit":
        return f"{subject} {chain}, and never in one before the one listed ahead of it has been"
    return (
        f"{subject} {chain}, never in one before the one listed ahead of it has been, and "
        "each left once before the next is entered (not entered again before the next)"
    )
