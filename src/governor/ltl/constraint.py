"""Temporal-logic constraints as a :class:`governor.core.Constraint` (the Safety Chip monitor).

The memory state is a :class:`MonitorSetState`: one progressed obligation per natural-language
constraint plus the labels of the current state. ``check`` progresses a copy by the labels the
action is predicted to produce; ``commit`` progresses it by the labels actually observed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from collections.abc import Set as AbstractSet
from typing import Any

from governor.core import Constraint, Severity, Step, Trajectory, Verdict
from governor.ltl.monitor import MonitorSet, MonitorSetState, MonitorVerdict
from governor.ltl.progression import strip_end
from governor.ltl.satisfiability import minimal_conflict
from governor.ltl.syntax import Formula

Spec = tuple[str, str, Formula | str]
Predict = Callable[[Trajectory, Any], AbstractSet[str]]
Observe = Callable[[Any], AbstractSet[str]]


def state_change(
    before: AbstractSet[str], after: AbstractSet[str], atoms: AbstractSet[str] | None = None
) -> tuple[list[str], list[str]]:
    """The labels that became true and those that became false (among ``atoms`` if given)."""
    keep = (lambda x: True) if atoms is None else atoms.__contains__
    return sorted(x for x in after - before if keep(x)), sorted(
        x for x in before - after if keep(x)
    )


def valuation(labels: AbstractSet[str], atoms: Iterable[str]) -> str:
    """The labels as a conjunction of literals over ``atoms``: ``!agent_at(bedroom) & ...``."""
    return " & ".join(a if a in labels else f"!{a}" for a in sorted(atoms)) or "true"


def describe_change(
    before: AbstractSet[str], after: AbstractSet[str], atoms: AbstractSet[str]
) -> str:
    up, down = state_change(before, after, atoms)
    parts = [f"{x} becomes true" for x in up] + [f"{x} becomes false" for x in down]
    return ", ".join(parts) if parts else "no change in its propositions"


class LTLConstraint(Constraint):
    """Natural-language constraints monitored as LTLf formulas; one monitor per constraint.

    ``predict(traj, action)`` gives the labels the next state would have if ``action`` were
    executed (side-effect free); ``observe(observation)`` gives the labels of an observation.
    A candidate is rejected when any monitor would be VIOLATED; a PENDING obligation is
    admissible and is mentioned in the verdict. The constraint is hard: a fallback's action must
    pass it too.
    """

    hard = True

    def __init__(
        self,
        specs: Iterable[Spec],
        predict: Predict,
        observe: Observe,
        *,
        name: str = "ltl",
        alphabet: Iterable[AbstractSet[str]] | None = None,
        severity: Severity = Severity.HIGH,
    ) -> None:
        self.name = name
        self.monitors = MonitorSet.from_specs(specs, alphabet)
        self.predict = predict
        self.observe = observe
        self.severity = severity

    def initial_state(self, observation: Any) -> MonitorSetState:
        return self.monitors.start(self.observe(observation))

    def _state(self, traj: Trajectory) -> MonitorSetState:
        state = traj.memory.get(self.name)
        if state is None and traj.t == 0:
            return self.initial_state(traj.observation)
        if not isinstance(state, MonitorSetState):
            raise TypeError(
                f"{self.name}: expected a MonitorSetState in the trajectory's memory, found {state!r}"
            )
        return state

    def what_if(self, traj: Trajectory, action: Any) -> MonitorSetState:
        """The monitors' state if ``action`` were executed next (nothing is kept)."""
        return self.monitors.step(self._state(traj), self.predict(traj, action))

    def check(self, traj: Trajectory, action: Any) -> Verdict:
        before = self._state(traj)
        after = self.monitors.step(before, self.predict(traj, action))
        violated = after.violated
        if violated:
            return Verdict.reject(
                self.name,
                float(len(violated)),
                self._violation(before, after, violated),
                severity=self.severity,
            )
        pending = after.pending
        if pending:
            return Verdict.allow(self.name, descriptor=self._pending(after, pending))
        return Verdict.allow(self.name)

    def commit(self, traj: Trajectory, step: Step) -> MonitorSetState:
        return self.monitors.step(self._state(traj), self.observe(step.next_observation))

    def final_verdicts(self, memory_state: MonitorSetState) -> dict[str, MonitorVerdict]:
        """Each constraint's verdict at the end of the episode (pending = violated)."""
        return self.monitors.final_verdicts(memory_state)

    def conflicts(
        self,
        alphabet: Iterable[AbstractSet[str]],
        rules: Iterable[Formula] = (),
        max_depth: int = 32,
    ) -> tuple[str, ...]:
        """Names of constraints that cannot all hold on one trace over ``alphabet`` with the
        domain ``rules`` (a minimal such set); ``()`` when they are jointly satisfiable."""
        named: Mapping[str, Formula] = {m.name: m.formula for m in self.monitors}
        return minimal_conflict(named, alphabet, rules, max_depth)

    def _violation(
        self, before: MonitorSetState, after: MonitorSetState, names: tuple[str, ...]
    ) -> str:
        parts = []
        for name in names:
            m = self.monitors[name]
            what = f'"{m.text}"' if m.text else name
            if before[name].verdict is MonitorVerdict.VIOLATED:
                parts.append(f"{what} was already violated earlier")
                continue
            change = describe_change(before.labels, after.labels, m.atoms)
            parts.append(f"violates {what} [{m.formula}]; state change: {change}")
        return "; ".join(parts)

    def _pending(self, after: MonitorSetState, names: tuple[str, ...]) -> str:
        parts = []
        for name in names:
            m = self.monitors[name]
            what = f'"{m.text}"' if m.text else name
            parts.append(f"pending: {what} (still to meet: {strip_end(after[name].formula)})")
        return "; ".join(parts)
