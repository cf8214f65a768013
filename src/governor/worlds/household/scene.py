"""VirtualHome scene graphs: what never changes in the symbolic household simulator.

A :class:`SceneGraph` holds the objects (class name, category, properties, bounding box, room),
their initial states and INSIDE/ON relations, what each object faces, and which objects lie
within reach of each other; :class:`State` holds what actions change. Objects are named by class
name; room names are canonical (``bathroom``, ``bedroom``, ``kitchen``, ``living_room``:
VirtualHome's ``livingroom`` becomes ``living_room``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from governor.data import DATA_ENV_VAR, shared_data_dir
from governor.errors import ConfigError, expected
from governor.worlds.household.node import Node
from governor.worlds.household.state import State

ROOM_NAMES = ("bathroom", "bedroom", "kitchen", "living_room")
SPELLING_ALIASES = {
    "toliet": "toilet",
    "lighswitch": "lightswitch",
    "coffemaker": "coffeemaker",
    "coffeemachine": "coffeemaker",
    "frigde": "fridge",
    "firdge": "fridge",
}
"""Misspellings and paraphrases found in the Safety Chip data, keyed like :func:`name_key`."""
REACH = 1.5
"""VirtualHome's CLOSE distance: a centre within this many metres of the other's bounding box."""


def name_key(name: str) -> str:
    """The spelling-insensitive key of a name: lower case, without spaces or underscores."""
    return name.lower().replace("_", "").replace(" ", "").replace("-", "")


def safety_chip_dir(data_dir: str | Path | None = None) -> Path:
    """The Safety Chip data folder (``task_vh.json``, ``tasks/``, ``TestScene1_graph.json``).

    ``data_dir`` may name that folder or the shared data folder holding ``safety_chip/``.
    """
    root = Path(data_dir).expanduser() if data_dir is not None else shared_data_dir()
    for candidate in (root, root / "safety_chip"):
        if (candidate / "task_vh.json").is_file():
            return candidate
    found = "no task_vh.json" if root.is_dir() else f"no folder {root}"
    raise ConfigError(
        f"Safety Chip data: expected task_vh.json in {root / 'safety_chip'} (set ${DATA_ENV_VAR} "
        f"to the shared data folder or pass data_dir), found {found}"
    )


class SceneGraph:
    """A VirtualHome scene graph: objects, their initial states and relations, and reach."""

    def __init__(self, raw: Mapping[str, Any], *, reach: float = REACH, source: str = "") -> None:
        self.source = source
        self.reach = reach
        try:
            nodes, edges = _parse(raw)
        except (KeyError, TypeError, ValueError) as exc:
            what = "nodes and edges as VirtualHome writes them"
            raise ConfigError(f"scene graph {source}: {expected(what, repr(exc))}") from exc
        self.nodes: dict[int, Node] = {n.id: n for n in nodes}
        self.rooms: dict[str, int] = {n.name: n.id for n in nodes if n.is_room}
        self.initial_flags = frozenset(_initial_flags(raw, self.nodes))
        self.initial_relations = frozenset(e for e in edges if e[1] in ("INSIDE", "ON"))
        facing: dict[int, set[int]] = {}
        for a, rel, b in edges:
            if rel == "FACING":
                facing.setdefault(a, set()).add(b)
        self.facing = {a: frozenset(b) for a, b in facing.items()}
        self.by_name: dict[str, tuple[int, ...]] = {}
        for node in sorted(nodes, key=lambda n: n.id):
            self.by_name[node.name] = (*self.by_name.get(node.name, ()), node.id)
        self._keys = {name_key(name): name for name in self.by_name}
        self._within_reach = _reach_table(self.nodes, reach)

    @classmethod
    def load(cls, path: str | Path | None = None, *, reach: float = REACH) -> SceneGraph:
        """Read a VirtualHome graph JSON (default: the Safety Chip ``TestScene1_graph.json``)."""
        path = Path(path) if path is not None else safety_chip_dir() / "TestScene1_graph.json"
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
        except OSError as exc:
            raise ConfigError(f"cannot read scene graph {path}: {exc.strerror}") from exc
        except json.JSONDecodeError as exc:
            raise ConfigError(f"scene graph {path}: {expected('JSON', exc.msg)}") from exc
        return cls(raw, reach=reach, source=str(path))

    def __repr__(self) -> str:
        return f"SceneGraph({self.source!r}, {len(self.nodes)} nodes)"

    def resolve(self, name: str) -> str | None:
        """The scene's class name for ``name`` (any case, spaces or underscores, known misspellings)."""
        key = name_key(name)
        return self._keys.get(SPELLING_ALIASES.get(key, key))

    def within_reach(self, node_id: int) -> frozenset[int]:
        """Objects of the same room within reach of ``node_id`` where the scene put them."""
        return self._within_reach.get(node_id, frozenset({node_id}))

    def initial_state(self, room: str) -> State:
        """The agent standing in ``room``, holding nothing, reaching nothing; objects as loaded."""
        name = self.resolve(room)
        if name not in self.rooms:
            raise ConfigError(f"room: {expected(' or '.join(sorted(self.rooms)), room)}")
        return State(
            self, self.rooms[name], flags=self.initial_flags, relations=self.initial_relations
        )


