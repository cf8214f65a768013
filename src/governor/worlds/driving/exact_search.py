"""Ground truth for safety monitors: search over action sequences with the true dynamics.

A state is safe iff some action sequence reaches the goal or survives ``depth`` steps without
failure. The search is a depth-first search over the continuous dynamics (no grid); a good action
order (by descending grid Q) finds a safe sequence almost at once, and unsafe states, whose every
branch fails, are searched exhaustively.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from governor.worlds.driving.env import DrivingParams, margin, step_states
from governor.worlds.driving.grid_value import GridValue

ActionOrder = Callable[[np.ndarray], Sequence[int]]
_ACTIONS = np.arange(3)
_DEFAULT_ORDER = (1, 2, 0)  # straight, left, right


def safe_by_search(
    params: DrivingParams,
    state: Any,
    *,
    depth: int | None = None,
    order: ActionOrder | None = None,
) -> bool:
    """Whether some action sequence from ``state`` reaches the goal or survives ``depth`` steps.

    ``depth`` defaults to the episode horizon; ``order(state)`` gives the actions to try first.
    """
    start = np.asarray(state, dtype=np.float64).reshape(3)
    if float(margin(params, start)) < 0.0:
        return False
    if start[0] >= params.goal_x:
        return True
    return _survives(params, start, params.horizon if depth is None else depth, order)


def _survives(
    params: DrivingParams, state: np.ndarray, depth: int, order: ActionOrder | None
) -> bool:
    """Depth-first, with an explicit stack (any depth); children that fail are never entered."""
    if depth <= 0:
        return True
    frames = [(iter(_children(params, state, order)), depth)]
    while frames:
        children, left = frames[-1]
        child = next(children, None)
        if child is None:
            frames.pop()
        elif child[0] >= params.goal_x or left == 1:
            return True
        else:
            frames.append((iter(_children(params, child, order)), left - 1))
    return False


def _children(params: DrivingParams, state: np.ndarray, order: ActionOrder | None) -> list[Any]:
    """The next states that do not fail, in the order to try them."""
    nxt = step_states(params, state, _ACTIONS)
    levels = margin(params, nxt)
    actions = _DEFAULT_ORDER if order is None else order(state)
    return [nxt[a] for a in actions if levels[a] >= 0.0]


def grid_order(grid_value: GridValue) -> ActionOrder:
    """Actions by descending grid Q (the grid's safest action first)."""

    def order(state: np.ndarray) -> Sequence[int]:
        return [int(a) for a in np.argsort(-grid_value.q(state), kind="stable")]

    return order


def sample_road_states(params: DrivingParams, n_states: int, seed: int) -> np.ndarray:
    """``n_states`` uniform states with x in [0, goal_x), y in [0, road_width], any heading."""
    rng = np.random.default_rng(seed)
    return np.column_stack(
        [
            rng.uniform(0.0, params.goal_x, n_states),
            rng.uniform(0.0, params.road_width, n_states),
            rng.uniform(-np.pi, np.pi, n_states),
        ]
    )


def certified_safe(
    grid_value: GridValue, states: np.ndarray, margin: float, lookahead: int, chunk: int = 2048
) -> np.ndarray:
    """Safe iff some ``lookahead``-step sequence stays off failure and ends at grid value > margin.

    The margins along the sequence are exact; only the grid value at its end is interpolated, so
    only that is held to ``margin``. Goal states end a sequence early (safe iff l > 0).
    """
    states = np.asarray(states, dtype=np.float64).reshape(-1, 3)
    values = [
        _certified(grid_value, states[i : i + chunk], margin, lookahead)
        for i in range(0, len(states), chunk)
    ]
    return np.concatenate([np.zeros(0), *values]) > 0.0


def _certified(grid_value: GridValue, states: np.ndarray, margin_: float, k: int) -> np.ndarray:
    params = grid_value.params
    level = margin(params, states)
    terminal = (level < 0.0) | (states[:, 0] >= params.goal_x)
    if k == 0:
        ahead = grid_value.interpolate(states) - margin_
    else:
        nxt = step_states(params, states[:, None, :], _ACTIONS[None, :]).reshape(-1, 3)
        ahead = _certified(grid_value, nxt, margin_, k - 1).reshape(-1, 3).max(axis=1)
    return np.where(terminal, level, np.minimum(level, ahead))


def monitor_agreement(
    grid_value: GridValue,
    n_states: int,
    seed: int,
    margin: float | None = None,
    *,
    lookahead: int = 0,
) -> dict[str, Any]:
    """Compare the grid monitor with the exact search on uniform random road states.

    With ``lookahead=0`` the monitor calls a state safe iff V(s) > margin (the filter's rule);
    with ``lookahead=k`` it uses :func:`certified_safe`. ``margin`` defaults to
    ``grid_value.resolution``. A false-safe state is one the monitor calls safe that the search
    proves unsafe; a false-unsafe one is the reverse (conservatism). The result is JSON-ready
    (at most 20 false-safe states are listed).
    """
    threshold = grid_value.resolution if margin is None else margin
    params = grid_value.params
    states = sample_road_states(params, n_states, seed)
    start = time.perf_counter()
    if lookahead == 0:
        monitor = grid_value.values(states) > threshold
    else:
        monitor = certified_safe(grid_value, states, threshold, lookahead)
    order = grid_order(grid_value)
    truth = np.array([safe_by_search(params, s, order=order) for s in states], dtype=bool)
    false_safe, false_unsafe = monitor & ~truth, ~monitor & truth
    return {
        "states": n_states,
        "margin": threshold,
        "lookahead": lookahead,
        "agreement": float((monitor == truth).mean()),
        "false_safe": int(false_safe.sum()),
        "false_safe_rate": float(false_safe.mean()),
        "false_unsafe": int(false_unsafe.sum()),
        "false_unsafe_rate": float(false_unsafe.mean()),
        "safe_fraction": float(truth.mean()),
        "seconds": time.perf_counter() - start,
        "false_safe_states": states[false_safe][:20].round(4).tolist(),
    }
