"""The driving task as the LLM-backbone safety value reads it (ReGuard section 4).

:class:`DrivingLLMTask` implements :class:`~governor.safety_values.llm_q.task.LLMTask`: the driving
system prompt and :func:`~governor.worlds.driving.env.describe` as the prompt, the letters A, B, C
(steer right, straight, left) as the answers, the margin and the cars of
:mod:`~governor.worlds.driving.task` for token transitions, and the exact Q from the exact V for
the metrics. Hand it to :class:`~governor.safety_values.llm_q.value.LLMQ`, ``LLMQ.load`` and
:func:`~governor.safety_values.llm_q.train.train_llm_q`.

Imports the driving world (:mod:`.env`, :mod:`.task`) and the runtime's task protocol.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import numpy as np

from governor.safety_values.llm_q.task import LLMVectorEnvs, Value
from governor.worlds.driving.env import LETTERS, DrivingParams, describe, margin, step_states
from governor.worlds.driving.env import system_prompt as driving_system_prompt
from governor.worlds.driving.task import Cars, sample_live_states


@dataclasses.dataclass(frozen=True)
class DrivingLLMTask:
    """The driving task with its parameters: state (x, y, theta), answers A, B, C."""

    params: DrivingParams = dataclasses.field(default_factory=DrivingParams)
    name: str = "driving"
    letters: tuple[str, ...] = LETTERS
    state_dim: int = 3

    def with_params(self, params: Mapping[str, Any]) -> DrivingLLMTask:
        """The task with the parameters saved in a checkpoint's meta.json."""
        return dataclasses.replace(self, params=DrivingParams(**params))

    def system_prompt(self) -> str:
        return driving_system_prompt(self.params)

    def describe(self, state: Any) -> str:
        return describe(self.params, state)

    def margin(self, states: np.ndarray) -> np.ndarray:
        return margin(self.params, states)

    def vector_envs(self, n: int, rng: np.random.Generator) -> LLMVectorEnvs:
        return Cars(self.params, n, rng)

    def sample_live_states(self, n: int, rng: np.random.Generator) -> np.ndarray:
        return sample_live_states(self.params, n, rng)

    def exact_q_from_value(self, exact_value: Value, states: np.ndarray) -> np.ndarray:
        """Q*(s, a) = l(s') at a failed or goal s', else min(l(s'), V(s')): shape (N, 3)."""
        params = self.params
        states = np.asarray(states, dtype=np.float64).reshape(-1, 3)
        nxt = step_states(params, states[:, None, :], np.arange(3)[None, :]).reshape(-1, 3)
        level = margin(params, nxt)
        fixed = (level < 0.0) | (nxt[:, 0] >= params.goal_x)
        value = np.asarray(exact_value(nxt), dtype=np.float64)
        return np.where(fixed, level, np.minimum(level, value)).reshape(-1, 3)
