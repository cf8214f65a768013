"""What reach-avoid DDQN needs to know about a task, so that one training loop serves them all.

A :class:`Task` names its environment and parameters and gives: the state dimension and the
number of actions; many envs stepped at once with restarts (:class:`VectorEnvs`); live states for
the held-out agreement check; the exact value to check against; what the observation models read
(state features, the text, its vocabulary and a fast token renderer); and the safety filter over
its actions. A world implements it (:class:`~governor.worlds.driving.task.DrivingTask`,
:class:`~governor.worlds.commerce.task.CommerceTask`) and registers it under its env name with
:func:`register_task` when its task module is imported, together with the type of its parameters
and its defaults for the DDQN settings that depend on the env (:class:`DDQNDefaults`). The
runtime finds a task by name (:func:`make_task`, a checkpoint's env) or by its parameters
(:func:`task_of`) in that registry, so whoever names an env imports its world's task module first.
Imports the filter, the replay buffer and the token machinery: no world.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, Protocol

import numpy as np

from governor.errors import ConfigError, expected
from governor.safety_values.filter import QValues, SafetyFilter
from governor.safety_values.replay import Transitions
from governor.safety_values.text_tokens import Vocabulary


class TaskParams(Protocol):
    """A task's parameters: a dataclass (a checkpoint saves ``dataclasses.asdict`` of it) with a
    stable ``key`` of every field."""

    __dataclass_fields__: ClassVar[dict[str, Any]]

    def key(self) -> str: ...


class ExactValue(Protocol):
    """The exact safety value: V (N,) and Q (N, n_actions) of states; safe iff > 0."""

    def values(self, states: np.ndarray) -> np.ndarray: ...
    def q_batch(self, states: np.ndarray) -> np.ndarray: ...


class VectorEnvs(Protocol):
    """Many envs stepped at once; an env whose episode ends restarts at a live state."""

    states: np.ndarray

    def step(self, actions: np.ndarray) -> Transitions: ...


class Templates(Protocol):
    """Token ids and values (N, L) of the text observations of states, without strings."""

    def encode_states(self, states: np.ndarray) -> tuple[np.ndarray, np.ndarray]: ...


class Task(Protocol):
    """One environment as reach-avoid DDQN, its checkpoints and its filter see it.

    Besides its name, parameters, state dimension and number of actions, a task fixes what its
    networks look like: ``feature_dim`` (the state model's input width), ``q_scale`` (the unit
    of margin the networks output Q in; commerce: the budget), and for the text model
    ``max_tokens`` (absolute positions embedded; 0: none, relative positions only),
    ``read_window`` (tokens a number reads on each side; None: the whole text) and
    ``element_actions`` (the actions are the page's element ids "[i]", read from the text).
    """

    @property
    def name(self) -> str: ...
    @property
    def params(self) -> Any: ...
    @property
    def state_dim(self) -> int: ...
    @property
    def n_actions(self) -> int: ...
    @property
    def feature_dim(self) -> int: ...
    @property
    def q_scale(self) -> float: ...
    @property
    def max_tokens(self) -> int: ...
    @property
    def read_window(self) -> int | None: ...
    @property
    def element_actions(self) -> bool: ...
    def vector_envs(self, n: int, rng: np.random.Generator) -> VectorEnvs: ...
    def sample_live_states(self, n: int, rng: np.random.Generator) -> np.ndarray: ...
    def exact_value(self, grid_shape: tuple[int, int, int], progress: bool) -> ExactValue: ...
    def features(self, states: np.ndarray) -> np.ndarray: ...
    def describe(self, state: np.ndarray) -> str: ...
    def vocabulary(self) -> Vocabulary: ...
    def templates(self, vocab: Vocabulary) -> Templates: ...
    def state_of(self, observation: Any) -> np.ndarray: ...
    def safety_filter(self, q_values: QValues, margin: float, name: str) -> SafetyFilter: ...


@dataclasses.dataclass(frozen=True)
class DDQNDefaults:
    """A task's defaults for the reach-avoid DDQN settings that depend on the env.

    The fields but ``text_batch`` are :class:`~governor.safety_values.ddqn_config.DDQNConfig`
    fields of the same name; ``text_batch`` is the text model's batch (the state model's is 512).
    """

    iterations: int
    n_envs: int
    buffer_size: int
    gamma: float
    gamma_end: float
    tau: float
    lr_period: int
    eps_period: int
    text_batch: int


@dataclasses.dataclass(frozen=True)
class RegisteredTask:
    """A task as registered: its env name, the type of its parameters, the task of parameters of
    that type (``factory``) and its DDQN defaults."""

    name: str
    params_type: type
    factory: Callable[[Any], Task]
    ddqn_defaults: DDQNDefaults


_REGISTRY: dict[str, RegisteredTask] = {}


def register_task(
    name: str, params_type: type, factory: Callable[[Any], Task], ddqn_defaults: DDQNDefaults
) -> None:
    """Register the task ``name``: ``factory(params)`` is its task for ``params_type`` parameters.

    A world calls this when its task module is imported. Registering a name again with the same
    parameter type replaces the entry (a reloaded module); another type is refused.
    """
    known = _REGISTRY.get(name)
    if known is not None and known.params_type.__qualname__ != params_type.__qualname__:
        wanted = f"parameters {known.params_type.__qualname__} (as registered)"
        raise ConfigError(f"task {name!r}: {expected(wanted, params_type.__qualname__)}")
    _REGISTRY[name] = RegisteredTask(name, params_type, factory, ddqn_defaults)


def registered_tasks() -> tuple[str, ...]:
    """The names of the registered tasks, in the order they were registered."""
    return tuple(_REGISTRY)


def task_named(name: str) -> RegisteredTask:
    """The registered task ``name``; a ConfigError naming the registered ones when it is not."""
    if not isinstance(name, str) or name not in _REGISTRY:
        names = " or ".join(_REGISTRY) or "a registered task (none is)"
        raise ConfigError(
            f"env: {expected(names, name)} (a world registers its task when its task module is "
            "imported, e.g. governor.worlds.driving.task)"
        )
    return _REGISTRY[name]


def task_of(params: TaskParams) -> Task:
    """The task whose parameters are ``params`` (of a registered task's parameter type)."""
    for entry in _REGISTRY.values():
        if isinstance(params, entry.params_type):
            return entry.factory(params)
    kinds = " or ".join(entry.params_type.__name__ for entry in _REGISTRY.values())
    raise ConfigError(
        f"task parameters: {expected(kinds or 'the parameters of a registered task', params)}"
    )


def make_task(env: str, params: Mapping[str, Any] | TaskParams | None = None) -> Task:
    """The task of ``env`` with ``params`` (parameters, their dict, or None for the defaults)."""
    entry = task_named(env)
    kind = entry.params_type
    if params is None:
        return entry.factory(kind())
    if not isinstance(params, Mapping):
        if not isinstance(params, kind):
            raise ConfigError(f"{env} parameters: {expected(kind.__name__, params)}")
        return entry.factory(params)
    try:
        return entry.factory(kind(**_tuples(dict(params))))
    except TypeError as exc:
        raise ConfigError(
            f"{env} parameters: {expected(kind.__name__ + ' fields', params)}"
        ) from exc


def _tuples(data: dict[str, Any]) -> dict[str, Any]:
    """JSON lists back to the tuples the frozen parameter dataclasses hold."""

    def convert(value: Any) -> Any:
        return tuple(convert(v) for v in value) if isinstance(value, list) else value

    return {k: convert(v) for k, v in data.items()}
