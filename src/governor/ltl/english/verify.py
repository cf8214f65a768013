"""The verification view of a translation: what a person reads before accepting a formula.

It shows the formula (infix and prefix), its English back-translation, and a shortest trace over
the domain's states that violates it, with the step where the monitor says so. A formula that
no trace violates forbids nothing; one that no trace satisfies (with the domain's rules) forbids
everything; both are flagged.
"""

from __future__ import annotations

from typing import Any

from governor.errors import SpecError
from governor.ltl.domain import Domain
from governor.ltl.english.readback import english
from governor.ltl.english.translate import Translation
from governor.ltl.monitor import Monitor, MonitorVerdict
from governor.ltl.parser import to_prefix
from governor.ltl.satisfiability import find_trace
from governor.ltl.simplify import conj, neg
from governor.ltl.syntax import Formula

MAX_DEPTH = 16
"""Longest example trace searched for."""


def violation_step(formula: Formula, trace: list[frozenset[str]]) -> int | None:
    """The first step (0-based) after which the monitor says VIOLATED; ``len(trace)`` when the
    trace is only violated by ending there; None when the trace satisfies ``formula``."""
    monitor = Monitor(formula, "verify")
    state = monitor.initial
    for i, labels in enumerate(trace):
        state = monitor.step(state, labels)
        if state.verdict is MonitorVerdict.VIOLATED:
            return i
    return None if Monitor.final_verdict(state) is MonitorVerdict.OK else len(trace)


def example_violation(
    formula: Formula, domain: Domain, max_depth: int = MAX_DEPTH
) -> list[frozenset[str]] | None:
    """A shortest trace over the domain's states (with its rules) that violates ``formula``."""
    alphabet = domain.alphabet_for(formula, *domain.rules)
    return find_trace(conj(neg(formula), *domain.rules), alphabet, max_depth)


def verify_view(translation: Translation, domain: Domain) -> dict[str, Any]:
    """The formula, its English reading and a violating example, as plain data."""
    t = translation
    view: dict[str, Any] = {
        "text": t.sentence,
        "method": t.method,
        "pattern": t.pattern,
        "grounding": dict(t.grounding),
        "lifted": t.lifted,
        "formula": None,
        "prefix": None,
        "english": None,
        "counterexample": None,
        "violated_at": None,
        "notes": [],
        "verified": False,
        "error": t.error,
    }
    f = t.formula
    if f is None:
        return view
    view.update(formula=str(f), prefix=to_prefix(f), english=english(f, domain))
    try:
        bad = example_violation(f, domain)
        good = find_trace(conj(f, *domain.rules), domain.alphabet_for(f, *domain.rules), MAX_DEPTH)
    except SpecError as exc:
        view["notes"].append(f"no example searched: {exc}")
        return view
    if bad is None:
        view["notes"].append("no trace of the domain violates it: it forbids nothing")
    else:
        shown = f.atom_labels()
        view["counterexample"] = [sorted(step & shown) for step in bad]
        view["violated_at"] = violation_step(f, bad)
    if good is None:
        view["notes"].append("no trace of the domain satisfies it: it forbids everything")
    return view
