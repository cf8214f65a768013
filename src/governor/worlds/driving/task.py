"""The driving task as reach-avoid DDQN sees it, registered as env "driving" when imported.

:class:`DrivingTask` implements :class:`~governor.safety_values.tasks.Task`: state (x, y, theta),
actions steer right, straight, left, the grid value as the exact value, the text of
:func:`~governor.worlds.driving.env.describe` and its token renderer. :class:`Cars` steps many
cars at once with restarts at :func:`sample_live_states`; :func:`state_features` is what the
state model reads.

Its DDQN defaults (:data:`DDQN_DEFAULTS`) follow the paper's Table 6, its privileged state-based
DDQN; the text model's batch is 128.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from governor.safety_values.filter import QValues, SafetyFilter
from governor.safety_values.replay import Transitions
from governor.safety_values.tasks import (
    DDQNDefaults,
    ExactValue,
    Templates,
    VectorEnvs,
    register_task,
)
from governor.safety_values.text_tokens import Vocabulary
from governor.worlds.driving.env import LABELS, DrivingParams, describe, margin, step_states
from governor.worlds.driving.filter import state_of
from governor.worlds.driving.text import DrivingTemplates, driving_vocabulary

DDQN_DEFAULTS = DDQNDefaults(
    iterations=400_000,
    n_envs=64,
    buffer_size=500_000,
    gamma=0.99,
    gamma_end=0.99,
    tau=0.01,
    lr_period=20_000,
    eps_period=20_000,
    text_batch=128,
)


def sample_live_states(params: DrivingParams, n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` uniform states on the whole road (x < goal_x, any heading) that have not failed."""
    out = np.empty((0, 3))
    while len(out) < n:
        draw = np.column_stack(
            [
                rng.uniform(0.0, params.goal_x, 2 * n),
                rng.uniform(0.0, params.road_width, 2 * n),
                rng.uniform(-np.pi, np.pi, 2 * n),
            ]
        )
        out = np.concatenate([out, draw[margin(params, draw) >= 0.0]])
    return out[:n]


class Cars:
    """``n`` cars of the driving task stepped together with the environment's own dynamics.

    A car whose episode ends (failure, goal, or the horizon) restarts at a fresh live state drawn
    uniformly over the whole road, so the value is learned everywhere, not only near the start.
    Reaching the horizon is a truncation, not an end: its transition is not marked done.
    """

    def __init__(self, params: DrivingParams, n: int, rng: np.random.Generator) -> None:
        self.params, self.rng = params, rng
        self.states = sample_live_states(params, n, rng)
        self.t = np.zeros(n, dtype=np.int64)
        self.failures = self.goals = 0

    def step(self, actions: np.ndarray) -> Transitions:
        p = self.params
        actions = np.asarray(actions, dtype=np.int64)
        nxt = step_states(p, self.states, actions)
        levels = margin(p, nxt)
        failed, goal = levels < 0.0, nxt[:, 0] >= p.goal_x
        done = failed | goal
        out = Transitions(self.states, actions, nxt, levels, done)
        self.failures += int(failed.sum())
        self.goals += int(goal.sum())
        self.t += 1
        restart = done | (self.t >= p.horizon)
        self.states = nxt.copy()
        if restart.any():
            self.states[restart] = sample_live_states(p, int(restart.sum()), self.rng)
            self.t[restart] = 0
        return out


def state_features(params: DrivingParams, states: np.ndarray) -> np.ndarray:
    """(2 x / goal_x - 1, 2 y / road_width - 1, cos theta, sin theta) as float32 (N, 4)."""
    return DrivingTask(params).features(np.asarray(states, dtype=np.float64).reshape(-1, 3))


@dataclasses.dataclass(frozen=True)
class DrivingTask:
    """The driving task: state (x, y, theta), actions right/straight/left."""

    params: DrivingParams = dataclasses.field(default_factory=DrivingParams)
    name: str = "driving"
    state_dim: int = 3
    n_actions: int = 3
    feature_dim: int = 4
    max_tokens: int = 512
    element_actions: bool = False
    q_scale: float = 1.0
    read_window: int | None = None

    def vector_envs(self, n: int, rng: np.random.Generator) -> VectorEnvs:
        return Cars(self.params, n, rng)

    def sample_live_states(self, n: int, rng: np.random.Generator) -> np.ndarray:
        return sample_live_states(self.params, n, rng)

    def exact_value(self, grid_shape: tuple[int, int, int], progress: bool) -> ExactValue:
        from governor.worlds.driving.grid_value import GridSpec, load_or_compute

        nx, ny, ntheta = grid_shape
        spec = GridSpec(nx=nx, ny=ny, ntheta=ntheta)
        return load_or_compute(self.params, spec, progress=progress)[0]

    def features(self, states: np.ndarray) -> np.ndarray:
        """(2 x / goal_x - 1, 2 y / road_width - 1, cos theta, sin theta) as float32 (N, 4)."""
        p = self.params
        x, y, theta = states[:, 0], states[:, 1], states[:, 2]
        return np.column_stack(
            [2 * x / p.goal_x - 1, 2 * y / p.road_width - 1, np.cos(theta), np.sin(theta)]
        ).astype(np.float32)

    def describe(self, state: np.ndarray) -> str:
        return describe(self.params, state)

    def vocabulary(self) -> Vocabulary:
        return driving_vocabulary(self.params)

    def templates(self, vocab: Vocabulary) -> Templates:
        return DrivingTemplates(self.params, vocab)

    def state_of(self, observation: Any) -> np.ndarray:
        return state_of(observation)

    def safety_filter(self, q_values: QValues, margin: float, name: str) -> SafetyFilter:
        return SafetyFilter(q_values, margin, name=name, labels=LABELS)


register_task("driving", DrivingParams, DrivingTask, DDQN_DEFAULTS)
