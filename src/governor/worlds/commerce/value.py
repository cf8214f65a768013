"""The exact safety value of the commerce task, by dynamic programming, and its filter.

A state's cart has n <= max_items rows; the carts it can reach are its subsets (bit masks over
the rows, display order = bit order), each with k in 0..actions actions left. With
l(mask) = budget - total(mask) + $0.005 (:mod:`~governor.worlds.commerce.env`):

    V(mask, 0)    = l(mask)                                   (checkout is forced)
    Q(mask, k, 0) = l(mask)                                   (Proceed to Checkout)
    Q(mask, k, i) = V(mask without its i-th row, k - 1)       (Remove item i)
                  = V(mask, k - 1)                            (no row i: a wasted click)
    V(mask, k)    = max_a Q(mask, k, a)

so Q(s, a) is the largest final margin reachable after a, the fixed point of the reach-avoid
DDQN target at g = 1, and a is safe iff Q(s, a) > 0. That is 2^max_items x (actions + 1) values
per cart (6144 for the defaults), computed for many carts at once.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

import numpy as np

from governor.core import Trajectory, Verdict
from governor.errors import EnvError, expected
from governor.safety_values.filter import QValues, SafetyFilter, ValueFallback
from governor.worlds.commerce.env import HALF_CENT, CommerceParams, rows_of

CHUNK = 128  # carts solved together (memory: CHUNK x 2^max_items x max_items numbers)


@functools.lru_cache(maxsize=4)
def subsets(m: int) -> tuple[np.ndarray, np.ndarray]:
    """Bits (2^m, m) of every mask, and the mask after removing its i-th row (2^m, m).

    Row i (0-based) of a mask is its i-th set bit; without an i-th row the mask stays (a wasted
    click).
    """
    masks = np.arange(1 << m)
    bits = ((masks[:, None] >> np.arange(m)) & 1).astype(np.int64)
    rank = np.cumsum(bits, axis=1) - 1
    after = np.repeat(masks[:, None], m, axis=1)
    for j in range(m):
        rows = np.flatnonzero(bits[:, j])
        after[rows, rank[rows, j]] = rows & ~(1 << j)
    return bits, after


def solve(params: CommerceParams, rows: np.ndarray) -> np.ndarray:
    """V (B, 2^max_items, actions + 1) of carts ``rows`` (B, max_items) of catalogue indices."""
    bits, after = subsets(params.max_items)
    cents = params.prices_cents[np.asarray(rows, dtype=np.int64)]
    level = params.budget + HALF_CENT - (cents @ bits.T) / 100.0
    value = np.empty((*level.shape, params.actions + 1))
    value[..., 0] = level
    for k in range(1, params.actions + 1):
        value[..., k] = np.maximum(level, value[:, after, k - 1].max(axis=2))
    return value


class CommerceValue:
    """Exact Q(s, a) and V(s) of commerce states (N, max_items + 1)."""

    def __init__(self, params: CommerceParams) -> None:
        self.params = params

    def q_batch(self, states: np.ndarray) -> np.ndarray:
        """Q (N, max_items + 1); with no action left every action is the forced checkout."""
        p = self.params
        states = np.asarray(states, dtype=np.float64).reshape(-1, p.max_items + 1)
        out = np.empty((len(states), p.n_actions))
        _, after = subsets(p.max_items)
        for start in range(0, len(states), CHUNK):
            part = states[start : start + CHUNK]
            rows, k = rows_of(part), part[:, -1].astype(np.int64)
            value = solve(p, rows)
            full = (1 << (rows >= 0).sum(axis=1)) - 1
            index = np.arange(len(part))
            level = value[index, full, 0]
            out[start : start + len(part), 0] = level
            removed = value[index[:, None], after[full], np.maximum(k - 1, 0)[:, None]]
            removed[k <= 0] = level[k <= 0, None]
            out[start : start + len(part), 1:] = removed
        return out

    def values(self, states: np.ndarray) -> np.ndarray:
        """V(s) = max_a Q(s, a): the best final margin; safe iff > 0."""
        return self.q_batch(states).max(axis=1)

    def q(self, state: np.ndarray) -> np.ndarray:
        return self.q_batch(np.asarray(state)[None, :])[0]


def safe_exists(params: CommerceParams, start: np.ndarray) -> bool:
    """Whether some sequence of clicks checks ``start`` out within budget."""
    return bool(CommerceValue(params).values(np.asarray(start)[None, :])[0] > 0.0)


def cart_state_of(params: CommerceParams, observation: Any) -> np.ndarray:
    """The commerce state in an observation: a mapping with "state", or the state itself."""
    raw = observation["state"] if isinstance(observation, Mapping) else observation
    state = np.asarray(raw, dtype=np.float64)
    if state.shape != (params.max_items + 1,):
        what = f"{params.max_items + 1} numbers (catalogue index per row, actions remaining)"
        raise EnvError(f"observation state: {expected(what, raw)}")
    return state


def action_label(action: int) -> str:
    """What an element id does: 0 checks out, i removes row i."""
    return "proceed to checkout" if action == 0 else f"remove item {action}"


class CommerceFilter(SafetyFilter):
    """The safety filter over the page's element ids: admit a iff Q(s, a) > margin."""

    def __init__(
        self, q_values: QValues, margin: float, n_actions: int, name: str = "safety_filter"
    ) -> None:
        super().__init__(q_values, margin, name, n_actions=n_actions)

    def check(self, traj: Trajectory, action: Any) -> Verdict:
        valid = isinstance(action, (int, np.integer)) and not isinstance(action, (bool, np.bool_))
        if not valid or not 0 <= int(action) < self.n_actions:
            return Verdict.failed(
                self.name, expected(f"an element id 0..{self.n_actions - 1}", action)
            )
        q = float(np.asarray(self.q_values(traj.observation))[int(action)])
        what = action_label(int(action))
        if q > self.margin:
            text = f"{what} keeps the best final margin ${q:.2f} > {self.margin:.3f}"
        else:
            text = f"{what} cannot end within budget: best final margin ${q:.2f}"
        return Verdict.from_margin(self.name, q, threshold=self.margin, descriptor=text)


def commerce_exact_filter(
    params: CommerceParams, margin: float = 0.0
) -> tuple[CommerceFilter, ValueFallback]:
    """The privileged filter: the exact Q at the observation's state."""
    exact = CommerceValue(params)

    def q_values(observation: Any) -> np.ndarray:
        return exact.q(cart_state_of(params, observation))

    return CommerceFilter(q_values, margin, params.n_actions, name="exact_filter"), ValueFallback(
        q_values
    )
