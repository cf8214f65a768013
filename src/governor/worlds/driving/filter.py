"""The driving task's safety filter: the exact grid value as the monitor Q and its fallback.

:func:`state_of` reads the state (x, y, theta) from an observation (the mapping the environment
returns, or the state itself); :func:`exact_filter` is the privileged filter of ReGuard, the grid
Q at that state through the generic :class:`~governor.safety_values.filter.SafetyFilter` over
the actions steer right, straight, left.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from governor.errors import EnvError, expected
from governor.safety_values.filter import SafetyFilter, ValueFallback
from governor.worlds.driving.env import LABELS
from governor.worlds.driving.grid_value import GridValue


def state_of(observation: Any) -> np.ndarray:
    """The state (px, py, theta) in an observation: a mapping with "state", or the state itself."""
    raw = observation["state"] if isinstance(observation, Mapping) else observation
    state = np.asarray(raw, dtype=np.float64)
    if state.shape != (3,):
        raise EnvError(f"observation state: {expected('3 numbers (x, y, theta)', raw)}")
    return state


def exact_filter(
    grid_value: GridValue, margin: float | None = None
) -> tuple[SafetyFilter, ValueFallback]:
    """The privileged filter: grid Q at the observation's state (margin: the grid's resolution)."""

    def q_values(observation: Any) -> np.ndarray:
        return grid_value.q(state_of(observation))

    threshold = grid_value.resolution if margin is None else margin
    return SafetyFilter(q_values, threshold, labels=LABELS), ValueFallback(q_values)
