"""What reach-avoid DDQN learns from: batches of transitions and a replay buffer of them.

A world steps many envs at once and restarts one whose episode ends at a fresh live state drawn
over the whole state space (its task's ``vector_envs``, e.g.
:class:`~governor.worlds.driving.task.Cars`); each step returns :class:`Transitions`.
Transitions keep states, not observations: the observation model renders a state's observation
(its features, or its text's tokens) when a batch is drawn, so a driving transition costs 7
numbers. Imports numpy only: no world.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from governor.errors import ConfigError, expected


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
