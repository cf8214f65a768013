"""The household simulator's rules as an action domain (:class:`governor.ltl.actions.ActionDomain`)
for the domain-aware joint check, read off the simulator's own rules (:mod:`.rules`, :mod:`.step`).

The domain covers the instances of the classes a check is about (the goal's and the constraints'
objects, and the closed containers they start in); everything else in the scene is left out, so
the state space stays small. It over-approximates the simulator on those objects: every step the
simulator can take from a state is a step of the domain with the same labels (a test drives the
simulator to check this), so a conflict the search proves is a real one. Per instance, facts say
where the agent stands (``spot#``), what is within its reach (``reach#``: what
:meth:`State.reach_from` gives, or anything in the room for an object put down on something left
out), what it holds, what is open or on, and where a grabbable object is (``home#`` where the scene
put it, ``rel#`` in or on an object or room, ``loose#`` put on something left out). The labels are
the household's (:mod:`.labels`), by class name. Preconditions kept: reach for GRAB, OPEN, CLOSE,
SWITCHON, SWITCHOFF and the destination of PUTIN/PUTBACK; holding for PUTIN/PUTBACK; a free hand
(:data:`HANDS`) for GRAB and OPEN; an open destination for PUTIN into what opens; a closed container
blocks GRAB; OPEN needs the thing switched off; the agent is in one room at a time. Posture, facing
and plugs are left out (they only forbid steps). ``[STANDUP]`` stands for a step that changes
nothing (standing, it fails: the simulator keeps the state).

Imports the household scene, state, rules, labels, tasks and simulator, and the runtime's action
domains and joint check.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from governor.ltl.actions import Action, ActionDomain, Invariant, facts
from governor.ltl.conflicts import MAX_STATES, ConflictReport, check_conflicts
from governor.ltl.parser import atom
from governor.ltl.simplify import conj, neg
from governor.ltl.syntax import Formula
from governor.worlds.household.labels import arguments
from governor.worlds.household.ltl_facts import Facts
from governor.worlds.household.rules import HANDS
from governor.worlds.household.scene import SceneGraph
from governor.worlds.household.sim import default_scene
from governor.worlds.household.state import State
from governor.worlds.household.tasks import Task, goal_propositions


def household_rules(
    scene: SceneGraph, start: State | str, objects: Iterable[str], *, touch: bool = False
) -> ActionDomain:
    """The rules over the instances of ``objects`` (class names), from the simulator state
    ``start`` (a room name: the agent standing there at the scene's start); ``touch``: track what
    the last action touched (only ``is_touched`` needs it)."""
    w = Facts.of(scene, objects, touch)
    acts: list[Action] = [Action("[STANDUP]")]
    for room, rid in sorted(scene.rooms.items()):
        acts.append(w.move(f"[WALK] <{room}>", rid, frozenset(), spot=None, keep=False))
    for i in sorted(w.ids):
        acts += _moves(w, i)
    for rid, rep, reach in w.other_spots():
        acts.append(w.move(f"[WALK] <{rep}>", rid, reach, spot=None, keep=False))
        acts.append(w.move(f"[FIND] <{rep}>", rid, reach, spot=None, keep=True, pre=w.here(rid)))
    for i in sorted(w.ids):
        acts += _handling(w, i)
    if touch:  # TURNTO, LOOKAT, ... touch nothing
        acts += [
            Action(f"[TURNTO] <{rep}>", w.here(rid), delete=w.all_touched)
            for rid, rep in w.put_down_spots()
        ]
    hands = Invariant(w.all_held, 0, HANDS, f"at most {HANDS} things held")
    one_room = Invariant(w.room_facts, 1, 1, "one room at a time")
    spot = Invariant(facts(f"spot#{i}" for i in w.ids), 0, 1, "at one object at a time")
    initial = w.project(scene.initial_state(start) if isinstance(start, str) else start)
    name = f"household rules ({', '.join(sorted(w.names)) or 'rooms only'})"
    return ActionDomain(name, initial, tuple(acts), (one_room, hands, spot), w.views())


def goal_condition(task: Task, scene: SceneGraph) -> Formula | None:
    """The task's goal as a formula over labels (None for a task without a goal)."""
    props = goal_propositions(task, scene)
    if not props:
        return None
    return conj(*(atom(p) if v else neg(atom(p)) for p, v in props))


def check_task(
    task: Task,
    named: Sequence[tuple[str, Formula]],
    *,
    scene: SceneGraph | None = None,
    start: State | None = None,
    max_states: int = MAX_STATES,
) -> ConflictReport:
    """The domain-aware joint check of the named constraints and ``task``'s goal, from ``start``
    (default: the task's initial state), over the objects the goal and the constraints name."""
    scene = scene if scene is not None else default_scene()
    goal = goal_condition(task, scene)
    formulas = [f for _, f in named] + ([goal] if goal is not None else [])
    labels = {x for f in formulas for x in f.atom_labels()}
    objects = {a for x in labels for a in arguments(x)} if labels else set()
    touch = any(x.startswith("is_touched(") for x in labels)
    where = start if start is not None else task.init_room
    domain = household_rules(scene, where, objects, touch=touch)
    return check_conflicts(named, domain, goal, max_states=max_states)


def _moves(w: Facts, i: int) -> list[Action]:
    """WALK and FIND to instance ``i``: from each place it may be."""
    name, out = w.name(i), []
    for pre, rid, reach in w.anchors(i):
        walk = w.move(f"[WALK] <{name}>", rid, reach, spot=i, keep=False, pre=pre)
        find = w.move(f"[FIND] <{name}>", rid, reach, spot=i, keep=True, pre=pre | w.here(rid))
        out += [walk, find]
    return out


def _handling(w: Facts, i: int) -> list[Action]:
    """GRAB, PUTIN/PUTBACK, OPEN/CLOSE, SWITCHON/SWITCHOFF (and TOUCH) on instance ``i``."""
    name, props, out = w.name(i), w.props(i), []
    reach = facts(f"reach#{i}")
    held = w.all_held
    if "CAN_OPEN" in props:
        still_on = facts(f"on#{i}") if "HAS_SWITCH" in props else frozenset()
        out.append(
            w.act(f"[OPEN] <{name}>", i, reach, facts(f"open#{i}") | still_on,
                  add=facts(f"open#{i}"), at_most=((held, HANDS - 1),))
        )  # fmt: skip
        out.append(
            w.act(f"[CLOSE] <{name}>", i, reach | facts(f"open#{i}"), delete=facts(f"open#{i}"))
        )
    if "HAS_SWITCH" in props:
        out.append(w.act(f"[SWITCHON] <{name}>", i, reach, facts(f"on#{i}"), add=facts(f"on#{i}")))
        out.append(
            w.act(f"[SWITCHOFF] <{name}>", i, reach | facts(f"on#{i}"), delete=facts(f"on#{i}"))
        )
    if w.touch:
        out.append(w.act(f"[TOUCH] <{name}>", i, reach))
    if i not in w.grabbable:
        return out
    for pre in w.grab_from(i):
        out.append(
            w.act(f"[GRAB] <{name}>", i, reach | pre, facts(f"held#{i}"), add=facts(f"held#{i}"),
                  delete=w.places_of(i), when=w.in_room_now(i), at_most=((held, HANDS - 1),))
        )  # fmt: skip
    for verb, rel, dest in w.destinations(i):
        pre = facts([f"held#{i}", f"reach#{dest}"]) | w.open_needed(rel, dest)
        at = facts([f"rel#{rel}#{i}#{dest}", f"rel#INSIDE#{i}#{w.room_of(dest)}"])
        out.append(
            w.act(f"[{verb}] <{name}> <{w.name(dest)}>", i, pre, add=at,
                  delete=facts(f"held#{i}") | w.places_of(i))
        )  # fmt: skip
    for rid, rep in w.put_down_spots():
        loose = facts([f"loose#{i}#{rid}", f"rel#INSIDE#{i}#{rid}"])
        out.append(
            w.act(f"[PUTBACK] <{name}> <{rep}>", i, facts(f"held#{i}") | w.here(rid), add=loose,
                  delete=facts(f"held#{i}") | w.places_of(i))
        )  # fmt: skip
    return out
