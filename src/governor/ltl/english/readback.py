"""Formulas read back in plain English, so a person can check a translation.

The specification patterns are recognised and read as one sentence each ("whenever the agent is
in the kitchen, it must be in the living room then or later"); any other node is read by its own
rule. Household propositions are read naturally (``is_open(fridge)``: "the fridge is open",
``!is_open(fridge)``: "the fridge is closed"); other atoms are quoted. The domain names the rooms
(:attr:`Domain.room_names <governor.ltl.domain.Domain.room_names>`): the agent is *in* a room and
*at* any other object, and a bare room name is read as the agent's location, as in the Safety
Chip's formulas.
"""

from __future__ import annotations

from governor.ltl import operators as op
from governor.ltl import patterns as pt
from governor.ltl import syntax as s
from governor.ltl.domain import Domain
from governor.ltl.english.readback_lists import listed

_STATE = {  # predicate: (phrase when true, phrase when false)
    "is_open": ("open", "closed"),
    "is_switchedon": ("switched on", "switched off"),
    "is_grabbed": ("held by the agent", "not held by the agent"),
    "is_touched": ("touched by the agent", "not touched by the agent"),
}
_TIMES = {1: "once", 2: "twice"}


def _noun(name: str) -> str:
    return "the " + name.replace("_", " ")


def _is_literal(f: s.Formula) -> bool:
    """Whether ``f`` is an atom or a negated atom (:func:`_literal` reads it)."""
    return isinstance(f.arg if isinstance(f, op.Not) else f, s.Atom)


def _literal(f: s.Formula, domain: Domain) -> tuple[str, str] | None:
    """(subject, predicate) of an atom or a negated atom: ("the fridge", "closed")."""
    neg = isinstance(f, op.Not)
    a = f.arg if isinstance(f, op.Not) else f
    if not isinstance(a, s.Atom):
        return None
    args = a.args
    if (a.name == "agent_at" and len(args) == 1) or (not args and a.name in domain.room_names):
        place = args[0] if args else a.name
        where = ("in " if place in domain.room_names else "at ") + _noun(place)
        return "the agent", ("not " if neg else "") + where
    if a.name in _STATE and len(args) == 1:
        return _noun(args[0]), _STATE[a.name][neg]
    if a.name in ("is_in", "is_on") and len(args) == 2:
        where = ("in " if a.name == "is_in" else "on ") + _noun(args[1])
        return _noun(args[0]), ("not " if neg else "") + where
    return f"`{a}`", "false" if neg else "true"


def _is(subject: str, predicate: str) -> str:
    return f"{subject} {'are' if subject == 'you' else 'is'} {predicate}"


def state(f: s.Formula, domain: Domain) -> str:
    """A clause saying that ``f`` holds now: "the fridge is open"."""
    lit = _literal(f, domain)
    if lit is not None:
        return _is(*lit)
    if isinstance(f, op.And | op.Or):
        joiner = " and " if isinstance(f, op.And) else " or "
        return joiner.join(state(x, domain) for x in f.args)
    return f"({english(f, domain)})"


def _must(f: s.Formula, domain: Domain, when: str = "", subject: str | None = None) -> str:
    """The literal's subject must be its predicate ``when``; any other formula must hold then."""
    lit = _literal(f, domain)
    tail = f" {when}" if when else ""
    if lit is None:
        return f"{state(f, domain)} must hold{tail}"
    who = "it" if subject == lit[0] else lit[0]
    if lit[1].startswith("not "):
        return f"{who} must not be {lit[1][4:]}{tail}"
    return f"{who} must be {lit[1]}{tail}"


def _never(
    f: s.Formula, domain: Domain, tail: str = "", word: str = "never", subject: str | None = None
) -> str:
    lit = _literal(f, domain)
    if lit is None:
        return f"it must {word} be that {state(f, domain)}{tail}"
    return f"{'it' if subject == lit[0] else lit[0]} must {word} be {lit[1]}{tail}"


def _has_been(f: s.Formula, domain: Domain, subject: str | None = None) -> str:
    lit = _literal(f, domain)
    if lit is None:
        return f"{state(f, domain)} has held"
    return f"{'it' if subject == lit[0] else lit[0]} has been {lit[1]}"


def _subject(f: s.Formula, domain: Domain) -> str | None:
    lit = _literal(f, domain)
    return lit[0] if lit else None


def _first(a: s.Formula, b: s.Formula, domain: Domain) -> str:
    """``b`` must not be before ``a`` has been: precedence and past avoidance begin so."""
    return f"{_never(b, domain, ' before', 'not')} {_has_been(a, domain, _subject(b, domain))}"


def count_of(f: s.Formula) -> tuple[s.Formula, int] | None:
    """``(a, n)`` when ``f`` is ``lower_restricted_avoidance(a, n)``."""
    if not isinstance(f, op.Eventually):
        return None
    inner = f.arg
    if (
        isinstance(inner, op.And)
        and len(inner.args) == 2
        and isinstance(inner.args[1], op.Until)
        and isinstance(inner.args[1].right, op.And)
        and len(inner.args[1].right.args) == 2
        and isinstance(inner.args[1].right.args[1], op.Until)
    ):
        a = inner.args[0]
        rest = count_of(inner.args[1].right.args[1].right)
        if rest is not None and rest[0] == a and f == pt.lower_restricted_avoidance(a, rest[1] + 1):
            return a, rest[1] + 1
    return (inner, 1) if _is_literal(inner) else None


def _times(n: int) -> str:
    return _TIMES.get(n, f"{n} times")


