"""The Safety Chip household tasks (``task_vh.json`` and ``tasks/*.txt``) and their goals.

``goal_state`` is kept as the data gives it: ``{object: {predicate: value}}``, e.g.
``{"pie": {"is_in": "microwave"}}`` or ``{"computer": {"is_switchedon": false}}``; ``{}`` means
no goal beyond running the program (the paper scores those tasks on execution and safety only).
A goal holds when every ``predicate(object)`` with a boolean value has that truth value and every
``predicate(object, value)`` with a name value is true (see :func:`goal_propositions`).
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from governor.errors import ConfigError, EnvError, GovernorError, expected
from governor.worlds.household.actions import parse_action
from governor.worlds.household.labels import labels, proposition
from governor.worlds.household.scene import SceneGraph, canonical_room, safety_chip_dir
from governor.worlds.household.state import Scene, State

EXPERIMENTS = ("mobile_manip", "rooms")
UNARY_GOALS = frozenset({"is_switchedon", "is_open", "is_grabbed", "is_touched"})
BINARY_GOALS = frozenset({"is_in", "is_on"})
KNOWN_PROGRAM_ISSUES = {
    "mobile_manip/0_0": "TestScene1 has no chicken (the task comes from VirtualHome scene 1): "
    "[FIND] <chicken> fails and is_in(chicken, fridge) cannot hold",
    "mobile_manip/105_2": "the program turns to and looks at the window but never opens it, "
    "so the goal is_open(window) does not hold",
    "rooms/12_2": "every lightswitch of TestScene1 is ON from the start, so the goal holds before "
    "any action and the program's last line, [SWITCHON] <lighswitch>, fails: already on",
}
"""Tasks whose ground-truth program fails or misses its goal in TestScene1, and why."""


@dataclasses.dataclass(frozen=True)
class Task:
    """One task: its data from ``task_vh.json`` and its program file ``tasks/<id>.txt``.

    ``scene`` is the data's scene number ("0" or "1"); every task runs in TestScene1, the one
    graph the data holds. ``init_room`` is canonical (``living_room``, not ``livingroom``).
    """

    id: str
    experiment: str
    scene: str
    name: str
    description: str
    instruction: str
    init_room: str
    goal_state: Mapping[str, Mapping[str, bool | str]]
    constraints: dict[str, list[str]]
    program: tuple[str, ...]

    def __hash__(self) -> int:
        return hash(self.key)

    @property
    def key(self) -> str:
        """``experiment/id``: unique, unlike ``id`` (0_1 and 71_1 are in both experiments)."""
        return f"{self.experiment}/{self.id}"

    def texts(self) -> list[str]:
        """The task's name, description, instruction and every constraint."""
        out = [self.name, self.description, self.instruction]
        return out + [c for group in self.constraints.values() for c in group]

    def objects(self, scene: SceneGraph) -> frozenset[str]:
        """Scene class names the task names: in its goal, its program or any of its texts.

        A text names a class when a word, or two adjacent words run together ("tv stand"),
        resolves to it (:meth:`SceneGraph.resolve`).
        """
        names: list[str] = []
        for obj, goal in self.goal_state.items():
            names += [obj, *(v for v in goal.values() if isinstance(v, str))]
        names += [name for line in self.program for name in parse_action(line).objects]
        for text in self.texts():
            words = re.findall(r"[a-z]+", text.lower())
            names += words + [a + b for a, b in itertools.pairwise(words)]
        found = (scene.resolve(name) for name in names)
        return frozenset(name for name in found if name is not None)


def goal_propositions(task: Task, scene: Scene | None = None) -> list[tuple[str, bool]]:
    """The goal as (proposition, required truth value) pairs, names resolved in ``scene``."""

    def name(text: str) -> str:
        resolved = scene.resolve(text) if scene is not None else None
        return resolved if resolved is not None else text

    out = []
    for obj, goal in task.goal_state.items():
        for predicate, value in goal.items():
            if isinstance(value, bool):
                out.append((proposition(predicate, name(obj)), value))
            else:
                out.append((proposition(predicate, name(obj), name(value)), True))
    return out


def goal_reached(task: Task, state: State) -> bool:
    """Whether ``state`` satisfies the task's goal (always, for an empty goal)."""
    now = labels(state)
    return all((prop in now) == value for prop, value in goal_propositions(task, state.scene))


def load_tasks(data_dir: str | Path | None = None) -> list[Task]:
    """The 20 tasks of ``task_vh.json`` in file order, each with its program."""
    root = safety_chip_dir(data_dir)
    path = root / "task_vh.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from exc
    tasks = []
    for experiment, scenes in _mapping(data, str(path)).items():
        if experiment not in EXPERIMENTS:
            raise ConfigError(
                f"{path}: experiment {expected(' or '.join(EXPERIMENTS), experiment)}"
            )
        for scene, entries in _mapping(scenes, f"{path}: {experiment}").items():
            for task_id, entry in _mapping(entries, f"{path}: {experiment}/{scene}").items():
                tasks.append(_task(root, experiment, str(scene), str(task_id), entry))
    return tasks


def find_task(key: str | Task, tasks: list[Task] | None = None) -> Task:
    """The task with key ``experiment/id``, or with id ``id`` when only one task has it."""
    if isinstance(key, Task):
        return key
    tasks = tasks if tasks is not None else load_tasks()
    hits = [t for t in tasks if key in (t.key, t.id)]
    if len(hits) != 1:
        known = ", ".join(t.key for t in tasks)
        what = "a task key (experiment/id) or an id that names one task, one of " + known
        raise EnvError(f"task: {expected(what, key)}" + (" (ambiguous)" if hits else ""))
    return hits[0]


def _mapping(value: Any, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise ConfigError(f"{where}: {expected('a mapping', type(value).__name__)}")
    return value


def _task(root: Path, experiment: str, scene: str, task_id: str, entry: Any) -> Task:
    where = f"task {experiment}/{task_id}"
    entry = _mapping(entry, where)
    try:
        instruction, room = str(entry["instruction"]), str(entry["init_room"])
        goal, constraints = entry["goal_state"], entry["constraints"]
    except KeyError as exc:
        raise ConfigError(
            f"{where}: {expected('instruction, init_room, goal_state and constraints', list(entry))}"
        ) from exc
    _check_goal(goal, where)
    constraints = {str(k): [str(c) for c in v] for k, v in _mapping(constraints, where).items()}
    path = root / "tasks" / f"{task_id}.txt"
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise ConfigError(f"{where}: cannot read its program {path}: {exc.strerror}") from exc
    if len(lines) < 3:
        raise ConfigError(
            f"{path}: {expected('a name, a description and program lines', len(lines))}"
        )
    program = tuple(line.strip() for line in lines[2:] if line.strip())
    for line in program:
        try:
            parse_action(line)
        except GovernorError as exc:
            raise ConfigError(f"{path}: {exc}") from exc
    name, description = lines[0].strip(), lines[1].strip()
    room = canonical_room(room)
    return Task(
        task_id, experiment, scene, name, description, instruction, room, goal, constraints, program
    )


def _check_goal(goal: Any, where: str) -> None:
    for obj, conditions in _mapping(goal, where).items():
        for predicate, value in _mapping(conditions, f"{where} goal {obj}").items():
            unary = predicate in UNARY_GOALS and isinstance(value, bool)
            binary = predicate in BINARY_GOALS and isinstance(value, str)
            if not (unary or binary):
                what = "is_switchedon/is_open/is_grabbed/is_touched: bool or is_in/is_on: a name"
                raise ConfigError(f"{where} goal {obj}: {expected(what, {predicate: value})}")
