"""The ReGuard metrics on hand-computed examples, and recovery rollouts on the true dynamics."""

from __future__ import annotations

import numpy as np
import pytest

from governor.errors import ConfigError
from governor.safety_values.metrics import (
    Confusion,
    MonitorAccuracy,
    conservativeness,
    failure_rate,
    intervention_rate,
    monitor_accuracy,
    recovered,
    rollout_f1,
    shown,
    success_rate,
    value_f1,
)
from governor.worlds.driving.env import DrivingParams
from governor.worlds.driving.filter import exact_filter
from governor.worlds.driving.grid_value import GridSpec, GridValue, load_or_compute
from governor.worlds.driving.metrics import action_outcome, fallback_policy, rollout
from governor.worlds.driving.myopic import StopFallback

PARAMS = DrivingParams()
T, F = True, False


def straight(state: np.ndarray) -> int:
    return 1


@pytest.fixture(scope="module")
def grid(tmp_path_factory: pytest.TempPathFactory) -> GridValue:
    cache = tmp_path_factory.mktemp("cache")
    spec = GridSpec(nx=31, ny=31, ntheta=16)
    return load_or_compute(PARAMS, spec, cache_dir=cache, progress=False)[0]


def test_success_and_failure_rates_count_episodes():
    outcomes = ["success", "failure", "stopped", "truncated", "success", "failure", "failure"]
    assert success_rate(outcomes) == pytest.approx(2 / 7)
    assert failure_rate(outcomes) == pytest.approx(3 / 7)
    assert success_rate([]) is None and failure_rate([]) is None
    assert failure_rate(["stopped", "stopped"]) == 0.0  # a stop is not a failure


def test_intervention_rate_is_per_step():
    assert intervention_rate(3, 12) == 0.25
    assert intervention_rate(0, 5) == 0.0
    assert intervention_rate(0, 0) is None
    with pytest.raises(ConfigError, match=r"a count in \[0, 3\]"):
        intervention_rate(5, 3)


def test_confusion_counts_safe_as_positive():
    c = Confusion.of([T, T, F, F, T], [T, F, F, T, T])
    assert (c.tp, c.fp, c.tn, c.fn) == (2, 1, 1, 1)
    assert c.tp_rate == pytest.approx(2 / 3)
    assert c.tn_rate == pytest.approx(1 / 2)
    assert c.fn_rate == pytest.approx(1 / 3)
    assert c.f1 == pytest.approx(4 / 6)
    with pytest.raises(ConfigError, match=r"expected 2 \(one per truth\), found 3"):
        Confusion.of([T, F, T], [T, F])


def test_value_f1_against_the_privileged_sign():
    assert value_f1([T, T, F, F], [T, F, F, F]) == pytest.approx(2 / 3)  # 2*1 / (2*1 + 1 + 0)
    assert value_f1([T, T], [T, T]) == 1.0
    assert value_f1([F, F, F], [T, F, T]) == 0.0  # says "unsafe" everywhere: nothing right
    assert value_f1([F, F], [F, F]) is None  # no safe state on either side: undefined
    assert value_f1([], []) is None


def test_monitor_accuracy_rates_and_missing_classes():
    # allowed vs. what the guard's own recovery achieved after allowing the action
    acc = monitor_accuracy([T, T, T, F, F, T], [T, T, F, F, F, F])
    assert acc == MonitorAccuracy(tp_rate=1.0, tn_rate=pytest.approx(2 / 4))
    only_safe = monitor_accuracy([T, F], [T, T])
    assert only_safe.tp_rate == 0.5 and only_safe.tn_rate is None
    assert monitor_accuracy([], []) == MonitorAccuracy(None, None)


def test_conservativeness_is_the_false_negative_rate_against_the_best_recovery():
    # exact Q(s, a) > 0 for the first four; the monitor rejected two of them
    assert conservativeness([T, F, F, T, F], [T, T, T, T, F]) == 0.5
    assert conservativeness([F, F], [F, F]) is None  # nothing was safe: no false negatives possible
    assert conservativeness([T, T], [T, T]) == 0.0


def test_rollout_f1_per_start():
    assert rollout_f1([T, F, T], [T, T, F]) == 0.5  # tp 1, fn 1, fp 1
    assert rollout_f1([F, F], [F, F]) is None
    with pytest.raises(ConfigError):
        rollout_f1([T], [T, F])


def test_rollouts_on_hand_checked_states():
    hugging_the_left_edge = np.array([0.5, 2.6, 0.0])  # 0.1 clear of the second obstacle's top
    assert rollout(PARAMS, hugging_the_left_edge, straight, 60) == "goal"
    assert rollout(PARAMS, hugging_the_left_edge, straight, 5) == "survived"
    assert rollout(PARAMS, hugging_the_left_edge, straight, 0) == "survived"
    assert rollout(PARAMS, np.array([1.0, 1.0, 0.0]), straight, 60) == "failed"  # obstacle 1
    assert rollout(PARAMS, np.array([1.0, -0.1, 0.0]), straight, 0) == "failed"  # already off
    assert rollout(PARAMS, np.array([1.0, 1.0, 0.0]), lambda s: None, 60) == "stopped"
    # steering left there leaves the road within two steps, whatever comes after
    assert action_outcome(PARAMS, hugging_the_left_edge, 2, straight, 60) == "failed"
    assert action_outcome(PARAMS, hugging_the_left_edge, 1, straight, 60) == "goal"
    assert action_outcome(PARAMS, np.array([2.8, 1.0, 0.0]), 0, straight, 1) == "failed"
    with pytest.raises(ConfigError, match=r"at least 1"):
        action_outcome(PARAMS, hugging_the_left_edge, 1, straight, 0)


def test_the_guards_own_recovery_decides_the_truth(grid: GridValue):
    _, exact = exact_filter(grid)
    recovery = fallback_policy(exact, PARAMS)
    safe_start, doomed = np.array([1.0, 1.0, 0.0]), np.array([2.6, 1.0, 0.0])
    assert grid.value(safe_start) > 0 and grid.value(doomed) < 0
    assert rollout(PARAMS, safe_start, recovery, 60) == "goal"  # straight on would crash
    assert rollout(PARAMS, doomed, recovery, 60) == "failed"
    assert action_outcome(PARAMS, safe_start, 1, recovery, 60) == "goal"
    stop = fallback_policy(StopFallback(), PARAMS)
    outcome = action_outcome(PARAMS, safe_start, 1, stop, 60)
    assert outcome == "stopped" and not recovered(outcome)
    assert recovered(outcome, stop_is_safe=True)
    assert recovered("goal") and recovered("survived") and not recovered("failed")


def test_shown():
    assert shown(None) == "n/a" and shown(None, percent=True) == "n/a"
    assert shown(0.5) == "0.50" and shown(0.852, percent=True) == "85.2%"
