"""The commerce task as reach-avoid DDQN sees it, registered as env "commerce" when imported.

:class:`CommerceTask` implements :class:`~governor.safety_values.tasks.Task`: the cart and the
actions left as the state, the page's element ids as the actions, the dynamic programme as the
exact value, the page's text and its token renderer. :class:`Carts` steps many carts at once.

Its DDQN defaults (:data:`DDQN_DEFAULTS`) follow the paper's Table 9 where it applies to networks
trained from scratch: 80,000 iterations, the exploration schedule (0.95, 0.7, 4000, 0.05), the
soft update tau = 0.005 and the 4000-iteration period of the learning-rate decay. Not taken from
Table 9: its learning rate (2e-5 to 1e-6 is for LoRA on a pretrained LLM; ours start from random
weights and keep Table 6's 1e-3 to 1e-4), its batch of 2 and buffer of 1000 (sized for a 1B
model's memory; here a batch is 512 states or 32 texts and 16 carts add 16 transitions per
iteration, so the buffer holds 100,000), and gamma: commerce trains at gamma = 1, which its margin
convention needs for the sign of Q to be the sign of safety (:mod:`governor.worlds.commerce.env`).
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
from governor.worlds.commerce.env import (
    CommerceParams,
    describe,
    levels,
    random_carts,
    rows_of,
    step_carts,
    totals_cents,
)
from governor.worlds.commerce.text import CommerceTemplates, commerce_vocabulary
from governor.worlds.commerce.value import CommerceFilter, CommerceValue, cart_state_of

DDQN_DEFAULTS = DDQNDefaults(
    iterations=80_000,
    n_envs=16,
    buffer_size=100_000,
    gamma=1.0,
    gamma_end=1.0,
    tau=0.005,
    lr_period=4000,
    eps_period=4000,
    text_batch=32,
)


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
        return describe(self.params, state)

    def vocabulary(self) -> Vocabulary:
        return commerce_vocabulary(self.params)

    def templates(self, vocab: Vocabulary) -> Templates:
        return CommerceTemplates(self.params, vocab)

    def state_of(self, observation: Any) -> np.ndarray:
        return cart_state_of(self.params, observation)

    def safety_filter(self, q_values: QValues, margin: float, name: str) -> SafetyFilter:
        return CommerceFilter(q_values, margin, self.n_actions, name=name)


register_task("commerce", CommerceParams, CommerceTask, DDQN_DEFAULTS)
