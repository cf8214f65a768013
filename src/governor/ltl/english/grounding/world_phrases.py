"""A world's phrase table for the offline grounder: how its verbs and described states name its
propositions ("open the fridge" -> ``is_open(fridge)``, "the salmon is in the fridge" ->
``is_in(salmon, fridge)``).

A world gives its table to the translator through its :class:`governor.ltl.domain.Domain`
(``Domain.phrases``); a domain without one (the default) has no action or state phrases, and its
sentences are read by their places, their propositions' own words and their events. The
household's table is :data:`governor.worlds.household.ltl_phrases.HOUSEHOLD_PHRASES`.

World-free: imports the word scanner and the LTL syntax.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from governor.errors import SpecError, expected
from governor.ltl.domain import Domain
from governor.ltl.english.grounding.scanner import Scanner
from governor.ltl.syntax import Formula

ActionReader = Callable[[Scanner, int], "tuple[int, Formula] | None"]
"""An action phrase at a position: the index after it and the state it leaves, or None."""
StateReader = Callable[[Scanner, int], "tuple[int, Formula, str] | None"]
"""A described state at a position: the index after it, the state, and the lifted shape
(``"{} holds"``, ``"you have {}"``), or None."""


@dataclass(frozen=True)
class WorldPhrases:
    """A world's action and state phrases (each may raise
    :class:`~governor.ltl.english.grounding.scanner.NoSuchPredicate` to let another reading
    try)."""

    name: str
    action: ActionReader
    state: StateReader


def phrases_of(domain: Domain) -> WorldPhrases | None:
    """The phrase table ``domain`` carries, if any; an error for anything else."""
    table = domain.phrases
    if table is None or isinstance(table, WorldPhrases):
        return table
    raise SpecError(f"domain {domain.name}: {expected('a WorldPhrases table or None', table)}")
