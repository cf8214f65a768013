"""What the clause rules share: the rule registry (templates tried in order of priority), the
template shorthands ``{P}`` (a placeholder) and ``{L}`` (a list of them), and the constructors of
readings and parses.

Imports the readings and the cleaned clause.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from governor.ltl.english.grammar import readings as rd
from governor.ltl.english.grammar.clause.clean import Clause
from governor.ltl.english.grammar.readings import Parse, Reading

Rule = Callable[[re.Match[str], Clause], Parse | None]
_REGISTRY: list[tuple[int, re.Pattern[str], Rule]] = []
P, L = r"P\d+", r"P\d+(?: (?:COMMA|AND|OR) P\d+)*"
_P = re.compile(P)


def rule(priority: int, *templates: str) -> Callable[[Rule], Rule]:
    """Register ``fn`` for each template; lower ``priority`` is tried first."""

    def add(fn: Rule) -> Rule:
        for t in templates:
            _REGISTRY.append((priority, re.compile(t.replace("{P}", P).replace("{L}", L)), fn))
        return fn

    return add


def rules() -> list[tuple[re.Pattern[str], Rule]]:
    """Every registered template and its rule, in the order they are tried."""
    return [(regex, fn) for _, regex, fn in sorted(_REGISTRY, key=lambda r: r[0])]


def reading(family: str, args: Iterable[str], n: int | None = None, *notes: str) -> Reading:
    """A reading of ``family`` with the notes every reading of it makes, and ``notes``."""
    return Reading(family, tuple(args), n, (*rd.family_notes(family), *notes))


def names(text: str) -> list[str]:
    """The placeholders of a template string, in order."""
    return _P.findall(text)


def one(r: Reading, *alts: Reading) -> Parse:
    """A parse: the default reading, then the other readings."""
    return Parse(r, tuple(alts))
