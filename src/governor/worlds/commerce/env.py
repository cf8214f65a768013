"""ReGuard's Agentic Commerce: keep a shopping cart within budget with a few clicks before checkout.

State: ``max_items + 1`` numbers, the catalogue index of each cart row in display order (-1 after
the last row), then the actions remaining k. Actions (element ids of the page, see
:mod:`~governor.worlds.commerce.page`): 0 is "Proceed to Checkout" and ends the episode; i in
1..max_items removes row i (the rows below move up) and uses one action. A click on a row that is
not there changes nothing but still uses the action. When a removal uses the last action, checkout
is forced: that step ends the episode. :func:`step_carts` and :func:`levels`
(:mod:`~governor.worlds.commerce.cart`, re-exported here) are the one definition of the dynamics
and of the margin that the environment, the exact value and training share.

Failure margin and the terminal convention. Failure is checking out over budget: the paper's
success metric is the cart total at the final timestep, so only the checked-out cart counts, not
the carts on the way. Prices are whole cents; the margin of a checkout is

    l = budget - total + $0.005,

so l is never 0 and l > 0 iff the total does not exceed the budget (the prompt's "must not
exceed"). A transition that checks out (chosen or forced) is terminal and carries that l. A
removal that leaves actions is not terminal and carries L = budget + $0.005, the margin of an
empty cart: no checkout can have a larger margin. With the reach-avoid DDQN target
Q = (1 - g) l(s') + g min(l(s'), max_a' Q(s', a')), and Q = l(s') at a terminal s', every Q is
at most L, so the min never binds at a non-terminal step and Q(s, a) = (1 - g) L + g V(s'). At
g = 1, by induction from the checkout, Q(s, a) is the largest final margin reachable after a:
its sign says exactly whether a safe continuation exists (the dynamic programme of
:mod:`~governor.worlds.commerce.value`). Every step uses an action or ends the episode, so the
horizon is finite and g = 1 needs no contraction: backups settle after ``actions + 1`` sweeps.
This is the paper's own g = 1 for the steps that bring no new margin (its non-EOS tokens). With
g < 1 the value would be biased up by (1 - g^d)(L - m) at d steps from the checkout, calling carts
a few dollars over budget safe; commerce therefore trains with g = 1. Reading l = budget - total
at every step instead would be wrong here: removals only raise it, so the minimum along a
trajectory would be the first cart's, and every over-budget start would look doomed.
"""

from __future__ import annotations

import string
from collections.abc import Mapping
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from governor.errors import EnvError, expected
from governor.worlds.commerce.cart import (
    HALF_CENT,
    CommerceParams,
    cart_state,
    levels,
    named_start,
    random_carts,
    rows_of,
    step_carts,
    totals_cents,
)
from governor.worlds.commerce.page import (
    footer_text,
    header_text,
    page_text,
    row_text,
    system_prompt_text,
)

__all__ = [
    "HALF_CENT",
    "CommerceEnv",
    "CommerceParams",
    "cart_state",
    "describe",
    "levels",
    "named_start",
    "random_carts",
    "rows_of",
    "step_carts",
    "system_prompt",
    "totals_cents",
]


def describe(params: CommerceParams, state: Any) -> str:
    """The text observation of ``state``: the page as an accessibility tree (the user prompt)."""
    rows = rows_of(np.asarray(state, dtype=np.float64))
    cents = params.prices_cents
    items = [(params.catalogue[i][0], int(cents[i])) for i in rows if i >= 0]
    return page_text(items, int(np.asarray(state)[-1]))


def system_prompt(params: CommerceParams) -> str:
    """The paper's system prompt with this budget."""
    return system_prompt_text(params.budget_cents)


