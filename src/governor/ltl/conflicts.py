"""The domain-aware joint check: is there a finite execution of the domain, from its initial state,
that reaches the task's goal and satisfies every constraint?

The search is breadth-first over pairs (domain state, progressed formula): the domain's actions
(:mod:`governor.ltl.actions`) give the next states, and the conjunction of the constraints (and
"the goal holds at the last state") is progressed by each state's labels, so only the states the
domain can reach are visited, never the powerset of the propositions. A shortest satisfying
execution is the witness. When there is none and the search was exhaustive, the constraints (with
the goal) conflict, and a minimal conflicting subset is found by deletion: each constraint is
dropped in turn while the rest still conflicts. A search stopped by ``max_states`` is undecided:
a conflict is only reported when every reachable pair was explored.

World-free: imports the error tree and the LTL syntax, progression and action domains.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from governor.errors import SpecError, expected
from governor.ltl import operators as op
from governor.ltl.actions import ActionDomain, State
from governor.ltl.progression import accepts_empty, progress
from governor.ltl.simplify import conj, make
from governor.ltl.syntax import FALSE, TRUE, Atom, Formula

MAX_STATES = 200_000
"""Default cap on the (state, formula) pairs one search may hold."""

Named = Mapping[str, Formula] | Sequence[tuple[str, Formula]]


@dataclass(frozen=True)
class Execution:
    """What one search found: the steps of a shortest satisfying execution (``None``: none) and
    the labels of its states, the initial one first. ``exhaustive``: every reachable pair was
    explored (so ``steps is None`` means no execution of any length satisfies the formulas)."""

    steps: tuple[str, ...] | None
    labels: tuple[frozenset[str], ...] | None
    exhaustive: bool
    states: int


@dataclass(frozen=True)
class ConflictReport:
    """The joint check's answer.

    ``conflict``: no execution reaches the goal and meets every constraint (proven: the searches
    that showed it were exhaustive); ``minimal``: the names of a minimal conflicting subset of the
    constraints (empty when the goal alone cannot be reached); ``goal_involved``: the subset
    conflicts only together with the goal; ``minimal_exact``: every deletion trial was decided
    (else the subset conflicts but may not be minimal); ``undecided``: the first search hit the
    cap, so there is neither a conflict nor a witness; ``witness``: the steps of a satisfying
    execution when there is no conflict; ``states``: pairs explored by all searches together.
    """

    conflict: bool
    undecided: bool
    minimal: tuple[str, ...] = ()
    goal_involved: bool = False
    minimal_exact: bool = True
    witness: tuple[str, ...] | None = None
    witness_labels: tuple[frozenset[str], ...] | None = None
    states: int = 0
    searches: int = 0


def goal_at_end(goal: Formula) -> Formula:
    """``F(goal & WX false)``: the goal holds at the last state of the execution."""
    return op.Eventually(conj(goal, op.WeakNext(FALSE)))


def never_false(formula: Formula, possible: frozenset[str]) -> Formula:
    """``formula`` with every atom outside ``possible`` (it never holds) replaced by false."""
    if isinstance(formula, Atom):
        return formula if formula.label in possible else FALSE
    kids = formula.children()
    if not kids or formula.atom_labels() <= possible:
        return formula
    return make(type(formula), *(never_false(k, possible) for k in kids))


def _holds_now(goal: Formula | None, labels: frozenset[str]) -> bool:
    return goal is not None and progress(goal, labels) == TRUE


def find_execution(
    domain: ActionDomain,
    formulas: Iterable[Formula],
    goal: Formula | None = None,
    *,
    max_states: int = MAX_STATES,
    stop_at_goal: bool = False,
) -> Execution:
    """A shortest execution of ``domain`` whose label trace satisfies every formula and, with a
    ``goal`` (a formula without temporal operators), ends in a state where the goal holds.

    With ``stop_at_goal`` a step that makes the goal hold (it did not before) ends the execution,
    as an environment that stops when the goal is reached does.
    """
    if goal is not None and (goal.has_future or goal.has_past):
        raise SpecError(f"goal: {expected('a formula without temporal operators', str(goal))}")
    if max_states < 1:
        raise SpecError(f"max_states: {expected('at least 1', max_states)}")
    spec = conj(*formulas, goal_at_end(goal) if goal is not None else TRUE)
    spec = never_false(spec, domain.possible())
    start = domain.initial
    first = domain.labels(start)
    obligation = progress(spec, first)
    if obligation == FALSE:
        return Execution(None, None, True, 1)
    if accepts_empty(obligation):
        return Execution((), (first,), True, 1)
    root = (start, obligation)
    parent: dict[tuple[State, Formula], tuple[tuple[State, Formula], str] | None] = {root: None}
    frontier = deque([root])
    steps_from: dict[State, list[tuple[str, State, frozenset[str]]]] = {}
    seen: dict[Formula, Formula] = {obligation: obligation}
    while frontier:
        node = frontier.popleft()
        state, formula = node
        was_goal = stop_at_goal and _holds_now(goal, domain.labels(state))
        moves = steps_from.get(state)
        if moves is None:
            moves = [(a.name, s, domain.labels(s)) for a, s in domain.successors(state)]
            steps_from[state] = moves
        for name, nxt, labels in moves:
            after = progress(formula, labels)
            after = seen.setdefault(after, after)  # one object per formula: cheap lookups
            if after == FALSE:
                continue
            child = (nxt, after)
            if accepts_empty(after):
                steps, states = _path(parent, node)
                labels_seen = tuple(domain.labels(s) for s in (*states, nxt))
                return Execution((*steps, name), labels_seen, True, len(parent))
            if child in parent or (stop_at_goal and not was_goal and _holds_now(goal, labels)):
                continue  # seen, or the execution ends here without meeting the formulas
            if len(parent) >= max_states:
                return Execution(None, None, False, len(parent))
            parent[child] = (node, name)
            frontier.append(child)
    return Execution(None, None, True, len(parent))


def _path(
    parent: Mapping[tuple[State, Formula], tuple[tuple[State, Formula], str] | None],
    end: tuple[State, Formula],
) -> tuple[list[str], list[State]]:
    steps: list[str] = []
    states = [end[0]]
    link = parent[end]
    while link is not None:
        node, name = link
        steps.append(name)
        states.append(node[0])
        link = parent[node]
    steps.reverse()
    states.reverse()
    return steps, states


def check_conflicts(
    named: Named,
    domain: ActionDomain,
    goal: Formula | None = None,
    *,
    max_states: int = MAX_STATES,
    stop_at_goal: bool = False,
) -> ConflictReport:
    """Whether the named constraints and the goal can hold together on an execution of
    ``domain``; a minimal conflicting subset when they cannot, a witness when they can."""
    items = list(named.items()) if isinstance(named, Mapping) else list(named)
    runs: list[Execution] = []

    def run(formulas: list[Formula], with_goal: bool = True) -> Execution:
        found = find_execution(
            domain,
            formulas,
            goal if with_goal else None,
            max_states=max_states,
            stop_at_goal=stop_at_goal,
        )
        runs.append(found)
        return found

    full = run([f for _, f in items])
    if full.steps is not None:
        return ConflictReport(
            False, False, witness=full.steps, witness_labels=full.labels,
            states=full.states, searches=1,
        )  # fmt: skip
    if not full.exhaustive:
        return ConflictReport(False, True, states=full.states, searches=1)
    keep, exact = list(items), True
    for item in items:
        trial = [x for x in keep if x is not item]
        found = run([f for _, f in trial])
        if found.steps is None and found.exhaustive:
            keep = trial
        elif found.steps is None:
            exact = False
    involved = goal is not None
    if goal is not None and keep:
        alone = run([f for _, f in keep], with_goal=False)
        involved = not (alone.steps is None and alone.exhaustive)
        exact = exact and alone.exhaustive
    return ConflictReport(
        True, False, tuple(n for n, _ in keep), involved, exact,
        states=sum(r.states for r in runs), searches=len(runs),
    )  # fmt: skip
