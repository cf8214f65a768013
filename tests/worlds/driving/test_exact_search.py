import json
import math

import numpy as np
import pytest

from governor.worlds.driving.env import DrivingParams
from governor.worlds.driving.exact_search import (
    certified_safe,
    grid_order,
    monitor_agreement,
    safe_by_search,
    sample_road_states,
)
from governor.worlds.driving.grid_value import GridSpec, GridValue, load_or_compute

P = DrivingParams()


@pytest.mark.parametrize(
    ("state", "safe"),
    [
        ((3.5, 1.0, 0.0), False),  # inside the first obstacle
        ((2.3, 1.0, 0.0), False),  # heading straight at it, too close to turn away
        ((5.0, 0.05, -math.pi / 2), False),  # leaving the road on the right
        ((0.1, 1.5, math.pi), False),  # reversing over the start line
        ((1.0, 1.5, 0.0), True),
        ((9.8, 1.5, 0.0), True),  # at the goal next step
        ((10.5, 1.5, 0.0), True),  # already at the goal
    ],
)
def test_hand_picked_states(state, safe):
    assert safe_by_search(P, state) is safe


def test_depth_bounds_the_search():
    doomed = (2.3, 1.0, 0.0)
    assert safe_by_search(P, doomed, depth=0) and safe_by_search(P, doomed, depth=1)
    assert not safe_by_search(P, doomed, depth=3)


def test_order_is_followed():
    seen = []

    def order(state):
        seen.append(state.copy())
        return (2, 1, 0)

    assert safe_by_search(P, (1.0, 1.5, 0.0), order=order)
    assert len(seen) >= 20  # one call per step on the way to the goal


def test_agreement_on_a_small_sample(small_grid: GridValue):
    result = monitor_agreement(small_grid, 300, seed=0)
    assert result["states"] == 300 and result["margin"] == small_grid.resolution
    assert result["false_safe"] == 0 and result["false_safe_rate"] == 0.0
    assert result["agreement"] > 0.75  # a coarse grid is conservative
    sharper = monitor_agreement(small_grid, 300, seed=0, lookahead=4)
    assert sharper["false_safe"] == 0 and sharper["agreement"] > result["agreement"]
    json.dumps(result)


def test_the_grid_agreement_is_recounted_by_brute_force():
    """The README's figures (the full grid's sign agrees with an exact search on 99.75% of 2,000
    road states; at the filter's margin none it calls safe is doomed), recounted state by state
    on 300 of them, the search in its plain action order (not the grid's)."""
    gv = load_or_compute(P, GridSpec(), progress=False)[0]
    states = sample_road_states(P, 300, seed=0)
    truth = np.array([safe_by_search(P, s) for s in states], dtype=bool)
    values = gv.values(states)
    agreement = float(((values > 0.0) == truth).mean())
    assert agreement >= 0.99
    assert not np.any((values > gv.resolution) & ~truth)  # no doomed state called safe
    assert monitor_agreement(gv, 300, seed=0, margin=0.0)["agreement"] == agreement


def test_grid_order_and_certified_safe(small_grid: GridValue):
    order = grid_order(small_grid)
    state = np.array([1.0, 1.5, 0.0])
    assert order(state)[0] == int(np.argmax(small_grid.q(state)))
    states = sample_road_states(P, 50, seed=1)
    plain = certified_safe(small_grid, states, 0.0, 1)
    assert np.array_equal(plain, small_grid.values(states) > 0)  # lookahead 1 = V(s)
    assert certified_safe(small_grid, states[:0], 0.0, 2).shape == (0,)


def test_deep_searches_need_no_recursion():
    params = DrivingParams(obstacles=(), goal_x=50.0)
    circling = (5.0, 0.3, 0.0)  # a left circle of radius ~1.2 fits on the road
    calls = []

    def left_first(state):
        calls.append(1)
        return (2, 1, 0)

    assert safe_by_search(params, circling, depth=3000, order=left_first)
    assert len(calls) == 3000  # round and round, never backtracking