def canonical_room(class_name: str) -> str:
    """The canonical room name of a VirtualHome room class (``livingroom`` -> ``living_room``)."""
    key = name_key(class_name)
    return next((room for room in ROOM_NAMES if name_key(room) == key), class_name)


def _parse(raw: Mapping[str, Any]) -> tuple[list[Node], list[tuple[int, str, int]]]:
    """The nodes (without the character) and the edges between them."""
    raw_nodes = [n for n in raw["nodes"] if n["category"] != "Characters"]
    ids = {int(n["id"]) for n in raw_nodes}
    rooms = {int(n["id"]) for n in raw_nodes if n["category"] == "Rooms"}
    edges = [(int(e["from_id"]), str(e["relation_type"]), int(e["to_id"])) for e in raw["edges"]]
    edges = [e for e in edges if e[0] in ids and e[2] in ids]
    room_of = {a: b for a, rel, b in edges if rel == "INSIDE" and b in rooms}
    nodes = []
    for n in raw_nodes:
        i, box = int(n["id"]), n.get("bounding_box") or {}
        name = canonical_room(n["class_name"]) if i in rooms else str(n["class_name"])
        props = frozenset(str(p) for p in n["properties"])
        center, size = _vec(box.get("center")), _vec(box.get("size"))
        nodes.append(Node(i, name, str(n["category"]), props, center, size, room_of.get(i)))
    return nodes, edges


def _vec(values: Any) -> tuple[float, float, float]:
    x, y, z = (float(v) for v in values) if values is not None else (0.0, 0.0, 0.0)
    return (x, y, z)


def _initial_flags(raw: Mapping[str, Any], nodes: Mapping[int, Node]) -> set[tuple[int, str]]:
    """Object states; a switch with neither ON nor OFF is OFF, an openable thing CLOSED."""
    flags: set[tuple[int, str]] = set()
    for n in raw["nodes"]:
        node = nodes.get(int(n["id"]))
        if node is None:
            continue
        states = {str(s) for s in n.get("states", ())}
        if "HAS_SWITCH" in node.properties and not states & {"ON", "OFF"}:
            states.add("OFF")
        if "CAN_OPEN" in node.properties and not states & {"OPEN", "CLOSED"}:
            states.add("CLOSED")
        flags.update((node.id, s) for s in states)
    return flags


def _reach_table(nodes: Mapping[int, Node], reach: float) -> dict[int, frozenset[int]]:
    """For each object, the objects of its room whose centre is within reach of its box or back."""
    items = [n for n in nodes.values() if not n.is_room and n.room is not None]
    if not items:
        return {}
    ids = np.array([n.id for n in items])
    rooms = np.array([n.room for n in items])
    center = np.array([n.center for n in items])
    half = np.array([n.size for n in items]) / 2.0
    # gap[i, j]: distance from the centre of j to the box of i
    gap = np.maximum(np.abs(center[None, :, :] - center[:, None, :]) - half[:, None, :], 0.0)
    dist = np.sqrt((gap**2).sum(axis=-1))
    close = (np.minimum(dist, dist.T) <= reach) & (rooms[:, None] == rooms[None, :])
    return {int(ids[i]): frozenset(int(j) for j in ids[close[i]]) for i in range(len(items))}
