"""Safety Chip's household: a symbolic VirtualHome simulator for LLM planners and LTL monitors.

:class:`HouseholdSim` is what agents drive: ``reset``, ``step("[WALK] <kitchen>")``, ``preview``
(a side-effect-free what-if for monitors), ``available_actions`` and ``labels``.
:class:`HouseholdEnv` is the same simulator as a gymnasium environment: actions are indices into
a fixed catalogue of script lines (:func:`action_catalogue`) or script lines themselves; the
observation is ``{"text": ..., "action_mask": ...}``. An episode ends (terminated) on ``[DONE]``
or, with ``stop_on_goal``, when an action makes a non-empty goal hold that did not hold before
it; it is truncated after ``max_steps`` actions. A failed precondition is a step without effect
whose ``error`` says why. The parts: ``household_scene`` (the graph), ``household_state``,
``household_actions`` (script lines and grounding), ``household_rules`` (preconditions and
effects), ``household_step`` (execute, preview, available actions), ``household_labels``
(propositions), ``household_vocabulary`` (the propositions a scene can produce),
``household_tasks`` and ``household_sim``; this module re-exports their API.
"""

from __future__ import annotations

import string
from collections.abc import Mapping
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from governor.errors import EnvError, expected
from governor.worlds.household.actions import ARITY, Action, parse_action
from governor.worlds.household.labels import (
    PREDICATES,
    arguments,
    labels,
    proposition,
    room_propositions,
)
from governor.worlds.household.scene import ROOM_NAMES, SceneGraph, safety_chip_dir
from governor.worlds.household.sim import (
    HouseholdParams,
    HouseholdSim,
    Transition,
    default_scene,
    describe,
)
from governor.worlds.household.state import State
from governor.worlds.household.step import (
    PLANNER_VERBS,
    action_catalogue,
    available_actions,
    execute,
    preview,
)
from governor.worlds.household.tasks import (
    KNOWN_PROGRAM_ISSUES,
    Task,
    find_task,
    goal_propositions,
    goal_reached,
    load_tasks,
)
from governor.worlds.household.vocabulary import proposition_vocabulary


class HouseholdEnv(gym.Env[dict[str, Any], Any]):
    """The household as a gymnasium environment (see the module notes).

    ``step`` takes an index into :attr:`actions` (the action space is Discrete over that fixed
    catalogue, with the executable ones marked in ``action_mask``) or any script line as a
    string. ``info``: labels, error, goal_reached, t, state. Reward 1 when the episode ends with
    the goal reached, else 0. ``reset(options={"task": key})`` switches the task.
    """

    metadata: dict[str, Any] = {"render_modes": []}  # noqa: RUF012 (gymnasium's attribute)

    def __init__(
        self,
        task: Task | str | None = None,
        scene: SceneGraph | None = None,
        params: HouseholdParams | None = None,
    ) -> None:
        self.sim = HouseholdSim(task, scene, params)
        self.actions = action_catalogue(self.sim.scene)
        self._index = {a: i for i, a in enumerate(self.actions)}
        nodes = self.sim.scene.nodes.values()
        bound = 4096 + sum(len(n.name) + 24 for n in nodes) + sum(len(a) + 1 for a in self.actions)
        self.action_space = spaces.Discrete(len(self.actions))
        self.observation_space = spaces.Dict(
            {
                "text": spaces.Text(max_length=bound, charset=string.printable),
                "action_mask": spaces.MultiBinary(len(self.actions)),
            }
        )

    def reset(
        self, *, seed: int | None = None, options: Mapping[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """Restart the episode, on ``options["task"]`` when given."""
        super().reset(seed=seed)
        options = dict(options or {})
        unknown = sorted(set(options) - {"task"})
        if unknown:
            raise EnvError(f"reset options: {expected('only the key task', unknown)}")
        self.sim.reset(options.get("task"))
        return self._observation(), self._info(self.sim.labels())

    def step(self, action: Any) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        tr = self.sim.step(self._script(action))
        reward = 1.0 if tr.terminated and tr.goal_reached else 0.0
        return self._observation(), reward, tr.terminated, tr.truncated, self._info(tr.labels)

    def _info(self, now: frozenset[str]) -> dict[str, Any]:
        sim = self.sim
        goal = sim.goal_reached()
        return {
            "labels": now,
            "error": sim.error,
            "goal_reached": goal,
            "t": sim.t,
            "state": sim.state,
        }

    def _script(self, action: Any) -> str | Action:
        if isinstance(action, (str, Action)):
            return action
        if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)):
            raise EnvError(
                f"action: {expected('a script line or an index into env.actions', action)}"
            )
        if not 0 <= int(action) < len(self.actions):
            raise EnvError(f"action: {expected(f'an index in [0, {len(self.actions)})', action)}")
        return self.actions[int(action)]

    def _observation(self) -> dict[str, Any]:
        available = self.sim.available_actions()
        mask = np.zeros(len(self.actions), dtype=np.int8)
        mask[[self._index[a] for a in available if a in self._index]] = 1
        sim = self.sim
        text = describe(
            sim.state,
            task=sim.task,
            actions=available,
            error=sim.error,
            t=sim.t,
            max_steps=sim.params.max_steps,
        )
        return {"text": text, "action_mask": mask}


__all__ = [
    "ARITY",
    "KNOWN_PROGRAM_ISSUES",
    "PLANNER_VERBS",
    "PREDICATES",
    "ROOM_NAMES",
    "Action",
    "HouseholdEnv",
    "HouseholdParams",
    "HouseholdSim",
    "SceneGraph",
    "State",
    "Task",
    "Transition",
    "action_catalogue",
    "arguments",
    "available_actions",
    "default_scene",
    "describe",
    "execute",
    "find_task",
    "goal_propositions",
    "goal_reached",
    "labels",
    "load_tasks",
    "parse_action",
    "preview",
    "proposition",
    "proposition_vocabulary",
    "room_propositions",
    "safety_chip_dir",
]
