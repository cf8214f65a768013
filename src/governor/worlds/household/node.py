"""One object of a VirtualHome scene graph (rooms included), as the household simulator sees it.

The bottom of the household world: imports nothing from it (the scene, the state and the rules
all read nodes).
"""

from __future__ import annotations

import dataclasses

STRUCTURAL = frozenset({"Walls", "Ceiling", "Floor", "Floors", "Rooms", "Characters"})
"""Categories that are never the object of an action (walls, floors, ceilings, rooms, the agent)."""


@dataclasses.dataclass(frozen=True)
class Node:
    """One object of the scene (rooms included; the VirtualHome character is not a node here)."""

    id: int
    name: str
    category: str
    properties: frozenset[str]
    center: tuple[float, float, float]
    size: tuple[float, float, float]
    room: int | None

    @property
    def is_room(self) -> bool:
        return self.category == "Rooms"

    @property
    def actionable(self) -> bool:
        """Whether actions may take this object (not a wall, floor, ceiling, room or agent)."""
        return self.category not in STRUCTURAL
