import math

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from hypothesis import given
from hypothesis import strategies as st

import governor.envs
from governor.envs import DRIVING_ID, register_envs
from governor.errors import ConfigError, EnvError
from governor.worlds.driving.env import (
    SYSTEM_PROMPT,
    DrivingEnv,
    DrivingParams,
    action_index,
    describe,
    margin,
    margin_at,
    step_states,
    wrap_angle,
)

P = DrivingParams()
TURN = 0.5 / 1.2  # dt * umax


def test_check_env_passes():
    env = gymnasium.make(DRIVING_ID)
    check_env(env.unwrapped)
    env.close()


def test_registration_is_idempotent():
    register_envs()
    register_envs()
    assert DRIVING_ID in gymnasium.registry
    assert governor.envs.DRIVING_ID == DRIVING_ID
    env = gymnasium.make(DRIVING_ID, params=DrivingParams(horizon=5))
    assert env.unwrapped.params.horizon == 5
    env.reset(seed=0)  # the passive checker wrapped around it raises no warning
    assert env.step(env.action_space.sample())[0]["state"].shape == (3,)


@pytest.mark.parametrize(
    ("state", "action", "expected"),
    [
        ((1.0, 1.5, 0.0), 2, (1.5, 1.5, TURN)),
        ((1.0, 1.5, 0.0), 0, (1.5, 1.5, -TURN)),
        ((1.0, 1.5, math.pi / 2), 1, (1.0, 2.0, math.pi / 2)),
        (
            (1.0, 1.5, math.pi - 0.1),
            2,
            (1.0 - 0.5 * math.cos(0.1), 1.5 + 0.5 * math.sin(0.1), -math.pi - 0.1 + TURN),
        ),
    ],
)
def test_dynamics_by_hand(state, action, expected):
    nxt = step_states(P, np.array(state), action)
    assert nxt[0] == pytest.approx(expected[0], abs=1e-12)
    assert nxt[1] == pytest.approx(expected[1], abs=1e-12)
    assert nxt[2] == pytest.approx(expected[2], abs=1e-12)


def test_dynamics_are_vectorised_and_wrap():
    states = np.zeros((4, 1, 3))
    assert step_states(P, states, np.arange(3)).shape == (4, 3, 3)
    assert wrap_angle(math.pi) == pytest.approx(-math.pi)
    assert -math.pi <= step_states(P, np.array([0.0, 0.0, math.pi - 1e-3]), 2)[2] < math.pi


@pytest.mark.parametrize(
    ("x", "y", "expected"),
    [
        (3.5, 1.7, 0.2),  # above the first obstacle's edge
        (3.5, 1.0, -0.5),  # at its centre
        (5.0, -0.1, -0.1),  # off the right edge
        (5.0, 2.9, 0.1),  # near the left edge
        (0.05, 1.5, 0.05),  # just past the start line
    ],
)
def test_margin_by_hand(x, y, expected):
    assert float(margin(P, np.array([x, y, 0.0]))) == pytest.approx(expected)
    assert margin_at(P, x, y) == pytest.approx(expected)


@given(st.floats(-1, 11), st.floats(-1, 4))
def test_scalar_margin_matches_vectorised(x, y):
    assert margin_at(P, x, y) == pytest.approx(float(margin(P, np.array([x, y, 0.0]))))


def test_text_mentions_the_right_numbers():
    text = describe(P, (2.0, 1.0, 0.0))
    assert "The goal is currently 80.00 m down the track." in text
    assert "20.00 m away from the left edge" in text
    assert "10.00 m away from the right edge" in text
    assert "20.00 m past the start line" in text
    assert (
        "The first obstacle is 10.00 m away from the car at 0.0 degrees (straight ahead)." in text
    )
    assert "The car's heading is 0.0 degrees from the direction of the track." in text
    bearing = math.degrees(math.atan2(1.0, 4.5))
    gap = (math.hypot(4.5, 1.0) - 0.5) * 10
    assert (
        f"second obstacle is {gap:.2f} m away from the car at {bearing:.1f} degrees to the left"
        in text
    )
    assert "for 0.50 seconds meaning the car will move about 5.00 m" in text
    assert "A) Steer right\nB) Steer straight\nC) Steer left" in text
    assert text.endswith("Answer with a single letter.")
    turned = describe(P, (2.0, 1.0, 0.3))
    assert "17.2 degrees counter-clockwise (to the left)" in turned
    assert "17.2 degrees to the right" in turned  # the first obstacle, seen from the new heading
    assert "17.2 degrees clockwise (to the right)" in describe(P, (2.0, 1.0, -0.3))
    assert "10.00 m/s" in SYSTEM_PROMPT and "turning radius of 12.00 m" in SYSTEM_PROMPT


