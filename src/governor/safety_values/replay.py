"""What reach-avoid DDQN learns from: many envs stepped at once and a replay buffer of transitions.

:class:`Cars` drives the driving task, :class:`Carts` shops in the commerce task; both restart an
env whose episode ends at a fresh live state drawn over the whole state space. Transitions keep
states, not observations: the observation model renders a state's observation (its features, or
its text's tokens) when a batch is drawn, so a driving transition costs 7 numbers.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from governor.errors import ConfigError, expected
from governor.worlds.commerce.env import CommerceParams, levels, random_carts, step_carts
from governor.worlds.driving.env import DrivingParams, margin, step_states


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


@dataclass(frozen=True)
class Transitions:
    """A batch of transitions: s, a, s', l(s') and whether s' ends the episode (failure or goal)."""

    states: np.ndarray  # (N, state_dim)
    actions: np.ndarray  # (N,) int64
    next_states: np.ndarray  # (N, state_dim)
    levels: np.ndarray  # (N,) the margin l(s')
    done: (
        np.ndarray
    )  # (N,) bool: s' ends the episode (driving: failure or goal; commerce: checkout)


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


class Carts:
    """``n`` carts of the commerce task stepped together with the environment's own dynamics.

    A cart that checks out (chosen or forced) restarts as a fresh random cart with a random number
    of actions left (:func:`~governor.worlds.commerce.env.random_carts`), so the value is learned at
    every k, not only at the start. Levels follow the convention of :mod:`governor.worlds.commerce.env`.
    """

    def __init__(self, params: CommerceParams, n: int, rng: np.random.Generator) -> None:
        self.params, self.rng = params, rng
        self.states = random_carts(params, n, rng)
        self.failures = self.goals = 0

    def step(self, actions: np.ndarray) -> Transitions:
        p = self.params
        actions = np.asarray(actions, dtype=np.int64)
        nxt, done = step_carts(p, self.states, actions)
        level = levels(p, nxt, done)
        out = Transitions(self.states, actions, nxt, level, done)
        self.failures += int((done & (level < 0.0)).sum())
        self.goals += int((done & (level > 0.0)).sum())
        self.states = nxt.copy()
        if done.any():
            self.states[done] = random_carts(p, int(done.sum()), self.rng)
        return out


class ReplayBuffer:
    """A ring buffer of transitions; the oldest are overwritten once it is full."""

    def __init__(self, capacity: int, state_dim: int = 3) -> None:
        if isinstance(capacity, bool) or not isinstance(capacity, int) or capacity < 1:
            raise ConfigError(f"buffer_size: {expected('an integer >= 1', capacity)}")
        self.capacity = capacity
        self.states = np.zeros((capacity, state_dim))
        self.actions = np.zeros(capacity, dtype=np.int64)
        self.next_states = np.zeros((capacity, state_dim))
        self.levels = np.zeros(capacity)
        self.done = np.zeros(capacity, dtype=bool)
        self.size = self.cursor = 0

    def __len__(self) -> int:
        return self.size

    def add(self, batch: Transitions) -> None:
        n = len(batch.actions)
        if n > self.capacity:  # only the newest fit
            batch = Transitions(*(getattr(batch, f)[-self.capacity :] for f in _FIELDS))
            n = self.capacity
        index = (self.cursor + np.arange(n)) % self.capacity
        for name in _FIELDS:
            getattr(self, name)[index] = getattr(batch, name)
        self.cursor = int((self.cursor + n) % self.capacity)
        self.size = min(self.size + n, self.capacity)

    def sample(self, n: int, rng: np.random.Generator) -> Transitions:
        """``n`` transitions drawn uniformly with replacement."""
        if self.size == 0:
            raise ConfigError("replay buffer: expected transitions to sample, found none")
        index = rng.integers(0, self.size, n)
        return Transitions(*(getattr(self, name)[index] for name in _FIELDS))


_FIELDS = ("states", "actions", "next_states", "levels", "done")
