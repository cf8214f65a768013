"""The one-step baseline (the paper's LlamaGuard-style monitor) and its implicit fallback: stop.

The monitor only asks whether the very next state fails; it knows nothing of what comes after,
and when it rejects, nothing is offered instead (the episode is aborted).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from governor.core import Constraint, Fallback, Trajectory, Verdict
from governor.worlds.driving.env import LABELS, DrivingParams, action_index, margin, step_states
from governor.worlds.driving.filter import state_of


class OneStepMonitor(Constraint):
    """Admits an action iff its next state (by the true dynamics) does not fail: l(f(s, a)) >= 0."""

    def __init__(self, params: DrivingParams, name: str = "myopic") -> None:
        self.params = params
        self.name = name

    def check(self, traj: Trajectory, action: Any) -> Verdict:
        index = action_index(action)
        if index is None:
            return Verdict.failed(self.name, f"expected an action 0, 1 or 2, found {action!r}")
        nxt = step_states(self.params, state_of(traj.observation), index)
        level = float(margin(self.params, nxt))
        what = LABELS[index].lower()
        if level >= 0.0:
            return Verdict.allow(
                self.name, margin=level, descriptor=f"{what} does not fail next step"
            )
        return Verdict.reject(
            self.name,
            -level,
            f"{what} fails at the next step: margin {level:.3f} < 0",
            margin=level,
        )


class StopFallback(Fallback):
    """No recovery: returns None, so the episode is aborted."""

    name = "stop"

    def act(self, traj: Trajectory, verdicts: Sequence[Verdict]) -> None:
        return None
