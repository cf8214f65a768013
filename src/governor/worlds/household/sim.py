"""One household episode for agents: reset, step, preview, available actions, labels, text."""

from __future__ import annotations

import dataclasses
import functools
import string
from pathlib import Path

from governor.config import check_range, option
from governor.errors import ConfigError, EnvError, expected
from governor.worlds.household.actions import Action, parse_action
from governor.worlds.household.labels import labels
from governor.worlds.household.scene import SceneGraph, safety_chip_dir
from governor.worlds.household.state import State
from governor.worlds.household.step import available_actions, execute, preview
from governor.worlds.household.tasks import Task, find_task, goal_reached, load_tasks


@dataclasses.dataclass(frozen=True)
class HouseholdParams:
    """Episode bounds of the household simulator."""

    max_steps: int = option(30, "actions before the episode is truncated")
    stop_on_goal: bool = option(
        True, "end the episode when an action makes a non-empty goal hold that did not hold before"
    )

    def __post_init__(self) -> None:
        check_range("max_steps", self.max_steps, 1, 10_000)
        if not isinstance(self.max_steps, int):
            raise ConfigError(f"max_steps: {expected('an integer', self.max_steps)}")


@dataclasses.dataclass(frozen=True)
class Transition:
    """The outcome of one step."""

    action: str
    state: State
    labels: frozenset[str]
    error: str | None
    goal_reached: bool
    terminated: bool
    truncated: bool
    t: int


@functools.cache
def _scene_at(path: Path) -> SceneGraph:
    return SceneGraph.load(path)


def default_scene(data_dir: str | Path | None = None) -> SceneGraph:
    """The Safety Chip scene (TestScene1), loaded once per path."""
    return _scene_at(safety_chip_dir(data_dir) / "TestScene1_graph.json")


class HouseholdSim:
    """One household episode: a task, the scene and the current state."""

    def __init__(
        self,
        task: Task | str | None = None,
        scene: SceneGraph | None = None,
        params: HouseholdParams | None = None,
        tasks: list[Task] | None = None,
    ) -> None:
        self.scene = scene if scene is not None else default_scene()
        self.params = params if params is not None else HouseholdParams()
        self._tasks = tasks
        self.reset(task if task is not None else self.tasks[0])

    @property
    def tasks(self) -> list[Task]:
        """The tasks string keys are looked up in (default: :func:`load_tasks`)."""
        if self._tasks is None:
            self._tasks = load_tasks()
        return self._tasks

    def reset(self, task: Task | str | None = None) -> State:
        """Start ``task`` (default: the current one) in its initial room."""
        if task is not None:
            self.task = task if isinstance(task, Task) else find_task(task, self.tasks)
        self.state = self.scene.initial_state(self.task.init_room)
        self.t, self.done = 0, False
        self.error: str | None = None
        self.history: tuple[str, ...] = ()
        return self.state

    def step(self, action: str | Action) -> Transition:
        """Execute ``action``; a failed precondition leaves the state as it was."""
        if self.done:
            raise EnvError("step: expected a running episode, found it over; call reset() first")
        act = parse_action(action)
        before = goal_reached(self.task, self.state)
        self.state, self.error = execute(self.state, act)
        self.t += 1
        self.history += (str(act.bare),)
        reached = goal_reached(self.task, self.state)
        made = self.params.stop_on_goal and bool(self.task.goal_state) and reached and not before
        terminated = act.verb == "DONE" or made
        truncated = not terminated and self.t >= self.params.max_steps
        self.done = terminated or truncated
        now = labels(self.state)
        return Transition(
            str(act.bare), self.state, now, self.error, reached, terminated, truncated, self.t
        )

    def preview(self, action: str | Action) -> tuple[State, frozenset[str], str | None]:
        """What ``action`` would do now: (next state, its labels, error); nothing changes."""
        return preview(self.state, action)

    def available_actions(self) -> list[str]:
        """The executable actions a planner chooses from (see :func:`available_actions`)."""
        return available_actions(self.state)

    def labels(self) -> frozenset[str]:
        """The propositions that hold now."""
        return labels(self.state)

    def goal_reached(self) -> bool:
        """Whether the task's goal holds now."""
        return goal_reached(self.task, self.state)

    def observation(self) -> str:
        """The text observation: task, place, reach, hands, last error, step, actions."""
        return describe(
            self.state,
            task=self.task,
            actions=self.available_actions(),
            error=self.error,
            t=self.t,
            max_steps=self.params.max_steps,
        )


def _object_words(state: State, obj: int) -> str:
    node, states = state.scene.nodes[obj], state.states_of(obj)
    shown = [s.lower() for s in ("OPEN", "CLOSED", "ON", "OFF") if s in states]
    return f"{node.name} ({', '.join(shown)})" if shown else node.name


def describe(
    state: State,
    *,
    task: Task | None = None,
    actions: list[str] | None = None,
    error: str | None = None,
    t: int | None = None,
    max_steps: int | None = None,
) -> str:
    """A text observation of ``state`` for an LLM planner (printable ASCII only)."""
    scene, lines = state.scene, []
    if task is not None:
        lines.append(f"Task: {task.instruction[:500]}")
    room = scene.nodes[state.room].name.replace("_", " ")
    where = f"{state.posture} {'on' if state.posture != 'standing' else 'at'} the "
    spot = (
        where + scene.nodes[state.spot].name
        if state.spot is not None
        else "standing in the middle of the room"
    )
    lines.append(f"You are in the {room}, {spot}.")
    held = set(state.holding)
    reach = sorted(
        {_object_words(state, i) for i in state.near - held if scene.nodes[i].actionable}
    )
    lines.append(f"Within reach: {', '.join(reach) if reach else 'nothing'}.")
    hands = ", ".join(scene.nodes[h].name for h in state.holding)
    lines.append(f"Holding: {hands or 'nothing'}.")
    if error:
        lines.append(f"Last action failed: {error}.")
    if t is not None and max_steps is not None:
        lines.append(f"Step {t} of {max_steps}.")
    if actions is not None:
        lines += ["Available actions:", *actions]
    text = "\n".join(lines)
    return "".join(c if c in string.printable else "?" for c in text)
