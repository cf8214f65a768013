"""Temporal logic (the Safety Chip): LTLf formulas with past operators, their parsing,
progression, simplification, monitors, specification patterns, satisfiability, the monitor
constraint, translation domains, action domains and the domain-aware joint check (conflicts), and
constraint specification files.

Traces are sequences of label sets (the atoms' texts that hold in each state), the initial state
first. See :mod:`governor.ltl.progression` for the finite-trace conventions. The English
translator (sentences to formulas and back) is the sub-package :mod:`governor.ltl.english`.

Imports the core types, the error tree and the file readers; never the English translator and
never a world (a world supplies its vocabulary as a :class:`~governor.ltl.domain.Domain`).
"""

from governor.ltl.constraint import LTLConstraint, describe_change, state_change, valuation
from governor.ltl.monitor import (
    Monitor,
    MonitorSet,
    MonitorSetState,
    MonitorState,
    MonitorVerdict,
    classify,
    worst,
)
from governor.ltl.operators import (
    Always,
    And,
    Eventually,
    Historically,
    Iff,
    Implies,
    Next,
    Not,
    Once,
    Or,
    Release,
    Since,
    StrongRelease,
    Until,
    WeakNext,
    WeakSince,
    WeakUntil,
    WeakYesterday,
    Yesterday,
)
from governor.ltl.parser import atom, canonical_label, parse, parse_prefix, to_prefix
from governor.ltl.patterns import PATTERNS
from governor.ltl.progression import (
    accepts_empty,
    clear_caches,
    final,
    holds,
    progress,
    strip_end,
)
from governor.ltl.satisfiability import (
    SearchResult,
    at_most_one,
    counterexample,
    exactly_one,
    find_trace,
    jointly_satisfiable,
    minimal_conflict,
    one_hot,
    powerset,
    search,
)
from governor.ltl.simplify import conj, disj, iff, implies, make, neg, simplify
from governor.ltl.syntax import END, FALSE, TRUE, Atom, Const, End, Formula

__all__ = [
    "END",
    "FALSE",
    "PATTERNS",
    "TRUE",
    "Always",
    "And",
    "Atom",
    "Const",
    "End",
    "Eventually",
    "Formula",
    "Historically",
    "Iff",
    "Implies",
    "LTLConstraint",
    "Monitor",
    "MonitorSet",
    "MonitorSetState",
    "MonitorState",
    "MonitorVerdict",
    "Next",
    "Not",
    "Once",
    "Or",
    "Release",
    "SearchResult",
    "Since",
    "StrongRelease",
    "Until",
    "WeakNext",
    "WeakSince",
    "WeakUntil",
    "WeakYesterday",
    "Yesterday",
    "accepts_empty",
    "at_most_one",
    "atom",
    "canonical_label",
    "classify",
    "clear_caches",
    "conj",
    "counterexample",
    "describe_change",
    "disj",
    "exactly_one",
    "final",
    "find_trace",
    "holds",
    "iff",
    "implies",
    "jointly_satisfiable",
    "make",
    "minimal_conflict",
    "neg",
    "one_hot",
    "parse",
    "parse_prefix",
    "powerset",
    "progress",
    "search",
    "simplify",
    "state_change",
    "strip_end",
    "to_prefix",
    "valuation",
    "worst",
]
