"""Safety value filters as governor plug-ins: the monitor Q and the fallback argmax_a Q.

The switching rule is least restrictive: the base action runs iff Q(s, a) > margin, otherwise the
fallback takes the action of largest Q. Actions are the ints 0..n-1 of a task; labels name them in
verdicts (a world passes its own: the driving world's "Steer right", "Steer straight", ...).
``q_values`` maps an observation to Q for every action: an exact value reads the state (the
driving world's :func:`~governor.worlds.driving.filter.exact_filter`); learned values may read the
text.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from governor.core import Constraint, Fallback, Trajectory, Verdict
from governor.errors import ConfigError, expected

QValues = Callable[[Any], np.ndarray]


def action_choices(n_actions: int) -> str:
    """The actions 0..n-1 in words: "0, 1 or 2" (a long range as "0..n-1")."""
    if n_actions <= 1:
        return "0"
    if n_actions > 6:
        return f"0..{n_actions - 1}"
    return ", ".join(str(a) for a in range(n_actions - 1)) + f" or {n_actions - 1}"


class SafetyFilter(Constraint):
    """Admits action a iff Q(s, a) > margin, with Q from ``q_values(observation)``.

    Actions are the ints 0..n_actions-1 and ``labels[a]`` names action a in verdicts; labels
    alone fix the count, a count alone names the actions "action a". One of them is required.
    """

    def __init__(
        self,
        q_values: QValues,
        margin: float,
        name: str = "safety_filter",
        *,
        n_actions: int | None = None,
        labels: Sequence[str] | None = None,
    ) -> None:
        if labels is None and n_actions is None:
            raise ConfigError("SafetyFilter: expected labels or n_actions, found neither")
        if labels is None:
            labels = [f"action {a}" for a in range(n_actions or 0)]
        if n_actions is not None and n_actions != len(labels):
            raise ConfigError(f"labels: {expected(f'one per action ({n_actions})', len(labels))}")
        self.q_values = q_values
        self.margin = float(margin)
        self.name = name
        self.labels = tuple(labels)
        self.n_actions = len(self.labels)

    def action_index(self, action: Any) -> int | None:
        """The action as an int 0..n_actions-1, or None when it is not one (bools are not)."""
        if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)):
            return None
        return int(action) if 0 <= int(action) < self.n_actions else None

    def check(self, traj: Trajectory, action: Any) -> Verdict:
        index = self.action_index(action)
        if index is None:
            choices = action_choices(self.n_actions)
            return Verdict.failed(self.name, f"expected an action {choices}, found {action!r}")
        q = float(np.asarray(self.q_values(traj.observation))[index])
        what = self.labels[index].lower()
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
