"""The immutable state of the symbolic household simulator: what actions change.

A state carries its scene as a :class:`Scene`: what it reads of a
:class:`~governor.worlds.household.scene.SceneGraph`, which builds states (so this module imports
only :mod:`governor.worlds.household.node` from the household world, never the scene).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping
from typing import Any, Protocol

from governor.worlds.household.node import Node


class Scene(Protocol):
    """What a state and the code reading ``state.scene`` use of a scene graph."""

    @property
    def nodes(self) -> Mapping[int, Node]: ...

    @property
    def rooms(self) -> Mapping[str, int]: ...

    @property
    def facing(self) -> Mapping[int, frozenset[int]]: ...

    @property
    def by_name(self) -> Mapping[str, tuple[int, ...]]: ...

    def resolve(self, name: str) -> str | None: ...

    def within_reach(self, node_id: int) -> frozenset[int]: ...


@dataclasses.dataclass(frozen=True)
class State:
    """What actions change; immutable and hashable (the scene is carried along, not compared).

    ``spot`` is the object the agent stands at (None: the middle of the room); ``near`` what is
    within its reach; ``touched`` what the last action put a hand on; ``moved`` the objects no
    longer where the scene put them; ``flags`` (object, state) pairs such as (305, "OPEN");
    ``relations`` (object, "INSIDE" | "ON", other) triples, rooms included.
    """

    scene: Scene = dataclasses.field(repr=False, compare=False)
    room: int
    spot: int | None = None
    near: frozenset[int] = frozenset()
    facing: frozenset[int] = frozenset()
    posture: str = "standing"
    seat: int | None = None
    holding: tuple[int, ...] = ()
    touched: frozenset[int] = frozenset()
    moved: frozenset[int] = frozenset()
    flags: frozenset[tuple[int, str]] = frozenset()
    relations: frozenset[tuple[int, str, int]] = frozenset()

    def replace(self, **changes: Any) -> State:
        """A copy with ``changes``."""
        return dataclasses.replace(self, **changes)

    @functools.cached_property
    def _states(self) -> dict[int, frozenset[str]]:
        out: dict[int, set[str]] = {}
        for i, s in self.flags:
            out.setdefault(i, set()).add(s)
        return {i: frozenset(s) for i, s in out.items()}

    @functools.cached_property
    def _outgoing(self) -> dict[int, tuple[tuple[str, int], ...]]:
        out: dict[int, list[tuple[str, int]]] = {}
        for a, rel, b in sorted(self.relations):
            out.setdefault(a, []).append((rel, b))
        return {a: tuple(v) for a, v in out.items()}

    def states_of(self, obj: int) -> frozenset[str]:
        """The states of ``obj`` (OPEN, CLOSED, ON, OFF, PLUGGED_IN, ...)."""
        return self._states.get(obj, frozenset())

    def related(self, obj: int, relation: str) -> tuple[int, ...]:
        """The objects ``obj`` stands in ``relation`` ("INSIDE" or "ON") to, rooms included."""
        return tuple(b for rel, b in self._outgoing.get(obj, ()) if rel == relation)

    def room_of(self, obj: int) -> int | None:
        """The room ``obj`` is in now (a room is in itself)."""
        if self.scene.nodes[obj].is_room:
            return obj
        return next((b for b in self.related(obj, "INSIDE") if self.scene.nodes[b].is_room), None)

    def enclosure(self, obj: int) -> int | None:
        """The closed container ``obj`` is inside, directly or through other containers, if any."""
        seen: set[int] = set()
        todo = [b for b in self.related(obj, "INSIDE") if not self.scene.nodes[b].is_room]
        while todo:
            box = todo.pop()
            if box in seen:
                continue
            seen.add(box)
            if "CAN_OPEN" in self.scene.nodes[box].properties and "OPEN" not in self.states_of(box):
                return box
            todo.extend(b for b in self.related(box, "INSIDE") if not self.scene.nodes[b].is_room)
        return None

    def reach_from(self, obj: int) -> frozenset[int]:
        """What is within reach of someone standing at ``obj``, objects that moved included."""
        anchor = self.anchor(obj)
        if anchor is None:
            return frozenset(self.holding)
        base = self.scene.within_reach(anchor)
        stay = {i for i in base if i not in self.moved and i not in self.holding}
        came = {i for i in self.moved if self.anchor(i) in base}
        return frozenset(stay | came | set(self.holding) | {obj})

    def anchor(self, obj: int) -> int | None:
        """The object that has not moved that ``obj`` now sits at (None when held)."""
        seen: set[int] = set()
        while obj in self.moved and obj not in seen:
            seen.add(obj)
            if obj in self.holding:
                return None
            places = [
                b
                for b in self.related(obj, "INSIDE") + self.related(obj, "ON")
                if not self.scene.nodes[b].is_room
            ]
            if not places:
                return obj
            obj = places[0]
        return None if obj in self.holding else obj
