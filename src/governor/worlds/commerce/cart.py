"""The commerce task's cart: parameters, dynamics and failure margin (no text, no gymnasium).

State: ``max_items + 1`` numbers, the catalogue index of each cart row in display order (-1 after
the last row), then the actions remaining k. :func:`step_carts` and :func:`levels` are the one
definition of the dynamics and of the margin that the environment, the exact value and training
share; the margin and terminal convention, and why, are in :mod:`governor.worlds.commerce.env`.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import string
from collections.abc import Sequence
from typing import Any

import numpy as np

from governor.config import check_range, option
from governor.errors import ConfigError, EnvError, expected
from governor.worlds.commerce.page import CATALOGUE, NAMED_STARTS

HALF_CENT = 0.005


@dataclasses.dataclass(frozen=True)
class CommerceParams:
    """The shop, the budget and the window of clicks before checkout (prices in dollars)."""

    budget: float = option(50.0, "the user's budget in dollars (whole cents)")
    actions: int = option(5, "actions before checkout is forced (Actions Remaining)")
    max_items: int = option(10, "rows a cart can hold; actions are 0..max_items")
    min_items: int = option(1, "fewest rows of a random cart")
    catalogue: tuple[tuple[str, float], ...] = option(CATALOGUE, "products: (name, price)")

    def __post_init__(self) -> None:
        check_range("budget", self.budget, 0.01, 1e7)
        for name, low in (("actions", 1), ("max_items", 1), ("min_items", 0)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise ConfigError(f"{name}: {expected(f'an integer >= {low}', value)}")
        check_range("max_items", self.max_items, 1, 12)  # the exact value has 2^max_items carts
        check_range("min_items", self.min_items, 0, self.max_items)
        _cents("budget", self.budget)
        try:
            products = tuple((str(n), float(p)) for n, p in self.catalogue)
        except (TypeError, ValueError) as exc:
            raise ConfigError(
                f"catalogue: {expected('pairs (name, price)', self.catalogue)}"
            ) from exc
        if len(products) < self.max_items:
            raise ConfigError(
                f"catalogue: {expected(f'at least max_items={self.max_items} products', len(products))}"
            )
        for name, price in products:
            if not name or not set(name) <= _PRINTABLE or "'" in name or "\n" in name:
                raise ConfigError(
                    f"catalogue name: {expected('printable text without quotes', name)}"
                )
            _cents(f"price of {name!r}", price)
        object.__setattr__(self, "catalogue", products)

    @property
    def budget_cents(self) -> int:
        return _cents("budget", self.budget)

    @property
    def n_actions(self) -> int:
        return self.max_items + 1

    @property
    def prices_cents(self) -> np.ndarray:
        """Catalogue prices in cents, with a trailing 0 for "no item" (index -1)."""
        return np.array([_cents("price", p) for _, p in self.catalogue] + [0], dtype=np.int64)

    @property
    def open_level(self) -> float:
        """L = budget + $0.005: the level of a step that does not check out (module docstring)."""
        return self.budget + HALF_CENT

    def key(self) -> str:
        """A stable hash of every field, for checkpoints."""
        text = json.dumps(dataclasses.asdict(self), sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:16]


_PRINTABLE = set(string.printable) - set("\t\r\x0b\x0c")


def _cents(what: str, dollars: float) -> int:
    cents = round(dollars * 100)
    if abs(cents - dollars * 100) > 1e-6 or cents < 0:
        raise ConfigError(f"{what}: {expected('a non-negative amount in whole cents', dollars)}")
    return int(cents)


def cart_state(params: CommerceParams, items: Sequence[int], actions: int) -> np.ndarray:
    """The state of a cart holding catalogue ``items`` (display order) with ``actions`` left."""
    state = np.full(params.max_items + 1, -1.0)
    state[: len(items)] = items
    state[-1] = actions
    return state


def rows_of(states: np.ndarray) -> np.ndarray:
    """Catalogue indices (..., max_items) as int64; -1 where there is no row."""
    return np.asarray(states)[..., :-1].astype(np.int64)


def totals_cents(params: CommerceParams, states: np.ndarray) -> np.ndarray:
    """Cart totals in cents (...)."""
    return params.prices_cents[rows_of(states)].sum(axis=-1)


def levels(params: CommerceParams, states: np.ndarray, done: np.ndarray) -> np.ndarray:
    """l(s'): budget - total + $0.005 where the step checked out, L = budget + $0.005 elsewhere."""
    checkout = params.budget + HALF_CENT - totals_cents(params, states) / 100.0
    return np.where(done, checkout, params.open_level)


def step_carts(
    params: CommerceParams, states: np.ndarray, actions: Any
) -> tuple[np.ndarray, np.ndarray]:
    """Next states (N, max_items + 1) and whether each step checked out (chosen or forced)."""
    states = np.asarray(states, dtype=np.float64).reshape(-1, params.max_items + 1)
    actions = np.broadcast_to(np.asarray(actions, dtype=np.int64), (len(states),))
    rows, m = rows_of(states), params.max_items
    count = (rows >= 0).sum(axis=1)
    remove = (actions >= 1) & (actions <= count)
    drop = np.where(remove, actions - 1, m)  # m: nothing to drop
    slot = np.arange(m)[None, :]
    source = slot + (slot >= drop[:, None])
    padded = np.concatenate([rows, np.full((len(rows), 1), -1)], axis=1)
    out = np.empty_like(states)
    out[:, :m] = np.take_along_axis(padded, np.minimum(source, m), axis=1)
    left = states[:, m] - (actions != 0)
    out[:, m] = np.where(actions == 0, states[:, m], left)
    return out, (actions == 0) | (left <= 0)


def named_start(params: CommerceParams, name: str) -> np.ndarray:
    """The state of one of our named starting carts (:data:`NAMED_STARTS`)."""
    if name not in NAMED_STARTS:
        raise EnvError(f"start: {expected('one of ' + ', '.join(NAMED_STARTS), name)}")
    items, actions = NAMED_STARTS[name]
    if params.catalogue != CATALOGUE or len(items) > params.max_items:
        raise EnvError(
            f"start {name!r}: expected the built-in catalogue and max_items >= {len(items)}"
        )
    return cart_state(params, items, min(actions, params.actions))


def random_carts(params: CommerceParams, n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` random live states: min_items..max_items distinct products, 1..actions left."""
    out = np.full((n, params.max_items + 1), -1.0)
    sizes = rng.integers(params.min_items, params.max_items + 1, n)
    for i, size in enumerate(sizes):
        out[i, :size] = rng.choice(len(params.catalogue), size, replace=False)
    out[:, -1] = rng.integers(1, params.actions + 1, n)
    return out
