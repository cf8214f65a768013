import json

import numpy as np
import pytest
import torch

from governor.config import ObserverConfig
from governor.core import Trajectory
from governor.errors import ConfigError
from governor.observer import Observer
from governor.runner import run_episode
from governor.worlds.driving.controllers import NominalController
from governor.worlds.driving.env import DrivingEnv, DrivingParams, margin, step_states
from governor.worlds.driving.grid_value import GridValue
from governor.worlds.driving.myopic import StopFallback
from governor.worlds.driving.myopic_guard import (
    ImitationFallback,
    LearnedOneStepMonitor,
    myopic_guard,
)
from governor.worlds.driving.myopic_learned import (
    CHECKPOINT,
    META,
    MyopicConfig,
    MyopicModel,
    load_model,
    one_step_labels,
    privileged_targets,
    rollout_states,
    save_model,
    train,
)

PARAMS = DrivingParams()
CFG = MyopicConfig()
DOOMED = np.array(
    [2.8, 1.0, 0.0]
)  # the next state is inside the first obstacle, whatever the steer
OPEN = np.array([1.0, 1.6, 0.0])


@pytest.fixture(scope="module")
def states() -> np.ndarray:
    return rollout_states(PARAMS, CFG)


@pytest.fixture(scope="module")
def held_out() -> np.ndarray:
    return rollout_states(PARAMS, CFG, seed=99)


@pytest.fixture(scope="module")
def classifier(states: np.ndarray) -> MyopicModel:
    torch.set_num_threads(1)
    return train("myopic_classifier", PARAMS, CFG, states=states)


@pytest.fixture(scope="module")
def recovery(small_grid: GridValue, states: np.ndarray) -> MyopicModel:
    torch.set_num_threads(1)
    return train("myopic_recovery", PARAMS, CFG, grid=small_grid, states=states)


def test_rollout_states_are_live_and_seeded(states: np.ndarray):
    assert states.shape[1] == 3 and len(states) > 2 * CFG.episodes
    assert (margin(PARAMS, states) >= 0).all() and (states[:, 0] < PARAMS.goal_x).all()
    again = rollout_states(PARAMS, CFG)
    assert np.array_equal(states, again)
    assert not np.array_equal(states[:50], rollout_states(PARAMS, CFG, seed=1)[:50])


def test_labels_are_one_step_failures():
    actions, labels = one_step_labels(PARAMS, np.stack([DOOMED, OPEN]))
    assert actions.tolist() == [0, 1, 2, 0, 1, 2]
    assert labels.tolist() == [0, 0, 0, 1, 1, 1]
    nxt = step_states(PARAMS, DOOMED, 1)
    assert margin(PARAMS, nxt) < 0


def test_classifier_learns_the_one_step_labels(classifier: MyopicModel, held_out: np.ndarray):
    actions, labels = one_step_labels(PARAMS, held_out)
    assert 0.03 < 1 - labels.mean() < 0.3  # rollouts do reach failure: the task is not trivial
    predicted = classifier.p_safe(np.repeat(held_out, 3, axis=0), actions) >= 0.5
    accuracy = (predicted == labels.astype(bool)).mean()
    unsafe_recall = (~predicted[labels == 0]).mean()
    assert accuracy > 0.97, accuracy
    assert unsafe_recall > 0.85, unsafe_recall
    assert classifier.info["seconds"] < 30 and classifier.info["train_accuracy"] > 0.97


def test_monitor_rejects_a_doomed_step_and_stop_ends_the_episode(classifier: MyopicModel):
    monitor, fallback = myopic_guard(classifier)
    assert isinstance(fallback, StopFallback) and monitor.threshold == 0.5
    doomed, open_road = Trajectory({"state": DOOMED}), Trajectory({"state": OPEN})
    for action in range(3):
        verdict = monitor.check(doomed, action)
        assert not verdict.admissible and "p(safe)" in verdict.descriptor
        assert verdict.margin is not None and verdict.margin < 0
        assert monitor.check(open_road, action).admissible
    assert monitor.check(open_road, 7).error is not None
    observer = Observer(
        NominalController(PARAMS), [monitor], fallback, config=ObserverConfig(max_regenerations=0)
    )
    episode = run_episode(DrivingEnv(PARAMS), observer, options={"state": DOOMED})
    assert episode.outcome == "stopped" and episode.steps == 0


