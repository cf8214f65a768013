"""Action domains for the joint check: what an environment's actions need and change, STRIPS-like.

A state is the frozenset of facts that hold. An :class:`Action` has preconditions (facts that must
hold, facts that must not, and counting limits such as "at most one thing held"), and effects:
facts deleted, then facts added, and conditional effects (:class:`When`) whose conditions are read
in the state before the step. :class:`Invariant` s (exactly one room, at most two things held) hold
in every state: a step into a state that breaks one is not a step of the domain.

The labels of a state, what the constraints' atoms are read against, are its facts plus the
``views``: a label that holds when any of its facts holds (``is_open(window)`` for the fact of any
window instance). Facts that are not labels should contain ``#`` so that no atom can name them.

World-free: imports the error tree only.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property

from governor.errors import SpecError, expected

State = frozenset[str]


def facts(items: Iterable[str] = ()) -> frozenset[str]:
    """A frozenset of fact names (a str is one fact, not its characters)."""
    return frozenset((items,) if isinstance(items, str) else items)


@dataclass(frozen=True)
class When:
    """A conditional effect: when every ``if_true`` and no ``if_false`` fact holds before the
    step, ``delete`` then ``add``."""

    if_true: frozenset[str] = frozenset()
    if_false: frozenset[str] = frozenset()
    add: frozenset[str] = frozenset()
    delete: frozenset[str] = frozenset()

    def fires(self, state: State) -> bool:
        return self.if_true <= state and not (self.if_false & state)


@dataclass(frozen=True)
class Action:
    """One ground action: ``name`` (what a witness shows), its preconditions and its effects.

    ``at_most`` holds (facts, n) pairs: at most n of the facts may hold before the step (a free
    hand: at most one of the held facts, with two hands).
    """

    name: str
    pre: frozenset[str] = frozenset()
    pre_not: frozenset[str] = frozenset()
    add: frozenset[str] = frozenset()
    delete: frozenset[str] = frozenset()
    when: tuple[When, ...] = ()
    at_most: tuple[tuple[frozenset[str], int], ...] = ()

    def applicable(self, state: State) -> bool:
        """Whether the preconditions hold in ``state``."""
        if not self.pre <= state or self.pre_not & state:
            return False
        return all(len(group & state) <= n for group, n in self.at_most)

    @cached_property
    def _triggers(self) -> tuple[dict[str, tuple[When, ...]], tuple[When, ...]]:
        """The conditional effects by the one fact that fires them, and the others."""
        single: dict[str, list[When]] = {}
        for w in self.when:
            if len(w.if_true) == 1 and not w.if_false:
                single.setdefault(next(iter(w.if_true)), []).append(w)
        rest = tuple(w for w in self.when if len(w.if_true) != 1 or w.if_false)
        return {k: tuple(v) for k, v in single.items()}, rest

    def apply(self, state: State) -> State:
        """The state after the step (preconditions not checked)."""
        single, rest = self._triggers
        fired = [w for f in state for w in single.get(f, ())]
        fired += [w for w in rest if w.fires(state)]
        gone = self.delete.union(*(w.delete for w in fired))
        new = self.add.union(*(w.add for w in fired))
        return (state - gone) | new


@dataclass(frozen=True)
class Invariant:
    """Between ``least`` and ``most`` of ``facts`` hold in every state; ``text`` says it in English."""

    facts: frozenset[str]
    least: int = 0
    most: int = 1
    text: str = ""

    def holds(self, state: State) -> bool:
        return self.least <= len(self.facts & state) <= self.most


@dataclass(frozen=True)
class ActionDomain:
    """An environment's actions from an initial state, for the domain-aware joint check."""

    name: str
    initial: State
    actions: tuple[Action, ...]
    invariants: tuple[Invariant, ...] = ()
    views: Mapping[str, frozenset[str]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "initial", facts(self.initial))
        object.__setattr__(self, "actions", tuple(self.actions))
        broken = [i.text or sorted(i.facts) for i in self.invariants if not i.holds(self.initial)]
        if broken:
            raise SpecError(
                f"domain {self.name}: {expected('an initial state meeting every invariant', broken)}"
            )

    @cached_property
    def _shows(self) -> dict[str, tuple[str, ...]]:
        out: dict[str, list[str]] = {}
        for label, group in self.views.items():
            for fact in group:
                out.setdefault(fact, []).append(label)
        return {k: tuple(v) for k, v in out.items()}

    def labels(self, state: State) -> frozenset[str]:
        """The facts of ``state`` and the labels of its views."""
        shows = self._shows
        shown = [label for fact in state for label in shows.get(fact, ())]
        return state.union(shown) if shown else state

    def successors(self, state: State) -> Iterator[tuple[Action, State]]:
        """Each applicable action and the state it leads to (invariants kept), in order."""
        for action in self.actions:
            if action.applicable(state):
                nxt = action.apply(state)
                if all(i.holds(nxt) for i in self.invariants):
                    yield action, nxt

    def possible(self) -> frozenset[str]:
        """The labels that may hold in some state: a relaxation (initial facts and every fact
        some effect adds, and the views of those); a label outside it never holds."""
        out = set(self.initial)
        for a in self.actions:
            out |= a.add
            for w in a.when:
                out |= w.add
        return frozenset(out).union(k for k, group in self.views.items() if group & out)

    def mentioned(self) -> frozenset[str]:
        """Every fact and label the domain names."""
        out = set(self.initial) | set(self.views)
        for a in self.actions:
            out |= a.pre | a.pre_not | a.add | a.delete
            for w in a.when:
                out |= w.if_true | w.if_false | w.add | w.delete
        for i in self.invariants:
            out |= i.facts
        return frozenset(out)
