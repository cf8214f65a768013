"""The labelling function: the Safety Chip propositions that hold in a household state.

Propositions are canonical strings ``name(arg)`` or ``name(a, b)`` (arguments joined by ", "),
objects named by class name and rooms by ``bathroom``, ``bedroom``, ``kitchen``, ``living_room``.
A proposition about a class holds when it holds for some instance of the class.

- ``agent_at(room)``: the room the agent is in (exactly one holds);
  ``agent_at(object)``: the object the agent walked to, found, or sits or lies on (at most one);
- ``is_switchedon(x)``: x is ON; ``is_open(x)``: x is OPEN;
- ``is_grabbed(x)``: the agent holds x;
- ``is_touched(x)``: the agent holds x, or its last action put a hand on x (GRAB, OPEN, CLOSE,
  SWITCHON, SWITCHOFF, PUTIN, PUTBACK, TOUCH, TYPE, PUSH, PULL, PLUGIN, PLUGOUT, DRINK, EAT);
- ``is_on(x, y)``: x is ON y; ``is_in(x, y)``: x is INSIDE y, where y may be a room.
"""

from __future__ import annotations

from governor.worlds.household.scene import ROOM_NAMES
from governor.worlds.household.state import State

PREDICATES = ("agent_at", "is_switchedon", "is_open", "is_grabbed", "is_touched", "is_on", "is_in")
"""The Safety Chip predicates, in the paper's order."""


def proposition(predicate: str, *args: str) -> str:
    """The canonical string of a proposition: ``is_in(salmon, fridge)``."""
    return f"{predicate}({', '.join(args)})"


def labels(state: State) -> frozenset[str]:
    """The propositions that hold in ``state``."""
    nodes = state.scene.nodes
    out = {proposition("agent_at", nodes[state.room].name)}
    if state.spot is not None:
        out.add(proposition("agent_at", nodes[state.spot].name))
    for obj, flag in state.flags:
        if flag == "ON":
            out.add(proposition("is_switchedon", nodes[obj].name))
        elif flag == "OPEN":
            out.add(proposition("is_open", nodes[obj].name))
    for obj in state.holding:
        out.add(proposition("is_grabbed", nodes[obj].name))
        out.add(proposition("is_touched", nodes[obj].name))
    out.update(proposition("is_touched", nodes[obj].name) for obj in state.touched)
    for a, rel, b in state.relations:
        out.add(proposition("is_in" if rel == "INSIDE" else "is_on", nodes[a].name, nodes[b].name))
    return frozenset(out)


def arguments(prop: str) -> tuple[str, ...]:
    """The arguments of a canonical proposition string."""
    inner = prop[prop.index("(") + 1 : prop.rindex(")")]
    return tuple(inner.split(", "))


def room_propositions() -> tuple[str, ...]:
    """``agent_at(room)`` for the four Safety Chip rooms."""
    return tuple(proposition("agent_at", room) for room in ROOM_NAMES)
