"""Environments (gymnasium API). Importing this package registers them with gymnasium.

``governor/Driving-v0``: ReGuard's Agentic Driving (:class:`DrivingEnv`); pass ``params=`` to
:func:`gymnasium.make` to change the geometry.
``governor/Commerce-v0``: ReGuard's Agentic Commerce (:class:`CommerceEnv`); pass ``params=`` to
change the budget, the window of actions or the catalogue.
``governor/Household-v0``: Safety Chip's household (:class:`HouseholdEnv`); pass ``task=`` (a
task key such as ``"rooms/0_10"``) and ``params=``; agents may drive :class:`HouseholdSim` directly.
"""

from __future__ import annotations

import gymnasium

from governor.envs.commerce import CommerceEnv, CommerceParams
from governor.envs.driving import (
    SYSTEM_PROMPT,
    DrivingEnv,
    DrivingParams,
    describe,
    margin,
    step_states,
    system_prompt,
)
from governor.envs.household import HouseholdEnv, HouseholdParams, HouseholdSim, load_tasks

DRIVING_ID = "governor/Driving-v0"
COMMERCE_ID = "governor/Commerce-v0"
HOUSEHOLD_ID = "governor/Household-v0"


def register_envs() -> None:
    """Register governor's environments with gymnasium; calling it again does nothing."""
    if DRIVING_ID not in gymnasium.registry:
        gymnasium.register(id=DRIVING_ID, entry_point="governor.envs.driving:DrivingEnv")
    if COMMERCE_ID not in gymnasium.registry:
        gymnasium.register(id=COMMERCE_ID, entry_point="governor.envs.commerce:CommerceEnv")
    if HOUSEHOLD_ID not in gymnasium.registry:
        gymnasium.register(id=HOUSEHOLD_ID, entry_point="governor.envs.household:HouseholdEnv")


register_envs()

__all__ = [
    "COMMERCE_ID",
    "DRIVING_ID",
    "HOUSEHOLD_ID",
    "SYSTEM_PROMPT",
    "CommerceEnv",
    "CommerceParams",
    "DrivingEnv",
    "DrivingParams",
    "HouseholdEnv",
    "HouseholdParams",
    "HouseholdSim",
    "describe",
    "load_tasks",
    "margin",
    "register_envs",
    "step_states",
    "system_prompt",
]
