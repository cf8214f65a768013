"""Safety value filters as governor plug-ins: the monitor Q and the fallback argmax_a Q.

The switching rule is least restrictive: the base action runs iff Q(s, a) > margin, otherwise the
fallback takes the action of largest Q. Actions are the driving task's ints 0, 1, 2 (right,
straight, left). ``q_values`` maps an observation to Q for every action: the exact grid value reads
the state; learned values may read the text.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from governor.core import Constraint, Fallback, Trajectory, Verdict
from governor.errors import EnvError, expected
from governor.worlds.driving.env import LABELS, action_index
from governor.worlds.driving.grid_value import GridValue

QValues = Callable[[Any], np.ndarray]


def state_of(observation: Any) -> np.ndarray:
    """The state (px, py, theta) in an observation: a mapping with "state", or the state itself."""
    raw = observation["state"] if isinstance(observation, Mapping) else observation
    state = np.asarray(raw, dtype=np.float64)
    if state.shape != (3,):
        raise EnvError(f"observation state: {expected('3 numbers (x, y, theta)', raw)}")
    return state


class SafetyFilter(Constraint):
    """Admits action a iff Q(s, a) > margin, with Q from ``q_values(observation)``."""

    def __init__(self, q_values: QValues, margin: float, name: str = "safety_filter") -> None:
        self.q_values = q_values
        self.margin = float(margin)
        self.name = name

    def check(self, traj: Trajectory, action: Any) -> Verdict:
        index = action_index(action)
        if index is None:
            return Verdict.failed(self.name, f"expected an action 0, 1 or 2, found {action!r}")
        q = float(np.asarray(self.q_values(traj.observation))[index])
        what = LABELS[index].lower()
        if q > self.margin:
            text = f"{what} keeps the safety value {q:.3f} > margin {self.margin:.3f}"
        else:
            text = f"{what} leads toward failure: safety value {q:.3f} <= margin {self.margin:.3f}"
        return Verdict.from_margin(self.name, q, threshold=self.margin, descriptor=text)


class ValueFallback(Fallback):
    """The safest action by the same Q: argmax_a Q(s, a)."""

    def __init__(self, q_values: QValues, name: str = "value_fallback") -> None:
        self.q_values = q_values
        self.name = name

    def act(self, traj: Trajectory, verdicts: Sequence[Verdict]) -> int:
        return int(np.argmax(np.asarray(self.q_values(traj.observation))))


def exact_filter(
    grid_value: GridValue, margin: float | None = None
) -> tuple[SafetyFilter, ValueFallback]:
    """The privileged filter: grid Q at the observation's state (margin: the grid's resolution)."""

    def q_values(observation: Any) -> np.ndarray:
        return grid_value.q(state_of(observation))

    threshold = grid_value.resolution if margin is None else margin
    return SafetyFilter(q_values, threshold), ValueFallback(q_values)
