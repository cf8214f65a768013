"""The Safety Chip for household planners: monitors, explanations and the conflict check.

A base planner is guarded by one :class:`TaskLTLConstraint` per natural-language constraint (so a
rejection names its constraint) and one :class:`JointFeasibility` constraint over all of them.
``[DONE]`` is checked too: ending with an obligation pending violates it (finite-trace semantics).
The verdict descriptor is the offline explanation: it names the action, the constraint, its
formula and the proposition change (:mod:`governor.worlds.household.prompts` has an LLM one).

Alphabets over-approximate the household: exactly one room holds, every other proposition that
can hold in the scene is free, the rest never hold. A conflict found over them is a real one, so
the agent may abort on it. With more than :data:`MAX_FREE` free propositions there is no alphabet
and no conflict check (the per-constraint monitors still reject every violating action).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Iterable, Sequence
from collections.abc import Set as AbstractSet
from typing import Any

from governor.config import ObserverConfig
from governor.core import (
    Constraint,
    Fallback,
    Policy,
    Severity,
    Trajectory,
    Verdict,
)
from governor.feedback import FeedbackWriter
from governor.ltl import LTLConstraint, MonitorSet, MonitorSetState, atom, parse
from governor.ltl.constraint import Spec
from governor.ltl.operators import Eventually
from governor.ltl.progression import strip_end
from governor.ltl.satisfiability import minimal_conflict, one_hot
from governor.ltl.simplify import conj, neg
from governor.ltl.syntax import Formula
from governor.observer import Observer
from governor.worlds.household.env import (
    SceneGraph,
    State,
    Task,
    default_scene,
    goal_propositions,
    proposition_vocabulary,
)
from governor.worlds.household.labels import room_propositions
from governor.worlds.household.ltl_rules import check_task
from governor.worlds.household.planners import HouseholdView
from governor.worlds.household.plans import DONE, predict_labels
from governor.worlds.household.prompts import offline_explainer

ROOMS = frozenset(room_propositions())
MAX_FREE = 10
"""Most free propositions an alphabet enumerates (it holds 4 * 2**n label sets)."""


@functools.cache
def possible() -> frozenset[str]:
    """Every proposition that can hold in TestScene1 (others, e.g. about a chicken, never do)."""
    return frozenset(proposition_vocabulary(default_scene()))


def alphabet(formulas: Iterable[Formula]) -> list[frozenset[str]] | None:
    """Label sets with exactly one room and any subset of the formulas' other atoms that can
    hold in the scene; None when more than :data:`MAX_FREE` of them are free."""
    atoms = set().union(*(f.atom_labels() for f in formulas))
    free = sorted((atoms - ROOMS) & possible())
    return one_hot(sorted(ROOMS), free) if len(free) <= MAX_FREE else None


def _predict(traj: Trajectory, action: Any) -> AbstractSet[str]:
    seen: HouseholdView = traj.observation
    return predict_labels(seen.state, str(action))


def _observe(seen: HouseholdView) -> AbstractSet[str]:
    return seen.labels


class TaskLTLConstraint(LTLConstraint):
    """One natural-language constraint over household labels; ``[DONE]`` must leave it met."""

    def __init__(self, name: str, text: str, formula: Formula | str) -> None:
        f = parse(formula) if isinstance(formula, str) else formula
        super().__init__([(name, text, f)], _predict, _observe, name=name, alphabet=alphabet([f]))
        self.text, self.formula = text, f

    def check(self, traj: Trajectory, action: Any) -> Verdict:
        verdict = super().check(traj, action)
        if not verdict.admissible:
            return dataclasses.replace(
                verdict, descriptor=f'the action "{action}" {verdict.descriptor}'
            )
        if action == DONE:
            after = self.what_if(traj, action)
            if after.pending:
                left = strip_end(after[self.name].formula)
                why = f'stopping now ("{DONE}") leaves "{self.text}" unmet; still to meet: [{left}]'
                return Verdict.reject(self.name, 1.0, why, severity=self.severity)
        return verdict


class JointFeasibility(Constraint):
    """Rejects an action after which the constraints can no longer all be met together."""

    def __init__(self, specs: Sequence[Spec], name: str = "all constraints") -> None:
        self.name = name
        self.monitors = MonitorSet.from_specs(specs)
        self.texts = {n: t for n, t, _ in specs}
        self.alphabet = alphabet(m.formula for m in self.monitors)
        self._memo: dict[tuple[Formula, ...], tuple[str, ...]] = {}

    def initial_state(self, observation: HouseholdView) -> MonitorSetState:
        return self.monitors.start(observation.labels)

    def check(self, traj: Trajectory, action: Any) -> Verdict:
        after = self.monitors.step(traj.memory[self.name], _predict(traj, action))
        clash = () if after.violated else self.conflict(after)
        if len(clash) < 2:  # a single constraint's violation is its own monitor's to report
            return Verdict.allow(self.name)
        names = " and ".join(f'"{self.texts[n] or n}"' for n in clash)
        left = "; ".join(f"still to meet: [{strip_end(after[n].formula)}]" for n in clash)
        why = f'the action "{action}" leaves no way to meet {names} together ({left})'
        return Verdict.reject(self.name, float(len(clash)), why, severity=Severity.HIGH)

    def commit(self, traj: Trajectory, step: Any) -> MonitorSetState:
        return self.monitors.step(traj.memory[self.name], step.next_observation.labels)

    def conflict(self, state: MonitorSetState) -> tuple[str, ...]:
        """Names of monitors whose obligations cannot all be met from ``state`` (``()``: none)."""
        key = state.formulas
        if key not in self._memo:
            self._memo[key] = conflict(dict(zip(state.names, key, strict=True)), self.alphabet)
        return self._memo[key]


def conflict(
    named: dict[str, Formula], letters: Sequence[frozenset[str]] | None
) -> tuple[str, ...]:
    """A minimal set of names whose obligations no continuation meets together; ``()`` if none
    (or when there is no alphabet to search)."""
    return () if letters is None else minimal_conflict(named, letters)


def goal_formula(task: Task, state: State) -> Formula | None:
    """``F(goal)`` for a task with a goal (None without one)."""
    props = goal_propositions(task, state.scene)
    if not props:
        return None
    return Eventually(conj(*(atom(p) if v else neg(atom(p)) for p, v in props)))


def preflight(specs: Sequence[Spec], task: Task, start: HouseholdView) -> tuple[str, ...]:
    """Constraints (and ``goal``) that contradict each other or the task from the initial state;
    ``()`` if none.

    The check knows the household's rules (:func:`~governor.worlds.household.ltl_rules.check_task`:
    one room at a time, holding before placing, reach before grabbing, ...): it asks for an
    execution of the simulator's actions that meets every constraint and ends with the goal met.
    ``goal`` is named when the conflict needs it; a goal that cannot be reached at all is
    ``("goal",)``. A search that hits its cap is no conflict (nothing is aborted unproven).
    """
    named = [(n, parse(f) if isinstance(f, str) else f) for n, _, f in specs]
    scene = start.state.scene
    report = check_task(
        task, named, scene=scene if isinstance(scene, SceneGraph) else None, start=start.state
    )
    if not report.conflict:
        return ()
    return (*report.minimal, *(("goal",) if report.goal_involved else ()))


def safety_chip_constraints(specs: Sequence[Spec]) -> list[Constraint]:
    """One monitor per natural-language constraint, and the joint feasibility check."""
    own: list[Constraint] = [TaskLTLConstraint(n, t, f) for n, t, f in specs]
    return [*own, JointFeasibility(specs)] if len(specs) > 1 else own


def safety_chip(
    policy: Policy,
    specs: Sequence[Spec],
    *,
    explainer: FeedbackWriter | None = None,
    max_regenerations: int = 6,
    time_budget_s: float | None = None,
) -> Observer:
    """The Safety Chip agent: ``policy`` under the monitors of ``specs``; a rejected action is
    pruned, explained (offline unless ``explainer`` is given) and the policy re-prompted, at most
    ``max_regenerations`` times per step; then the episode halts.

    A second rejection by the same constraint is not "no progress" here (``stop_on_repeat`` is
    off): the pruned action is never proposed again at that step, so a repeat is a new action that
    fails the same constraint, as when a planner learns "enter A before B" one room at a time.
    """
    config = ObserverConfig(
        max_regenerations=max_regenerations, stop_on_repeat=False, time_budget_s=time_budget_s
    )
    return Observer(
        policy,
        safety_chip_constraints(specs),
        Halt(),
        config=config,
        feedback=explainer or offline_explainer(),
    )


class Halt(Fallback):
    """Stops the episode (the Safety Chip stops rather than act unchecked)."""

    name = "halt"

    def act(self, traj: Trajectory, verdicts: Sequence[Verdict]) -> None:
        return None
