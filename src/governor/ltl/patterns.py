"""Specification patterns for robotic missions (Menghi et al.), as used by Lang2LTL and the
Safety Chip.

Each constructor builds the same tree as the Lang2LTL prefix formula of its pattern, so
``parse_prefix`` of a formula in ``constraint_patterns.json`` equals the constructor's result
(binary ``&`` nested to the right). Arguments are atoms, atom text (``"agent_at(kitchen)"``) or
any formula.

A *visit* of ``a`` is an entering episode: a maximal run of consecutive positions where ``a``
holds (a rising edge of ``a``, the first position counting as one when ``a`` holds there), so
staying in a room is one visit however long it lasts.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

from governor.errors import SpecError
from governor.ltl import operators as op
from governor.ltl import syntax as s
from governor.ltl.parser import parse

Prop = s.Formula | str


def _f(x: Prop) -> s.Formula:
    if isinstance(x, s.Formula):
        return x
    if isinstance(x, str):
        return parse(x)
    raise SpecError(f"pattern argument: expected a Formula or formula text, found {x!r}")


def _and(*fs: s.Formula) -> s.Formula:
    """Right-nested binary conjunction, as in prefix notation: ``& a & b c``."""
    out = fs[-1]
    for f in reversed(fs[:-1]):
        out = op.And((f, out))
    return out


def _some(props: tuple[Prop, ...], least: int = 1) -> list[s.Formula]:
    if len(props) < least:
        raise SpecError(f"pattern: expected at least {least} proposition(s), found {len(props)}")
    return [_f(p) for p in props]


def _count(n: int, least: int) -> int:
    if isinstance(n, bool) or not isinstance(n, int) or n < least:
        raise SpecError(f"pattern count: expected an integer >= {least}, found {n!r}")
    return n


def visit(*props: Prop) -> s.Formula:
    """Visit every one of them, in any order: ``F a & F b``."""
    return _and(*(op.Eventually(p) for p in _some(props)))


def sequenced_visit(*props: Prop) -> s.Formula:
    """Visit them in this order, other visits allowed in between: ``F(a & F b)``."""
    fs = _some(props)
    out: s.Formula = op.Eventually(fs[-1])
    for p in reversed(fs[:-1]):
        out = op.Eventually(op.And((p, out)))
    return out


def ordered_visit(*props: Prop) -> s.Formula:
    """Visit them all, and none before the one listed ahead of it: ``(!b U a) & F b``."""
    fs = _some(props, 2)
    steps = [op.Until(op.Not(b), a) for a, b in itertools.pairwise(fs)]
    return _and(*steps, op.Eventually(fs[-1]))


def strictly_ordered_visit(*props: Prop) -> s.Formula:
    """Ordered visit, and each one left before the next is entered: adds
    ``!a U (a U (!a U b))`` for each consecutive pair."""
    fs = _some(props, 2)
    pairs = [
        op.Until(op.Not(a), op.Until(a, op.Until(op.Not(a), b))) for a, b in itertools.pairwise(fs)
    ]
    return op.And((ordered_visit(*fs), _and(*pairs)))


def patrolling(*props: Prop) -> s.Formula:
    """Visit each of them again and again (on a finite trace: after every position): ``G F a``."""
    return _and(*(op.Always(op.Eventually(p)) for p in _some(props)))


def global_avoidance(*props: Prop) -> s.Formula:
    """Never be at any of them: ``G !a``."""
    return _and(*(op.Always(op.Not(p)) for p in _some(props)))


def future_avoidance(a: Prop, b: Prop) -> s.Formula:
    """Once ``a`` happens, never ``b`` from then on: ``G(a -> G !b)`` (the Safety Chip's form;
    Menghi's ``G(a -> X G !b)`` differs only when ``a`` and ``b`` can hold together)."""
    return op.Always(op.Implies(_f(a), op.Always(op.Not(_f(b)))))


def future_avoidance_next(a: Prop, b: Prop) -> s.Formula:
    """Lang2LTL's future avoidance: from the step after ``a`` on, never ``b``: ``G(a -> X G !b)``
    (the next step need not exist)."""
    return op.Always(op.Implies(_f(a), op.WeakNext(op.Always(op.Not(_f(b))))))


def past_avoidance(a: Prop, b: Prop) -> s.Formula:
    """Avoid ``a`` until ``b`` has happened, and ``b`` must happen: ``!a U b``."""
    return op.Until(op.Not(_f(a)), _f(b))


def precedence(a: Prop, b: Prop) -> s.Formula:
    """``b`` does not happen before ``a`` has (``b`` need not happen at all): ``!b W a``."""
    return op.WeakUntil(op.Not(_f(b)), _f(a))


def lower_restricted_avoidance(a: Prop, n: int) -> s.Formula:
    """Visit ``a`` at least ``n`` times (visits are entering episodes): for n = 2,
    ``F(a & a U (!a & !a U F a))``."""
    p, n = _f(a), _count(n, 1)
    out: s.Formula = op.Eventually(p)
    for _ in range(n - 1):
        left = op.And((op.Not(p), op.Until(op.Not(p), out)))
        out = op.Eventually(op.And((p, op.Until(p, left))))
    return out


def upper_restricted_avoidance(a: Prop, n: int) -> s.Formula:
    """Visit ``a`` at most ``n`` times (visits are entering episodes): ``!`` (at least n + 1)."""
    return op.Not(lower_restricted_avoidance(a, _count(n, 0) + 1))


def exact_restricted_avoidance(a: Prop, n: int) -> s.Formula:
    """Visit ``a`` exactly ``n`` times: at least ``n`` and at most ``n``."""
    if _count(n, 0) == 0:
        return upper_restricted_avoidance(a, 0)
    return op.And((lower_restricted_avoidance(a, n), upper_restricted_avoidance(a, n)))


def instantaneous_reaction(a: Prop, b: Prop) -> s.Formula:
    """Whenever ``a`` holds, ``b`` holds too: ``G(a -> b)``."""
    return op.Always(op.Implies(_f(a), _f(b)))


def delayed_reaction(a: Prop, b: Prop) -> s.Formula:
    """Whenever ``a`` holds, ``b`` holds then or later: ``G(a -> F b)``."""
    return op.Always(op.Implies(_f(a), op.Eventually(_f(b))))


def prompt_reaction(a: Prop, b: Prop) -> s.Formula:
    """Whenever ``a`` holds, ``b`` holds at the next position, which must exist: ``G(a -> X b)``."""
    return op.Always(op.Implies(_f(a), op.Next(_f(b))))


def bounded_reaction(a: Prop, b: Prop, n: int) -> s.Formula:
    """Whenever ``a`` holds, ``b`` holds then or within the next ``n`` positions, which must
    exist: for n = 2, ``G(a -> (b | X(b | X b)))``."""
    p, q, n = _f(a), _f(b), _count(n, 1)
    out: s.Formula = q
    for _ in range(n):
        out = op.Or((q, op.Next(out)))
    return op.Always(op.Implies(p, out))


def bound_reaction(a: Prop, b: Prop) -> s.Formula:
    """``b`` holds exactly when ``a`` does: ``G(a <-> b)``."""
    return op.Always(op.Iff(_f(a), _f(b)))


def bound_delay(a: Prop, b: Prop) -> s.Formula:
    """``b`` holds at the next position exactly when ``a`` holds now: ``G(a <-> X b)``."""
    return op.Always(op.Iff(_f(a), op.Next(_f(b))))


def wait(a: Prop, b: Prop) -> s.Formula:
    """Stay at ``a`` until ``b`` happens, and ``b`` must happen: ``a U b``."""
    return op.Until(_f(a), _f(b))


PATTERNS: dict[str, Callable[..., s.Formula]] = {
    "visit": visit,
    "sequenced_visit": sequenced_visit,
    "ordered_visit": ordered_visit,
    "strictly_ordered_visit": strictly_ordered_visit,
    "patrolling": patrolling,
    "global_avoid": global_avoidance,
    "future_avoid": future_avoidance,
    "past_avoid": past_avoidance,
    "precedence": precedence,
    "lower_rest_avoid": lower_restricted_avoidance,
    "upper_rest_avoid": upper_restricted_avoidance,
    "exact_rest_avoid": exact_restricted_avoidance,
    "instant_react": instantaneous_reaction,
    "delay_react": delayed_reaction,
    "prompt_react": prompt_reaction,
    "bound_react": bound_reaction,
    "bound_delay": bound_delay,
    "bounded_react": bounded_reaction,
    "wait": wait,
}
"""Pattern constructors by the short names of ``constraint_patterns.json``
(``upper_rest_avoid`` and the other restricted avoidances take ``(a, n)``, ``bounded_react``
takes ``(a, b, n)``)."""