def test_recovery_imitates_the_exact_argmax(
    classifier: MyopicModel, recovery: MyopicModel, small_grid: GridValue, held_out: np.ndarray
):
    best = privileged_targets(small_grid, held_out) > 0
    chosen = recovery.actions(held_out)
    agreement = best[np.arange(len(held_out)), chosen].mean()
    assert agreement > 0.85, agreement
    q = small_grid.q_batch(held_out)
    safe = q.max(axis=1) > 0
    assert (q[np.arange(len(held_out)), chosen] > 0)[safe].mean() > 0.95
    fallback = ImitationFallback(recovery)
    state = held_out[0]
    assert fallback.act(Trajectory({"state": state}), ()) == chosen[0]
    _, paired = myopic_guard(classifier, recovery)
    assert isinstance(paired, ImitationFallback) and paired.name == "myopic_privileged"


def test_privileged_targets_share_ties(small_grid: GridValue):
    targets = privileged_targets(small_grid, np.stack([DOOMED, OPEN]))
    assert np.allclose(targets.sum(axis=1), 1.0)
    assert targets[0].tolist() == pytest.approx([1 / 3] * 3)  # all actions crash alike


def test_checkpoint_round_trip(classifier: MyopicModel, recovery: MyopicModel, tmp_path):
    path = save_model(tmp_path / "clf", classifier)
    assert path.name == CHECKPOINT
    meta = json.loads((tmp_path / "clf" / META).read_text())
    assert meta["kind"] == "myopic_classifier" and meta["env"] == "driving"
    assert "state_dict" not in meta and meta["config"]["hidden"] == list(CFG.hidden)
    loaded = load_model(tmp_path / "clf", "myopic_classifier", PARAMS)
    states = np.stack([DOOMED, OPEN])
    actions = np.array([1, 1])
    assert np.allclose(loaded.p_safe(states, actions), classifier.p_safe(states, actions))
    assert loaded.cfg == classifier.cfg and loaded.info == pytest.approx(classifier.info)
    save_model(tmp_path / "rec", recovery)
    assert np.array_equal(
        load_model(tmp_path / "rec", "myopic_recovery").actions(states), recovery.actions(states)
    )


def test_checkpoint_refusals(classifier: MyopicModel, tmp_path):
    save_model(tmp_path / "clf", classifier)
    with pytest.raises(ConfigError, match=r"holds kind 'myopic_classifier', expected 'myopic_rec"):
        load_model(tmp_path / "clf", "myopic_recovery")
    with pytest.raises(ConfigError, match=r"holds env 'driving', expected 'commerce'"):
        load_model(tmp_path / "clf", "myopic_classifier", env="commerce")
    with pytest.raises(ConfigError, match=r"other driving parameters"):
        load_model(tmp_path / "clf", "myopic_classifier", DrivingParams(goal_x=12.0))
    with pytest.raises(ConfigError, match=r"found no such file"):
        load_model(tmp_path / "nothing", "myopic_classifier")
    (tmp_path / "sv").mkdir()  # a safety-value checkpoint directory is not one of ours
    torch.save({"format": 1, "env": "driving", "obs": "state"}, tmp_path / "sv" / "checkpoint.pt")
    with pytest.raises(ConfigError, match=r"myopic\.pt, found no such file"):
        load_model(tmp_path / "sv", "myopic_classifier")
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / CHECKPOINT).write_bytes(b"not a checkpoint")
    with pytest.raises(ConfigError, match=r"cannot be read"):
        load_model(tmp_path / "bad", "myopic_classifier")


def test_wrong_kinds_and_settings_are_refused(classifier: MyopicModel):
    with pytest.raises(ConfigError, match=r"a myopic_recovery"):
        ImitationFallback(classifier)
    with pytest.raises(ConfigError, match=r"exact grid value"):
        train("myopic_recovery", PARAMS, MyopicConfig(episodes=1, epochs=1))
    with pytest.raises(ConfigError, match=r"myopic_classifier or myopic_recovery"):
        MyopicModel("llamaguard", PARAMS, CFG, {})
    with pytest.raises(ConfigError, match=r"erratic_p"):
        MyopicConfig(erratic_p=1.5)
    with pytest.raises(ConfigError, match=r"a myopic_classifier"):
        LearnedOneStepMonitor(MyopicModel("myopic_recovery", PARAMS, CFG, {}))
