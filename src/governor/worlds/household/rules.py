"""Preconditions and effects of the household actions, after VirtualHome's evolving graph.

Each rule takes the state and the grounded object ids and returns the next state or raises
:class:`Failure` naming the precondition that does not hold. Where this model departs from
VirtualHome, so that the Safety Chip programs run without Unity's path finding:

- reach is geometric (VirtualHome's CLOSE: a centre within 1.5 m of the other's box, same room);
- WALK <object> moves the agent there, facing it, with what is within reach of it in reach;
  WALK <room> leaves it in the middle of the room with nothing in reach;
- FIND <object> in the agent's room keeps what was in reach and adds what is within reach of the
  object (the agent looks around the room); in another room it is WALK; sitting or lying, the
  object must already be in reach; FIND faces the object;
- LOOKAT, POINTAT and WATCH need the object faced (after FIND, WALK, TURNTO, or SIT facing it);
- PUTIN needs a destination with CONTAINERS or SURFACES, open if it can be opened;
  PUTBACK (put on) a destination with SURFACES;
- doors are ignored: every room can be reached from every room.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from governor.worlds.household.actions import Failure, name_of
from governor.worlds.household.state import State

SIT_LIMIT = {"couch": 4, "bed": 4, "chair": 1, "loveseat": 2, "sofa": 4, "toilet": 1, "bench": 2}
"""How many things (objects on it included) a seat takes; 1 for anything else (VirtualHome's)."""
LIE_LIMIT = {"couch": 2, "bathtub": 2, "bed": 3, "loveseat": 2, "sofa": 2, "bench": 1}
"""How many things a bed or sofa takes when lying on it; 1 for anything else (VirtualHome's)."""
HANDS = 2
"""Objects the agent can hold at once."""
WORDS = {
    "GRABBABLE": "grabbable",
    "CAN_OPEN": "openable",
    "HAS_SWITCH": "switchable",
    "HAS_PLUG": "pluggable",
    "SITTABLE": "sittable",
    "LIEABLE": "lieable",
    "LOOKABLE": "lookable",
    "MOVABLE": "movable",
    "DRINKABLE": "drinkable",
    "RECIPIENT": "a recipient",
    "EATABLE": "eatable",
    "CONTAINERS": "a container",
    "SURFACES": "a surface",
}
"""How error messages name a property."""
NOTHING: frozenset[int] = frozenset()

Rule = Callable[..., State]


def _require(ok: bool, reason: str) -> None:
    if not ok:
        raise Failure(reason)


def _the(state: State, obj: int | None) -> str:
    return f"the {name_of(state, obj)}"


def _has(state: State, obj: int, *props: str) -> None:
    """Require one of ``props``."""
    what = " or ".join(WORDS.get(p, p.lower()) for p in props)
    _require(
        bool(set(props) & state.scene.nodes[obj].properties), f"{_the(state, obj)} is not {what}"
    )


def _reach(state: State, obj: int) -> None:
    if obj in state.near or obj in state.holding:
        return
    how = "STANDUP, then WALK to it" if state.posture != "standing" else "WALK to it or FIND it"
    raise Failure(f"{_the(state, obj)} is not within reach; {how} first")


def _free_hand(state: State) -> None:
    _require(len(state.holding) < HANDS, "both hands are full")


def _not_enclosed(state: State, obj: int) -> None:
    box = state.enclosure(obj)
    _require(box is None, f"{_the(state, obj)} is inside the closed {name_of(state, box)}")


def _enter(state: State, room: int) -> State:
    """The agent (and what it holds) in ``room``."""
    if room == state.room:
        return state
    old = {(h, "INSIDE", state.room) for h in state.holding}
    new = {(h, "INSIDE", room) for h in state.holding}
    return state.replace(room=room, relations=(state.relations - old) | new)


def walk(state: State, obj: int) -> State:
    seated = f"the agent is {state.posture} on {_the(state, state.seat)}; STANDUP first"
    _require(state.posture == "standing", seated)
    _require(obj not in state.holding, f"the agent holds {_the(state, obj)}")
    if state.scene.nodes[obj].is_room:
        inside = _enter(state, obj)
        held = frozenset(state.holding)
        return inside.replace(spot=None, near=held, facing=NOTHING, touched=NOTHING)
    room = state.room_of(obj)
    there = _enter(state, room if room is not None else state.room)
    near = there.reach_from(obj)
    return there.replace(spot=obj, near=near, facing=frozenset({obj}), touched=NOTHING)


def find(state: State, obj: int) -> State:
    if obj in state.holding:
        return state.replace(facing=frozenset({obj}), touched=NOTHING)
    if state.posture != "standing":
        _reach(state, obj)
        return state.replace(facing=frozenset({obj}), touched=NOTHING)
    if state.scene.nodes[obj].is_room or state.room_of(obj) != state.room:
        return walk(state, obj)
    near = state.near | state.reach_from(obj)
    return state.replace(spot=obj, near=near, facing=frozenset({obj}), touched=NOTHING)


def grab(state: State, obj: int) -> State:
    _has(state, obj, "GRABBABLE")
    _require(obj not in state.holding, f"the agent already holds {_the(state, obj)}")
    _require(obj != state.seat, f"the agent is {state.posture} on {_the(state, obj)}")
    _reach(state, obj)
    _not_enclosed(state, obj)
    _free_hand(state)
    relations = {r for r in state.relations if r[0] != obj} | {(obj, "INSIDE", state.room)}
    return state.replace(
        holding=(*state.holding, obj),
        moved=state.moved | {obj},
        relations=frozenset(relations),
        near=state.near | {obj},
        touched=frozenset({obj}),
    )


def toggle(state: State, obj: int, prop: str, old: str, new: str, *, hand: bool = False) -> State:
    """OPEN/CLOSED, OFF/ON, PLUGGED_OUT/PLUGGED_IN: from ``old`` to ``new``."""
    _has(state, obj, prop)
    _reach(state, obj)
    if hand:
        _free_hand(state)
    states = state.states_of(obj)
    _require(new not in states, f"{_the(state, obj)} is already {new.lower().replace('_', ' ')}")
    if new in ("OPEN", "PLUGGED_OUT"):
        _require("ON" not in states, f"{_the(state, obj)} is still on")
    if new == "ON":
        _require("PLUGGED_OUT" not in states, f"{_the(state, obj)} is unplugged")
    flags = (state.flags - {(obj, old)}) | {(obj, new)}
    return state.replace(flags=flags, touched=frozenset({obj}))


def put(state: State, obj: int, dest: int, relation: str) -> State:
    """PUTIN (relation INSIDE) or PUTBACK (relation ON) a held object."""
    _require(obj in state.holding, f"the agent is not holding {_the(state, obj)}")
    _require(obj != dest, f"{_the(state, obj)} cannot go {relation.lower()} itself")
    if relation == "INSIDE":
        _has(state, dest, "CONTAINERS", "SURFACES")
        if "CAN_OPEN" in state.scene.nodes[dest].properties:
            _require("OPEN" in state.states_of(dest), f"{_the(state, dest)} is not open")
    else:
        _has(state, dest, "SURFACES")
    _reach(state, dest)
    room = state.room_of(dest)
    relations = {r for r in state.relations if r[0] != obj} | {(obj, relation, dest)}
    relations.add((obj, "INSIDE", room if room is not None else state.room))
    return state.replace(
        holding=tuple(h for h in state.holding if h != obj),
        relations=frozenset(relations),
        touched=frozenset({obj}),
    )


def turn_to(state: State, obj: int) -> State:
    here = state.room_of(obj) == state.room
    _require(here, f"{_the(state, obj)} is not in {_the(state, state.room)}")
    return state.replace(facing=frozenset({obj}), touched=NOTHING)


def look_at(state: State, obj: int, *, prop: str | None = None) -> State:
    if prop is not None:
        _has(state, obj, prop)
    faced = obj in state.facing or obj in state.holding
    _require(faced, f"the agent does not face {_the(state, obj)}; TURNTO it first")
    return state.replace(touched=NOTHING)


def settle(state: State, obj: int, posture: str) -> State:
    """SIT (posture sitting) or LIE (posture lying) on ``obj``."""
    prop, limits = ("SITTABLE", SIT_LIMIT) if posture == "sitting" else ("LIEABLE", LIE_LIMIT)
    _has(state, obj, prop)
    _require(state.posture != posture, f"the agent is already {posture}")
    _reach(state, obj)
    load = sum(1 for _, rel, b in state.relations if rel == "ON" and b == obj)
    name = name_of(state, obj)
    _require(load < limits.get(name, 1), f"there are too many things on the {name}")
    facing = state.facing | state.scene.facing.get(obj, NOTHING)
    near = state.near | state.reach_from(obj)
    return state.replace(
        posture=posture, seat=obj, spot=obj, facing=facing, near=near, touched=NOTHING
    )


def stand_up(state: State) -> State:
    _require(state.posture != "standing", "the agent is not sitting or lying")
    return state.replace(posture="standing", seat=None, touched=NOTHING)


def rest(state: State) -> State:
    _require(state.posture != "standing", "the agent must sit or lie down first")
    return state.replace(touched=NOTHING)


def touch(
    state: State, obj: int, *, props: tuple[str, ...] = (), also: str = "", hand: bool = False
) -> State:
    """TOUCH; TYPE, PUSH, PULL with the properties they need (or the classes ``also`` names)."""
    if props and name_of(state, obj) not in also.split():
        _has(state, obj, *props)
    if hand:
        _free_hand(state)
    _reach(state, obj)
    _not_enclosed(state, obj)
    return state.replace(touched=frozenset({obj}))


def consume(state: State, obj: int, props: tuple[str, ...]) -> State:
    """DRINK or EAT a held object."""
    _has(state, obj, *props)
    _require(obj in state.holding, f"the agent is not holding {_the(state, obj)}")
    return state.replace(touched=frozenset({obj}))


RULES: dict[str, Rule] = {
    "WALK": walk,
    "RUN": walk,
    "FIND": find,
    "GRAB": grab,
    "OPEN": partial(toggle, prop="CAN_OPEN", old="CLOSED", new="OPEN", hand=True),
    "CLOSE": partial(toggle, prop="CAN_OPEN", old="OPEN", new="CLOSED"),
    "SWITCHON": partial(toggle, prop="HAS_SWITCH", old="OFF", new="ON"),
    "SWITCHOFF": partial(toggle, prop="HAS_SWITCH", old="ON", new="OFF"),
    "PLUGIN": partial(toggle, prop="HAS_PLUG", old="PLUGGED_OUT", new="PLUGGED_IN", hand=True),
    "PLUGOUT": partial(toggle, prop="HAS_PLUG", old="PLUGGED_IN", new="PLUGGED_OUT", hand=True),
    "PUTIN": partial(put, relation="INSIDE"),
    "PUTBACK": partial(put, relation="ON"),
    "TURNTO": turn_to,
    "LOOKAT": look_at,
    "POINTAT": look_at,
    "WATCH": partial(look_at, prop="LOOKABLE"),
    "SIT": partial(settle, posture="sitting"),
    "LIE": partial(settle, posture="lying"),
    "STANDUP": stand_up,
    "SLEEP": rest,
    "WAKEUP": rest,
    "TOUCH": touch,
    "TYPE": partial(touch, props=("HAS_SWITCH",), also="keyboard"),
    "PUSH": partial(touch, props=("MOVABLE",), also="chair curtains", hand=True),
    "PULL": partial(touch, props=("MOVABLE",), also="chair curtains", hand=True),
    "DRINK": partial(consume, props=("DRINKABLE", "RECIPIENT")),
    "EAT": partial(consume, props=("EATABLE",)),
    "DONE": lambda state: state,
}
"""The rule of each verb: ``rule(state, *object_ids) -> next state``, or Failure."""
