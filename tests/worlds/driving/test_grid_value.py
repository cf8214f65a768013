import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from governor.errors import ConfigError
from governor.worlds.driving.env import DrivingParams, margin, step_states
from governor.worlds.driving.grid_value import (
    GridSpec,
    GridValue,
    build_transition,
    cache_path,
    grid_states,
    load_or_compute,
)

P = DrivingParams()
SMALL = GridSpec(nx=31, ny=31, ntheta=16)  # the small_grid fixture's spec


def test_value_never_exceeds_the_margin(small_grid: GridValue):
    level = margin(P, grid_states(P, SMALL))
    assert (level + 1e-6 >= small_grid.V).all()
    failed = level < 0
    assert np.allclose(small_grid.V[failed], level[failed])


@pytest.mark.parametrize(
    "state", [(3.5, 1.0, 0.0), (6.5, 2.2, 1.0), (5.0, -0.05, 0.0), (5.0, 3.1, 2.0)]
)
def test_value_is_negative_inside_obstacles_and_off_road(small_grid: GridValue, state):
    assert small_grid.value(state) < 0


@pytest.mark.parametrize("state", [(10.0, 1.5, 0.0), (10.3, 0.2, -1.0), (10.4, 2.9, 3.0)])
def test_value_is_the_margin_at_goal_states(small_grid: GridValue, state):
    assert small_grid.value(state) == pytest.approx(float(margin(P, np.array(state))))


def test_heading_at_a_near_obstacle_is_unsafe_and_far_away_safe(small_grid: GridValue):
    assert small_grid.value((2.3, 1.0, 0.0)) < 0  # 0.7 units short of the first obstacle's edge
    assert (small_grid.q((2.3, 1.0, 0.0)) < 0).all()
    assert small_grid.value((1.0, 1.5, 0.0)) > 0.3
    assert small_grid.q((9.6, 1.5, 0.0)) == pytest.approx([1.5, 1.5, 1.5])  # goal next step


@settings(max_examples=200, deadline=None)
@given(st.floats(0, 10), st.floats(0, 3), st.floats(-math.pi, math.pi))
def test_q_matches_q_batch_and_value(small_grid: GridValue, x, y, theta):
    state = np.array([x, y, theta])
    q = small_grid.q(state)
    assert q.shape == (3,)
    assert np.allclose(q, small_grid.q_batch(state[None])[0], atol=1e-9)
    value = small_grid.value(state)
    assert value == pytest.approx(float(small_grid.values(state[None])[0]), abs=1e-9)
    assert value <= float(margin(P, state)) + 1e-12


def test_transition_rows_are_interpolation_weights():
    matrix, next_level, offset = build_transition(P, SMALL)
    n = math.prod(SMALL.shape)
    assert matrix.shape == (3 * n, n)
    sums = np.asarray(matrix.sum(axis=1)).ravel()
    fixed = offset > 0
    assert np.allclose(sums[~fixed], 1.0, atol=1e-5) and (sums[fixed] == 0).all()
    states = np.broadcast_to(grid_states(P, SMALL).reshape(1, -1, 3), (3, n, 3)).reshape(-1, 3)
    nxt = step_states(P, states, np.repeat(np.arange(3), n))
    assert np.allclose(next_level, margin(P, nxt), atol=1e-6)
    expect_fixed = (margin(P, nxt) < 0) | (nxt[:, 0] >= P.goal_x)
    inside = states[:, 0] < P.goal_x  # nodes on the goal line stand for states just before it
    assert np.array_equal(fixed[inside], expect_fixed[inside])


def test_cache_roundtrip_and_corrupt_file(tmp_path):
    spec = GridSpec(nx=11, ny=11, ntheta=8)
    first, _, cached = load_or_compute(P, spec, cache_dir=tmp_path, progress=False)
    assert not cached and first.iters > 0
    again, _, cached = load_or_compute(P, spec, cache_dir=tmp_path, progress=False)
    assert cached and np.array_equal(again.V, first.V) and again.iters == first.iters
    path = cache_path(P, spec, tmp_path)
    path.write_bytes(b"not a zip file")
    redone, _, cached = load_or_compute(P, spec, cache_dir=tmp_path, progress=False)
    assert not cached and np.array_equal(redone.V, first.V)
    assert cache_path(DrivingParams(goal_x=9.0), spec, tmp_path) != path


def test_cache_dir_from_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("GOVERNOR_CACHE_DIR", str(tmp_path))
    assert cache_path(P, SMALL).parent == tmp_path


@pytest.mark.parametrize(
    "kwargs", [{"nx": 3}, {"ntheta": 10.0}, {"tol": -1.0}, {"max_iters": True}]
)
def test_grid_spec_is_validated(kwargs):
    with pytest.raises(ConfigError):
        GridSpec(**kwargs)


def test_value_shape_is_checked():
    with pytest.raises(ConfigError, match="shape"):
        GridValue(P, SMALL, np.zeros((3, 3, 3)))


@pytest.mark.slow
def test_full_grid_converges_and_answers_every_state(tmp_path):
    gv, _, cached = load_or_compute(P, GridSpec(), cache_dir=tmp_path, progress=False)
    assert not cached and gv.iters < GridSpec().max_iters  # converged before the cap
    assert gv.resolution == pytest.approx(0.0394, abs=1e-4)
    again, _, cached = load_or_compute(P, GridSpec(), cache_dir=tmp_path, progress=False)
    assert cached  # the second load reads the cache
    rng = np.random.default_rng(0)
    states = [(rng.uniform(0, 10), rng.uniform(0, 3), rng.uniform(-3, 3)) for _ in range(500)]
    for s in states:
        q, q2 = gv.q(s), again.q(s)
        assert np.all(np.isfinite(q)) and np.array_equal(q, q2)
