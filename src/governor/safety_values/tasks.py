"""What reach-avoid DDQN needs to know about a task, so that one training loop serves them all.

A :class:`Task` names its environment and parameters and gives: the state dimension and the
number of actions; many envs stepped at once with restarts (:mod:`~governor.safety_values.replay`);
live states for the held-out agreement check; the exact value to check against; what the
observation models read (state features, the text, its vocabulary and a fast token renderer);
and the safety filter over its actions. :class:`DrivingTask` wraps the driving task and its grid
value; :class:`CommerceTask` the commerce task and its dynamic programme.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, Protocol

import numpy as np

from governor.errors import ConfigError, expected
from governor.safety_values.filter import QValues, SafetyFilter, state_of
from governor.safety_values.replay import Cars, Carts, Transitions, sample_live_states
from governor.safety_values.text_tokens import (
    CommerceTemplates,
    DrivingTemplates,
    Vocabulary,
    commerce_vocabulary,
    driving_vocabulary,
)
from governor.worlds.commerce.env import CommerceParams, random_carts, rows_of, totals_cents
from governor.worlds.commerce.env import describe as describe_cart
from governor.worlds.commerce.value import CommerceFilter, CommerceValue, cart_state_of
from governor.worlds.driving.env import DrivingParams
from governor.worlds.driving.env import describe as describe_drive

ENVS = ("driving", "commerce")
TaskParams = DrivingParams | CommerceParams


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
        return describe_drive(self.params, state)

    def vocabulary(self) -> Vocabulary:
        return driving_vocabulary(self.params)

    def templates(self, vocab: Vocabulary) -> Templates:
        return DrivingTemplates(self.params, vocab)

    def state_of(self, observation: Any) -> np.ndarray:
        return state_of(observation)

    def safety_filter(self, q_values: QValues, margin: float, name: str) -> SafetyFilter:
        return SafetyFilter(q_values, margin, name=name)


@dataclasses.dataclass(frozen=True)
class CommerceTask:
    """The commerce task: a cart and the actions left; actions are the page's element ids.

    State features (N, 2 max_items + 2): the rows' prices in display order (0 where there is no
    row), the same prices sorted from the most expensive, the actions left over the window, and
    the total; prices over the budget. Positions tell which element removes what; the sorted
    prices and the window tell what the best removals can reach.
    """

    params: CommerceParams = dataclasses.field(default_factory=CommerceParams)
    name: str = "commerce"
    max_tokens: int = 0  # rows sit anywhere: an absolute position says nothing about a price
    element_actions: bool = True
    read_window: int | None = 12

    @property
    def state_dim(self) -> int:
        return self.params.max_items + 1

    @property
    def n_actions(self) -> int:
        return self.params.n_actions

    @property
    def feature_dim(self) -> int:
        return 2 * self.params.max_items + 2

    @property
    def q_scale(self) -> float:
        return self.params.budget

    def vector_envs(self, n: int, rng: np.random.Generator) -> VectorEnvs:
        return Carts(self.params, n, rng)

    def sample_live_states(self, n: int, rng: np.random.Generator) -> np.ndarray:
        return random_carts(self.params, n, rng)

    def exact_value(self, grid_shape: tuple[int, int, int], progress: bool) -> ExactValue:
        return CommerceValue(self.params)

    def features(self, states: np.ndarray) -> np.ndarray:
        p = self.params
        prices = p.prices_cents[rows_of(states)] / (100.0 * p.budget)
        ranked = -np.sort(-prices, axis=1)
        window = states[:, -1:] / p.actions
        total = totals_cents(p, states)[:, None] / (100.0 * p.budget)
        return np.concatenate([prices, ranked, window, total], axis=1).astype(np.float32)

    def describe(self, state: np.ndarray) -> str:
        return describe_cart(self.params, state)

    def vocabulary(self) -> Vocabulary:
        return commerce_vocabulary(self.params)

    def templates(self, vocab: Vocabulary) -> Templates:
        return CommerceTemplates(self.params, vocab)

    def state_of(self, observation: Any) -> np.ndarray:
        return cart_state_of(self.params, observation)

    def safety_filter(self, q_values: QValues, margin: float, name: str) -> SafetyFilter:
        return CommerceFilter(q_values, margin, self.n_actions, name=name)


def task_of(params: TaskParams) -> Task:
    """The task whose parameters are ``params``."""
    if isinstance(params, DrivingParams):
        return DrivingTask(params)
    if isinstance(params, CommerceParams):
        return CommerceTask(params)
    raise ConfigError(f"task parameters: {expected('DrivingParams or CommerceParams', params)}")


def make_task(env: str, params: Mapping[str, Any] | TaskParams | None = None) -> Task:
    """The task of ``env`` with ``params`` (parameters, their dict, or None for the defaults)."""
    if env not in ENVS:
        raise ConfigError(f"env: {expected(' or '.join(ENVS), env)}")
    kind = DrivingParams if env == "driving" else CommerceParams
    if params is None:
        return task_of(kind())
    if isinstance(params, (DrivingParams, CommerceParams)):
        if not isinstance(params, kind):
            raise ConfigError(f"{env} parameters: {expected(kind.__name__, params)}")
        return task_of(params)
    try:
        return task_of(kind(**_tuples(dict(params))))
    except TypeError as exc:
        raise ConfigError(
            f"{env} parameters: {expected(kind.__name__ + ' fields', params)}"
        ) from exc


def _tuples(data: dict[str, Any]) -> dict[str, Any]:
    """JSON lists back to the tuples the frozen parameter dataclasses hold."""

    def convert(value: Any) -> Any:
        return tuple(convert(v) for v in value) if isinstance(value, list) else value

    return {k: convert(v) for k, v in data.items()}
