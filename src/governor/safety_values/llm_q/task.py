"""What the LLM-backbone safety value (:mod:`.value`) needs to know about a task.

An :class:`LLMTask` names its environment (recorded in a checkpoint and checked on loading) and
its parameters (a dataclass: ``dataclasses.asdict`` goes into meta.json, :meth:`with_params`
rebuilds the task from it), and gives the prompts (the system prompt and the text of a state),
the answer letters (letter i is action i; each must be one token), the margin l(s), many envs
stepped at once with restarts, live states, and the exact Q from an exact V. A world implements
it (the driving world: :mod:`governor.worlds.driving.llm_task`); the runtime is handed one.

Imports numpy and the error tree only: no world.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol

import numpy as np

from governor.errors import ConfigError, expected

Value = Callable[[np.ndarray], np.ndarray]  # states -> the exact value V (N,)


class Moved(Protocol):
    """One step of :class:`LLMVectorEnvs`: s', l(s') and whether s' ends the episode."""

    @property
    def next_states(self) -> np.ndarray: ...
    @property
    def levels(self) -> np.ndarray: ...
    @property
    def done(self) -> np.ndarray: ...


class LLMVectorEnvs(Protocol):
    """Many envs stepped at once; one whose episode ends restarts at a live state with t = 0."""

    states: np.ndarray
    t: np.ndarray  # steps since each env (re)started

    def step(self, actions: np.ndarray) -> Moved: ...


class LLMTask(Protocol):
    """A task as an LLM safety value reads it: prompts, answer letters, dynamics, checkpoints."""

    @property
    def name(self) -> str:
        """The env a checkpoint records and is checked against (e.g. "driving")."""
        ...

    @property
    def params(self) -> Any:
        """The task's parameters: a dataclass, saved in meta.json with ``dataclasses.asdict``."""
        ...

    @property
    def letters(self) -> tuple[str, ...]:
        """The answer letters; letter i is action i."""
        ...

    @property
    def state_dim(self) -> int: ...

    def with_params(self, params: Mapping[str, Any]) -> LLMTask:
        """The same task with the parameters saved in a checkpoint's meta.json."""
        ...

    def system_prompt(self) -> str: ...

    def describe(self, state: Any) -> str:
        """The text observation (the user prompt) of ``state``."""
        ...

    def margin(self, states: np.ndarray) -> np.ndarray:
        """l(s) of ``states`` (N, state_dim): failure iff l < 0."""
        ...

    def vector_envs(self, n: int, rng: np.random.Generator) -> LLMVectorEnvs: ...

    def sample_live_states(self, n: int, rng: np.random.Generator) -> np.ndarray: ...

    def exact_q_from_value(self, exact_value: Value, states: np.ndarray) -> np.ndarray:
        """The exact Q (N, len(letters)) of ``states`` from the exact V (``exact_value``)."""
        ...


def observation_text(task: LLMTask, observation: Any) -> str:
    """The prompt text of an observation: text, a mapping with "text", or with "state" (which
    ``task`` describes)."""
    if isinstance(observation, str):
        return observation
    if isinstance(observation, Mapping) and "text" in observation:
        return str(observation["text"])
    if isinstance(observation, Mapping) and "state" in observation:
        return task.describe(observation["state"])
    raise ConfigError(
        f"observation: {expected('text or a mapping with text or state', observation)}"
    )
