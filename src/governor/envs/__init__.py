"""Environments (gymnasium API). Importing this package registers them with gymnasium.

``governor/Driving-v0``: ReGuard's Agentic Driving (:class:`DrivingEnv`); pass ``params=`` to
:func:`gymnasium.make` to change the geometry.
"""

from __future__ import annotations

import gymnasium

from governor.envs.driving import (
    SYSTEM_PROMPT,
    DrivingEnv,
    DrivingParams,
    describe,
    margin,
    step_states,
    system_prompt,
)

DRIVING_ID = "governor/Driving-v0"


def register_envs() -> None:
    """Register governor's environments with gymnasium; calling it again does nothing."""
    if DRIVING_ID not in gymnasium.registry:
        gymnasium.register(id=DRIVING_ID, entry_point="governor.envs.driving:DrivingEnv")


register_envs()

__all__ = [
    "DRIVING_ID",
    "SYSTEM_PROMPT",
    "DrivingEnv",
    "DrivingParams",
    "describe",
    "margin",
    "register_envs",
    "step_states",
    "system_prompt",
]