def _visits(a: s.Formula, domain: Domain, modal: str, bound: str) -> str:
    """The subject, ``modal`` be, the predicate and ``bound``; an unbroken stretch counts once."""
    lit = _literal(a, domain)
    what = f"{lit[0]} {modal} be {lit[1]}" if lit else f"{state(a, domain)} {modal} hold"
    return f"{what} {bound} (an unbroken stretch counts once)"


def pattern_of(f: s.Formula, domain: Domain) -> tuple[str, str] | None:
    """The pattern name (a key of ``PATTERNS``) and its English reading, if ``f`` is one."""
    if isinstance(f, op.Always):
        g = f.arg
        if isinstance(g, op.Not):
            return "global_avoid", _never(g.arg, domain)
        if isinstance(g, op.Implies):
            a, b = g.left, g.right
            who = _subject(a, domain)
            if isinstance(b, op.Always) and isinstance(b.arg, op.Not):
                return (
                    "future_avoid",
                    f"once {state(a, domain)}, "
                    f"{_never(b.arg.arg, domain, ' from then on', subject=who)}",
                )
            if isinstance(b, op.Eventually):
                then = _must(b.arg, domain, "then or later", who)
                return "delay_react", f"whenever {state(a, domain)}, {then}"
            if isinstance(b, op.Next):
                return (
                    "prompt_react",
                    f"whenever {state(a, domain)}, {_must(b.arg, domain, 'at the next step', who)}",
                )
            if not b.has_future:
                then = _must(b, domain, "at the same time", who)
                return "instant_react", f"whenever {state(a, domain)}, {then}"
        if isinstance(g, op.Iff):
            if isinstance(g.right, op.Next):
                return (
                    "bound_delay",
                    f"{state(g.right.arg, domain)} at a step exactly when "
                    f"{state(g.left, domain)} at the step before",
                )
            return "bound_react", f"{state(g.left, domain)} exactly when {state(g.right, domain)}"
    if isinstance(f, op.WeakUntil) and isinstance(f.left, op.Not):
        b, a = f.left.arg, f.right
        first = _first(a, b, domain)
        return "precedence", f"{first} (neither has to happen)"
    if isinstance(f, op.Until) and isinstance(f.left, op.Not):
        b, a = f.left.arg, f.right
        first = _first(a, b, domain)
        return "past_avoid", f"{first}, and {_must(a, domain, 'eventually')}"
    if isinstance(f, op.Until):
        return (
            "wait",
            f"{_must(f.left, domain, 'until')} {state(f.right, domain)}, "
            f"and {_must(f.right, domain, 'eventually')}",
        )
    if isinstance(f, op.Not) and (c := count_of(f.arg)) is not None:
        a, n = c
        return "upper_rest_avoid", _never(a, domain) if n == 1 else _visits(
            a, domain, "may", f"at most {_times(n - 1)}"
        )
    if (c := count_of(f)) is not None:
        a, n = c
        if n == 1:
            return "visit", _must(a, domain, "at some point")
        return "lower_rest_avoid", _visits(a, domain, "must", f"at least {_times(n)}")
    if isinstance(f, op.And) and len(f.args) == 2 and (c := count_of(f.args[0])):
        a, n = c
        if f == pt.exact_restricted_avoidance(a, n):
            return "exact_rest_avoid", _visits(a, domain, "must", f"exactly {_times(n)}")
    return listed(f, lambda x: _literal(x, domain), lambda x: state(x, domain))


_UNARY = {
    op.Not: "it is not the case that {}",
    op.Next: "at the next step, {}",
    op.WeakNext: "at the next step, if there is one, {}",
    op.Eventually: "at some step from now on, {}",
    op.Always: "at every step from now on, {}",
    op.Yesterday: "at the previous step, {}",
    op.WeakYesterday: "at the previous step, if there was one, {}",
    op.Once: "at some step so far, {}",
    op.Historically: "at every step so far, {}",
}
_BINARY = {
    op.Implies: "if {}, then {}",
    op.Iff: "{} exactly when {}",
    op.Until: "{} until {}, which must happen",
    op.WeakUntil: "{} until {}, or forever",
    op.Release: "{1} up to and including the first step where {0}, or forever",
    op.StrongRelease: "{1} up to and including a step where {0}, which must come",
    op.Since: "{1} at some step so far, and {0} at every step after it",
    op.WeakSince: "{0} at every step so far, or since {1}",
}


def english(f: s.Formula, domain: Domain) -> str:
    """``f`` in plain English."""
    found = pattern_of(f, domain)
    if found is not None:
        return found[1]
    if isinstance(f, s.Atom) or _is_literal(f):
        return state(f, domain)
    if isinstance(f, s.Const):
        return "always true" if f.value else "never true (nothing satisfies it)"
    if isinstance(f, s.End):
        return "the trace has ended"
    if isinstance(f, op.And):
        return "; and ".join(english(x, domain) for x in f.args)
    if isinstance(f, op.Or):
        return "; or ".join(english(x, domain) for x in f.args)
    if isinstance(f, s.Unary):
        return _UNARY[type(f)].format(_clause(f.arg, domain))
    if isinstance(f, s.Binary):
        return _BINARY[type(f)].format(_clause(f.left, domain), _clause(f.right, domain))
    raise TypeError(f"english: expected a Formula, found {f!r}")


def _clause(f: s.Formula, domain: Domain) -> str:
    if _is_literal(f):
        return state(f, domain)
    if isinstance(f, op.And | op.Or) and all(_is_literal(x) for x in f.args):
        return state(f, domain)
    return f"({english(f, domain)})"
