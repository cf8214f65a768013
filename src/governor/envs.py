"""The worlds' environments, registered with gymnasium by entry point when governor is imported.

Registration names each environment by a ``"module:Class"`` string, so it imports neither the
worlds nor torch: ``import governor`` then ``gymnasium.make("governor/Driving-v0")`` works, and
the world's module is imported only when an environment is made.

``governor/Driving-v0``: ReGuard's Agentic Driving; pass ``params=`` to change the geometry.
``governor/Commerce-v0``: ReGuard's Agentic Commerce; pass ``params=`` to change the budget, the
window of actions or the catalogue.
``governor/Household-v0``: the Safety Chip's household; pass ``task=`` (a task key such as
``"rooms/0_10"``) and ``params=``.
"""

from __future__ import annotations

DRIVING_ID = "governor/Driving-v0"
COMMERCE_ID = "governor/Commerce-v0"
HOUSEHOLD_ID = "governor/Household-v0"

ENTRY_POINTS = {
    DRIVING_ID: "governor.worlds.driving.env:DrivingEnv",
    COMMERCE_ID: "governor.worlds.commerce.env:CommerceEnv",
    HOUSEHOLD_ID: "governor.worlds.household.env:HouseholdEnv",
}


def register_envs() -> None:
    """Register governor's environments with gymnasium; calling it again does nothing."""
    import gymnasium

    for env_id, entry_point in ENTRY_POINTS.items():
        if env_id not in gymnasium.registry:
            gymnasium.register(id=env_id, entry_point=entry_point)