@pytest.mark.parametrize("action", [3, -1, True, 1.0, "B", None])
def test_invalid_actions_are_named(action):
    env = DrivingEnv()
    env.reset(seed=0)
    with pytest.raises(EnvError, match=r"expected 0, 1 or 2.*found"):
        env.step(action)
    assert action_index(action) is None


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"state": (1.0, 3.5, 0.0)}, r"y in \[0, 3\]"),
        ({"state": (-0.1, 1.0, 0.0)}, r"x in \[0, 10\]"),
        ({"state": (1.0, 1.0, float("nan"))}, "finite heading"),
        ({"state": (1.0, 1.0)}, r"a triple \(x, y, theta\)"),
        ({"start": (1.0, 1.0, 0.0)}, "only the key state"),
    ],
)
def test_invalid_reset_options(options, message):
    with pytest.raises(EnvError, match=message):
        DrivingEnv().reset(options=options)


def test_step_outside_an_episode():
    env = DrivingEnv()
    with pytest.raises(EnvError, match="call reset"):
        env.step(1)
    env.reset(options={"state": (2.85, 1.0, 0.0)})
    _, reward, terminated, truncated, info = env.step(1)
    assert (reward, terminated, truncated, info["failed"]) == (-1.0, True, False, True)
    with pytest.raises(EnvError, match="call reset"):
        env.step(1)


def test_goal_and_truncation():
    env = DrivingEnv()
    obs, info = env.reset(options={"state": (9.8, 1.5, 0.0)})
    assert set(info) == {"margin", "failed", "success", "state"}
    assert obs["state"].dtype == np.float32
    _, reward, terminated, truncated, info = env.step(1)
    assert (reward, terminated, truncated, info["success"]) == (1.0, True, False, True)
    env = DrivingEnv(DrivingParams(horizon=3))
    env.reset(options={"state": (1.0, 1.5, math.pi / 2)})
    outcomes = [env.step(2)[2:4] for _ in range(3)]
    assert outcomes == [(False, False), (False, False), (False, True)]


def test_random_starts_lie_in_the_start_region_and_repeat_by_seed():
    env = DrivingEnv()
    first = [env.reset(seed=s)[0]["state"] for s in range(20)]
    again = [env.reset(seed=s)[0]["state"] for s in range(20)]
    assert all(np.array_equal(a, b) for a, b in zip(first, again, strict=True))
    starts = np.array(first)
    assert (starts[:, :2] >= 0.5).all() and (starts[:, :2] <= 2.5).all()
    assert (np.abs(starts[:, 2]) <= math.pi / 4 + 1e-6).all()


@pytest.mark.parametrize(
    "kwargs",
    [
        {"speed": 0.0},
        {"dt": -1.0},
        {"horizon": 0},
        {"horizon": 2.5},
        {"obstacles": ((1.0,),)},
        {"obstacles": ((1.0, float("inf")),)},
        {"start_x": (2.0, 1.0)},
        {"start_y": (0.0, 4.0)},
    ],
)
def test_params_are_validated(kwargs):
    with pytest.raises(ConfigError):
        DrivingParams(**kwargs)


def test_params_key_is_stable():
    assert DrivingParams().key() == DrivingParams().key()
    assert DrivingParams(obstacles=[[3.5, 1.0], [6.5, 2.0]]).key() == DrivingParams().key()
    assert DrivingParams(goal_x=12.0).key() != DrivingParams().key()
