"""VirtualHome script actions: parsing, printing and grounding object names to scene objects.

The script form is the one of the Safety Chip programs: ``[WALK] <kitchen> (205)``,
``[PUTIN] <chicken> (437) <fridge> (305)``; ids are optional and letters may be in any case.
``DONE`` (with or without brackets) is the planner's stop action; it changes nothing.

Grounding ignores ids (the programs' ids come from other scenes) and resolves class names with
:meth:`SceneGraph.resolve`. Among the instances of a class it takes, in order: one held (for an
action on a held object: PUTIN, PUTBACK, DRINK, ...) or one not held (GRAB, WALK), one within
reach, one in the agent's room, the one nearest the agent, the lowest id.
"""

from __future__ import annotations

import dataclasses
import math
import re

from governor.errors import EnvError, expected
from governor.worlds.household.state import State

ARITY = {
    "WALK": 1,
    "RUN": 1,
    "FIND": 1,
    "GRAB": 1,
    "OPEN": 1,
    "CLOSE": 1,
    "SWITCHON": 1,
    "SWITCHOFF": 1,
    "PUTIN": 2,
    "PUTBACK": 2,
    "TURNTO": 1,
    "LOOKAT": 1,
    "POINTAT": 1,
    "WATCH": 1,
    "SIT": 1,
    "LIE": 1,
    "STANDUP": 0,
    "SLEEP": 0,
    "WAKEUP": 0,
    "TYPE": 1,
    "TOUCH": 1,
    "PUSH": 1,
    "PULL": 1,
    "PLUGIN": 1,
    "PLUGOUT": 1,
    "DRINK": 1,
    "EAT": 1,
    "DONE": 0,
}
"""Every supported verb and how many objects it takes."""
MOVES = frozenset({"WALK", "RUN", "FIND"})
"""Verbs that may take a room."""
HELD_FIRST = frozenset({"PUTIN", "PUTBACK", "DRINK", "EAT", "LOOKAT", "POINTAT", "TOUCH"})
"""Verbs whose (first) object is preferably one the agent holds."""
FREE_FIRST = frozenset({"GRAB", "WALK", "RUN"})
"""Verbs whose object is preferably one the agent does not hold."""

_FORM = "'[VERB] <object>', '[VERB] <object> (id)' or '[VERB] <object> <object>'"
_LINE = re.compile(r"^\s*\[\s*([A-Za-z_]+)\s*\]((?:\s*<[^<>]+>\s*(?:\([^()]*\))?)*)\s*$")
_OBJECT = re.compile(r"<([^<>]+)>\s*(?:\(\s*([^()]*?)\s*\))?")


@dataclasses.dataclass(frozen=True)
class Action:
    """One script line: a verb, its object names (lower case) and their ids as written (or None)."""

    verb: str
    objects: tuple[str, ...] = ()
    ids: tuple[str | None, ...] = ()

    def __post_init__(self) -> None:
        if self.verb not in ARITY:
            raise EnvError(f"action verb: {expected('one of ' + ', '.join(ARITY), self.verb)}")
        if len(self.objects) != ARITY[self.verb]:
            what = f"{ARITY[self.verb]} object(s) for {self.verb}"
            raise EnvError(f"action {self.verb}: {expected(what, list(self.objects))}")
        if not self.ids:
            object.__setattr__(self, "ids", (None,) * len(self.objects))
        elif len(self.ids) != len(self.objects):
            raise EnvError(f"action ids: {expected(f'{len(self.objects)} ids', list(self.ids))}")

    def __str__(self) -> str:
        parts = [f"[{self.verb}]"]
        for name, ident in zip(self.objects, self.ids, strict=True):
            parts.append(f"<{name}>" if ident is None else f"<{name}> ({ident})")
        return " ".join(parts)

    @property
    def bare(self) -> Action:
        """The same action without ids."""
        return Action(self.verb, self.objects)


def parse_action(text: str | Action) -> Action:
    """Parse one script line (ids optional, any case); raise EnvError naming the expected form."""
    if isinstance(text, Action):
        return text
    if not isinstance(text, str):
        raise EnvError(f"action: {expected('a script line ' + _FORM, text)}")
    if text.strip().strip("[]").strip().upper() == "DONE":
        return Action("DONE")
    match = _LINE.match(text)
    if match is None:
        raise EnvError(f"action: {expected('a script line ' + _FORM, text)}")
    verb = match.group(1).upper()
    pairs = _OBJECT.findall(match.group(2))
    names = tuple(" ".join(name.lower().split()) for name, _ in pairs)
    if any(not name for name in names):
        raise EnvError(f"action: {expected('a name inside every <...>', text)}")
    return Action(verb, names, tuple(ident or None for _, ident in pairs))


class Failure(Exception):
    """A precondition that does not hold (the action is executed without effect)."""


def ground(state: State, verb: str, name: str, slot: int = 0) -> int:
    """The scene object the name stands for in ``verb`` (see the module notes); Failure if none."""
    scene = state.scene
    cls = scene.resolve(name)
    if cls is None:
        raise Failure(f"there is no {name} in this scene")
    if cls in scene.rooms:
        if verb not in MOVES:
            raise Failure(f"{verb} needs an object, found the room {cls}")
        return scene.rooms[cls]
    found = [i for i in scene.by_name[cls] if scene.nodes[i].actionable]
    if not found:
        raise Failure(f"the {cls} cannot be acted on")
    origin = _position(state)

    def rank(i: int) -> tuple[int, int, int, float, int]:
        held = i in state.holding
        first = (
            held if (verb in HELD_FIRST and slot == 0) else not held if verb in FREE_FIRST else True
        )
        gap = math.dist(origin, scene.nodes[i].center) if origin is not None else 0.0
        return (not first, i not in state.near, state.room_of(i) != state.room, gap, i)

    return min(found, key=rank)


def _position(state: State) -> tuple[float, ...] | None:
    """Where the agent is: the centre of what it stands at, else of its room."""
    scene = state.scene
    anchor = state.anchor(state.spot) if state.spot is not None else None
    return scene.nodes[anchor if anchor is not None else state.room].center


def name_of(state: State, obj: int | None) -> str:
    """The class name of ``obj`` ("nothing" for None)."""
    return "nothing" if obj is None else state.scene.nodes[obj].name
