"""The household's proposition vocabulary: every proposition the labelling function
(:mod:`governor.worlds.household.labels`) can produce in a scene, or only those about a task's
objects.

Imports the household scene, labels and tasks (it sits above all three).
"""

from __future__ import annotations

from governor.worlds.household.labels import arguments, proposition
from governor.worlds.household.scene import SceneGraph
from governor.worlds.household.tasks import Task


def proposition_vocabulary(scene: SceneGraph, task: Task | None = None) -> list[str]:
    """The sorted propositions that can hold in ``scene``; for a task, those about its objects.

    A task's objects are its rooms and the scene classes named in its goal, its program, its
    name, description, instruction or constraints (see :meth:`Task.objects`).
    """
    nodes = [n for n in scene.nodes.values() if n.actionable and not n.is_room]
    grabbable = {n.name for n in nodes if "GRABBABLE" in n.properties}
    surfaces = {n.name for n in nodes if "SURFACES" in n.properties}
    holders = surfaces | {n.name for n in nodes if "CONTAINERS" in n.properties}
    out = {proposition("agent_at", room) for room in scene.rooms}
    for n in nodes:
        out.update((proposition("agent_at", n.name), proposition("is_touched", n.name)))
        for prop, predicate in (
            ("HAS_SWITCH", "is_switchedon"),
            ("CAN_OPEN", "is_open"),
            ("GRABBABLE", "is_grabbed"),
        ):
            if prop in n.properties:
                out.add(proposition(predicate, n.name))
    for a, rel, b in scene.initial_relations:
        predicate = "is_in" if rel == "INSIDE" else "is_on"
        out.add(proposition(predicate, scene.nodes[a].name, scene.nodes[b].name))
    for x in grabbable:
        out.update(proposition("is_in", x, y) for y in holders | set(scene.rooms) if y != x)
        out.update(proposition("is_on", x, y) for y in surfaces if y != x)
    if task is not None:
        keep = task.objects(scene) | set(scene.rooms)
        out = {p for p in out if set(arguments(p)) <= keep}
    return sorted(out)
