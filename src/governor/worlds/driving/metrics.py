"""Recovery rollouts on the driving task's true dynamics: the truths of ReGuard's monitor metrics.

:func:`rollout` runs a recovery policy from a state, :func:`action_outcome` executes a proposed
action first, and :func:`fallback_policy` turns a guard's fallback into a recovery policy; the
world-free measures they feed (:func:`~governor.safety_values.metrics.recovered`, monitor
accuracy, rollout F1) are in :mod:`governor.safety_values.metrics`.
"""

from __future__ import annotations

import numpy as np

from governor.core import Fallback, Trajectory
from governor.errors import ConfigError, expected
from governor.safety_values.metrics import Outcome, RecoveryPolicy
from governor.worlds.driving.env import DrivingParams, describe, margin, step_states


def rollout(
    params: DrivingParams, state: np.ndarray, policy: RecoveryPolicy, steps: int
) -> Outcome:
    """Run ``policy`` from ``state`` for up to ``steps`` steps on the true dynamics.

    "failed": a visited state (``state`` included) has l < 0; "goal": x >= goal_x was reached
    first (the episode ends there); "stopped": the policy returned None (a stop fallback);
    "survived": ``steps`` steps without failure.
    """
    s = np.asarray(state, dtype=np.float64).reshape(3)
    for i in range(steps + 1):
        if float(margin(params, s)) < 0.0:
            return "failed"
        if s[0] >= params.goal_x:
            return "goal"
        if i == steps:
            break
        action = policy(s)
        if action is None:
            return "stopped"
        s = step_states(params, s, int(action))
    return "survived"


def action_outcome(
    params: DrivingParams,
    state: np.ndarray,
    action: int,
    policy: RecoveryPolicy,
    steps: int,
) -> Outcome:
    """The outcome of executing ``action`` at ``state`` and then ``policy`` (``steps`` in all).

    ``steps`` is what is left of the horizon at ``state`` (``horizon - t``).
    """
    if steps < 1:
        raise ConfigError(f"steps: {expected('at least 1 (the action itself)', steps)}")
    s = np.asarray(state, dtype=np.float64).reshape(3)
    return rollout(params, step_states(params, s, int(action)), policy, steps - 1)


def fallback_policy(fallback: Fallback, params: DrivingParams) -> RecoveryPolicy:
    """A guard's fallback as a recovery policy of the state (it sees the state and its text)."""

    def policy(state: np.ndarray) -> int | None:
        observation = {"state": state.astype(np.float32), "text": describe(params, state)}
        action = fallback.act(Trajectory(observation), ())
        return None if action is None else int(action)

    return policy
