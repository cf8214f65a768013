import numpy as np
import pytest

from governor.core import Trajectory
from governor.errors import EnvError
from governor.safety_values.filter import SafetyFilter, ValueFallback
from governor.worlds.driving.env import LABELS
from governor.worlds.driving.filter import exact_filter, state_of
from governor.worlds.driving.grid_value import GridValue
from governor.worlds.driving.myopic import OneStepMonitor, StopFallback

OBS = {"state": np.zeros(3, dtype=np.float32), "text": "..."}


def stub(observation):
    return np.array([-0.1, 0.5, 0.02])


def test_verdicts_follow_the_switching_rule():
    monitor = SafetyFilter(stub, margin=0.05, labels=LABELS)
    traj = Trajectory(OBS)
    right, straight, left = (monitor.check(traj, a) for a in range(3))
    assert not right.admissible and right.margin == pytest.approx(-0.1)
    assert right.deviation == pytest.approx(0.15)
    assert (
        right.descriptor == "steer right leads toward failure: safety value -0.100 <= margin 0.050"
    )
    assert straight.admissible and straight.constraint == "safety_filter"
    assert straight.descriptor == "steer straight keeps the safety value 0.500 > margin 0.050"
    assert not left.admissible  # 0.02 is safe, but not by the margin


@pytest.mark.parametrize("action", [3, "B", None, True])
def test_an_action_it_cannot_judge_fails_closed(action):
    verdict = SafetyFilter(stub, margin=0.0, labels=LABELS).check(Trajectory(OBS), action)
    assert not verdict.admissible and verdict.error is not None and "0, 1 or 2" in verdict.error


def test_fallback_is_the_argmax():
    assert ValueFallback(stub).act(Trajectory(OBS), ()) == 1


def test_exact_filter_rejects_doom_and_recovers(small_grid: GridValue):
    monitor, fallback = exact_filter(small_grid)
    assert monitor.margin == small_grid.resolution
    near = Trajectory({"state": np.array([1.6, 1.0, 0.0], dtype=np.float32)})
    q = small_grid.q(near.observation["state"])
    assert not monitor.check(near, 1).admissible  # straight on stays in the obstacle's path
    safe = fallback.act(near, ())
    assert q[safe] == q.max() and monitor.check(near, safe).admissible
    assert exact_filter(small_grid, margin=0.2)[0].margin == 0.2


def test_state_of_reads_mappings_and_arrays():
    assert state_of(OBS).shape == (3,)
    assert state_of([1, 2, 3]).tolist() == [1.0, 2.0, 3.0]
    with pytest.raises(EnvError, match=r"3 numbers"):
        state_of({"state": [1, 2]})


def test_myopic_monitor_only_sees_the_next_step(small_grid: GridValue):
    monitor = OneStepMonitor(small_grid.params)
    doomed = Trajectory({"state": np.array([2.3, 1.0, 0.0])})  # next state still clear
    assert all(monitor.check(doomed, a).admissible for a in range(3))
    assert (small_grid.q(doomed.observation["state"]) < 0).all()  # but nothing can save it
    crash = Trajectory({"state": np.array([2.9, 1.0, 0.0])})
    verdict = monitor.check(crash, 2)
    assert not verdict.admissible and verdict.constraint == "myopic"
    assert "steer left fails at the next step" in verdict.descriptor
    assert not monitor.check(crash, 7).admissible
    assert StopFallback().act(crash, [verdict]) is None
