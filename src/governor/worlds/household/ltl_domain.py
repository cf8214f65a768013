"""The Safety Chip household as an LTL translation domain (:class:`governor.ltl.domain.Domain`).

The propositions are those the household labelling function produces in TestScene1 (for a task,
those about its objects), the rooms are the four Safety Chip rooms, the aliases add the
misspellings found in the Safety Chip data, the phrase table is the household's verbs
(:mod:`governor.worlds.household.ltl_phrases`), and a task's alphabet ranges over the
propositions of its translatable constraints.

Imports the household world (scene, labels, tasks, simulator) and the runtime's LTL package.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path

from governor.ltl.domain import MAX_EXTRAS, Domain, default_aliases
from governor.ltl.english.translate import translate_offline
from governor.ltl.parser import atom
from governor.ltl.satisfiability import exactly_one, one_hot
from governor.worlds.household.labels import arguments, room_propositions
from governor.worlds.household.ltl_phrases import HOUSEHOLD_PHRASES
from governor.worlds.household.scene import SPELLING_ALIASES, SceneGraph
from governor.worlds.household.sim import default_scene
from governor.worlds.household.tasks import Task, find_task, load_tasks
from governor.worlds.household.vocabulary import proposition_vocabulary


def household_aliases(propositions: Iterable[str]) -> dict[str, str]:
    """Spelling keys of every object, and the household's misspellings of them."""
    return default_aliases(propositions, SPELLING_ALIASES)


def household_domain(
    task: Task | str | None = None,
    *,
    extra_objects: Iterable[str] = (),
    scene: SceneGraph | None = None,
    data_dir: str | Path | None = None,
) -> Domain:
    """The Safety Chip household: TestScene1's propositions (for a task, those about its
    objects), exactly one room at a time, and an alphabet over the task's constraint propositions.

    ``extra_objects`` adds grabbable objects the scene lacks (``agent_at``, ``is_grabbed``,
    ``is_touched``, ``is_in``/``is_on`` the scene's holders); they never hold in the simulator.
    """
    scene = scene if scene is not None else default_scene(data_dir)
    if isinstance(task, str):
        task = find_task(task, load_tasks(data_dir))
    props = set(proposition_vocabulary(scene, task))
    objs = {a for p in props for a in arguments(p)}
    kinds = {n.name: n.properties for n in scene.nodes.values() if n.name in objs}
    surfaces = {x for x, ps in kinds.items() if "SURFACES" in ps}
    holders = surfaces | {x for x, ps in kinds.items() if "CONTAINERS" in ps} | set(scene.rooms)
    for x in extra_objects:
        props |= {f"agent_at({x})", f"is_grabbed({x})", f"is_touched({x})"}
        props |= {f"is_in({x}, {y})" for y in holders} | {f"is_on({x}, {y})" for y in surfaces}
    rooms = tuple(r for r in room_propositions() if r in props)
    places = {}
    for name, ids in scene.by_name.items():
        found = {scene.nodes[r].name for i in ids if (r := scene.nodes[i].room) is not None}
        if f"agent_at({name})" in props and found and name not in scene.rooms:
            places[f"agent_at({name})"] = frozenset(f"agent_at({r})" for r in found)
    name = "household" if task is None else f"household ({task.key})"
    base = Domain(
        name, sorted(props), household_aliases(props), [exactly_one(rooms)], one_hot(rooms),
        rooms, places, HOUSEHOLD_PHRASES,
    )  # fmt: skip
    if task is None:
        return base
    return replace(base, alphabet=task_alphabet(base, task))


def task_alphabet(domain: Domain, task: Task) -> list[frozenset[str]]:
    """Label sets over the rooms and the propositions of the task's translatable constraints."""
    texts = dict.fromkeys(c for group in task.constraints.values() for c in group)
    formulas = [f for t in texts if (f := translate_offline(t, domain).formula) is not None]
    atoms = sorted({a for f in formulas for a in f.atom_labels()} - set(domain.rooms))
    return domain.alphabet_for(*(atom(x) for x in atoms[:MAX_EXTRAS]))
