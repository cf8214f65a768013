"""Executing, previewing and listing household actions (pure functions of the state)."""

from __future__ import annotations

import functools

from governor.worlds.household.actions import Action, Failure, ground, parse_action
from governor.worlds.household.labels import labels
from governor.worlds.household.node import Node
from governor.worlds.household.rules import RULES
from governor.worlds.household.scene import ROOM_NAMES, SceneGraph
from governor.worlds.household.state import State

PLANNER_VERBS = (
    "WALK",
    "GRAB",
    "OPEN",
    "CLOSE",
    "SWITCHON",
    "SWITCHOFF",
    "PUTIN",
    "PUTBACK",
    "SIT",
    "LIE",
    "STANDUP",
    "DONE",
)
"""The verbs :func:`available_actions` lists by default (every verb of ARITY can be executed)."""
WALK_TARGET_PROPERTIES = frozenset(
    {
        "GRABBABLE",
        "CAN_OPEN",
        "HAS_SWITCH",
        "SITTABLE",
        "LIEABLE",
        "SURFACES",
        "CONTAINERS",
        "LOOKABLE",
        "READABLE",
        "EATABLE",
        "DRINKABLE",
        "HAS_PLUG",
        "RECIPIENT",
    }
)
"""Objects with one of these properties are listed as WALK targets."""
_OBJECT_VERBS = ("GRAB", "OPEN", "CLOSE", "SWITCHON", "SWITCHOFF", "SIT", "LIE")
_NEEDS = {
    "GRAB": {"GRABBABLE"},
    "OPEN": {"CAN_OPEN"},
    "CLOSE": {"CAN_OPEN"},
    "SWITCHON": {"HAS_SWITCH"},
    "SWITCHOFF": {"HAS_SWITCH"},
    "SIT": {"SITTABLE"},
    "LIE": {"LIEABLE"},
    "PUTIN": {"CONTAINERS", "SURFACES"},
    "PUTBACK": {"SURFACES"},
}


def execute(state: State, action: str | Action) -> tuple[State, str | None]:
    """The next state and None, or the unchanged state and why a precondition failed.

    A malformed action raises EnvError (see :func:`parse_action`).
    """
    act = parse_action(action)
    try:
        ids = [ground(state, act.verb, name, slot) for slot, name in enumerate(act.objects)]
        return RULES[act.verb](state, *ids), None
    except Failure as failure:
        return state, f"{act.bare}: {failure}"


def preview(state: State, action: str | Action) -> tuple[State, frozenset[str], str | None]:
    """What ``action`` would do, without doing it: (next state, its labels, error or None)."""
    nxt, error = execute(state, action)
    return nxt, labels(nxt), error


def _executable(state: State, verb: str, *names: str) -> bool:
    try:
        ids = [ground(state, verb, name, slot) for slot, name in enumerate(names)]
        RULES[verb](state, *ids)
    except Failure:
        return False
    return True


def _walk_target(node: Node) -> bool:
    return node.actionable and not node.is_room and bool(node.properties & WALK_TARGET_PROPERTIES)


def available_actions(state: State, verbs: tuple[str, ...] = PLANNER_VERBS) -> list[str]:
    """Executable actions in script form without ids, for a planner to choose from.

    Listed: WALK to the other rooms and to objects of the agent's room (standing only); GRAB,
    OPEN, CLOSE, SWITCHON, SWITCHOFF, SIT and LIE on objects within reach; PUTIN and PUTBACK of
    held objects into or onto objects within reach; STANDUP; DONE. Only ``verbs`` are listed.
    Every listed action is executable; other executable actions (FIND, TURNTO, ...) are not listed.
    """
    scene, out = state.scene, []
    if "WALK" in verbs and state.posture == "standing":
        out += [
            f"[WALK] <{room}>"
            for room in ROOM_NAMES
            if room in scene.rooms and scene.rooms[room] != state.room
        ]
        here = {
            n.name
            for n in scene.nodes.values()
            if _walk_target(n) and state.room_of(n.id) == state.room
        }
        out += [f"[WALK] <{name}>" for name in sorted(here) if _executable(state, "WALK", name)]
    reach = sorted(
        {scene.nodes[i].name for i in state.near | set(state.holding) if scene.nodes[i].actionable}
    )
    for verb in _OBJECT_VERBS:
        if verb in verbs:
            out += [f"[{verb}] <{name}>" for name in reach if _executable(state, verb, name)]
    held_names = sorted({scene.nodes[h].name for h in state.holding})
    for verb in ("PUTIN", "PUTBACK"):
        if verb in verbs:
            out += [
                f"[{verb}] <{x}> <{y}>"
                for x in held_names
                for y in reach
                if y != x and _executable(state, verb, x, y)
            ]
    if "STANDUP" in verbs and state.posture != "standing":
        out.append("[STANDUP]")
    if "DONE" in verbs:
        out.append("[DONE]")
    return out


@functools.lru_cache(maxsize=8)
def action_catalogue(scene: SceneGraph) -> tuple[str, ...]:
    """Every action :func:`available_actions` can list in ``scene`` (a fixed, ordered list)."""
    nodes = [n for n in scene.nodes.values() if n.actionable and not n.is_room]

    def having(props: set[str]) -> list[str]:
        return sorted({n.name for n in nodes if n.properties & props})

    out = [f"[WALK] <{room}>" for room in ROOM_NAMES if room in scene.rooms]
    out += [f"[WALK] <{name}>" for name in sorted({n.name for n in nodes if _walk_target(n)})]
    for verb in _OBJECT_VERBS:
        out += [f"[{verb}] <{name}>" for name in having(_NEEDS[verb])]
    for verb in ("PUTIN", "PUTBACK"):
        out += [
            f"[{verb}] <{x}> <{y}>"
            for x in having({"GRABBABLE"})
            for y in having(_NEEDS[verb])
            if y != x
        ]
    out += ["[STANDUP]", "[DONE]"]
    return tuple(out)