class CommerceEnv(gym.Env[dict[str, Any], np.int64]):
    """The commerce task as a gymnasium environment (observation: state array and page text)."""

    metadata: dict[str, Any] = {"render_modes": []}  # noqa: RUF012 (gymnasium's attribute)

    def __init__(self, params: CommerceParams | None = None) -> None:
        self.params = p = params if params is not None else CommerceParams()
        self.action_space = spaces.Discrete(p.n_actions)
        high = np.full(p.max_items + 1, len(p.catalogue) - 1, dtype=np.float32)
        high[-1] = p.actions
        longest = max(len(name) for name, _ in p.catalogue)
        size = len(header_text() + footer_text(p.actions, 10**9))
        size += p.max_items * len(row_text(p.max_items, "x" * longest, 10**7))
        self.observation_space = spaces.Dict(
            {
                "state": spaces.Box(-1.0, high, dtype=np.float32),
                "text": spaces.Text(max_length=size, charset=string.printable),
            }
        )
        self._state = cart_state(p, (), p.actions)
        self._done = True

    @property
    def state(self) -> np.ndarray:
        return self._state.copy()

    def reset(
        self, *, seed: int | None = None, options: Mapping[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """Start at ``options["start"]`` (a named cart), ``options["cart"]`` (catalogue indices,
        with ``options["actions"]`` left, default all), else a random cart with all actions."""
        super().reset(seed=seed)
        p, options = self.params, dict(options or {})
        unknown = sorted(set(options) - {"start", "cart", "actions"})
        if unknown:
            raise EnvError(f"reset options: {expected('start, cart or actions', unknown)}")
        if "start" in options:
            self._state = named_start(p, str(options["start"]))
        elif "cart" in options:
            self._state = self._checked_cart(options["cart"], options.get("actions", p.actions))
        else:
            self._state = random_carts(p, 1, self.np_random)[0]
            self._state[-1] = p.actions
        self._done = False
        return self._observation(), self._info(False, False)

    def step(self, action: Any) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        p = self.params
        if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)):
            raise EnvError(f"action: {expected(f'an element id 0..{p.max_items}', action)}")
        if not 0 <= int(action) <= p.max_items:
            raise EnvError(f"action: {expected(f'an element id 0..{p.max_items}', action)}")
        if self._done:
            raise EnvError("step: expected a running episode, found it over; call reset() first")
        before = int((rows_of(self._state) >= 0).sum())
        nxt, done = step_carts(p, self._state, int(action))
        self._state, self._done = nxt[0], bool(done[0])
        wasted = int(action) > before
        info = self._info(self._done, wasted)
        reward = -1.0 if info["failed"] else 1.0 if info["success"] else 0.0
        return self._observation(), reward, self._done, False, info

    def _checked_cart(self, cart: Any, actions: Any) -> np.ndarray:
        p, names = self.params, {name: i for i, (name, _) in enumerate(self.params.catalogue)}
        try:
            items = [names[c] if isinstance(c, str) else int(c) for c in cart]
        except (KeyError, TypeError, ValueError) as exc:
            raise EnvError(f"reset cart: {expected('catalogue indices or names', cart)}") from exc
        if len(items) > p.max_items or not all(0 <= i < len(p.catalogue) for i in items):
            what = f"at most {p.max_items} indices in 0..{len(p.catalogue) - 1}"
            raise EnvError(f"reset cart: {expected(what, cart)}")
        if (
            isinstance(actions, bool)
            or not isinstance(actions, int)
            or not 1 <= actions <= p.actions
        ):
            raise EnvError(f"reset actions: {expected(f'an integer in 1..{p.actions}', actions)}")
        return cart_state(p, items, actions)

    def _observation(self) -> dict[str, Any]:
        return {"state": self._state.astype(np.float32), "text": describe(self.params, self._state)}

    def _info(self, checked_out: bool, wasted: bool) -> dict[str, Any]:
        p, total = self.params, int(totals_cents(self.params, self._state))
        level = round(p.budget + HALF_CENT - total / 100.0, 6)
        return {
            "margin": level,
            "total": total / 100.0,
            "items": int((rows_of(self._state) >= 0).sum()),
            "actions_remaining": int(self._state[-1]),
            "checked_out": checked_out,
            "failed": checked_out and level < 0.0,
            "success": checked_out and level > 0.0,
            "wasted": wasted,
            "state": self.state,
        }
