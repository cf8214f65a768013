import json

import numpy as np
import pytest
import torch

from governor.config import ObserverConfig
from governor.core import DecisionKind
from governor.errors import ConfigError
from governor.observer import Observer
from governor.safety_values.encoders import ObservationModel
from governor.safety_values.filter import SafetyFilter, ValueFallback
from governor.safety_values.learned import (
    CHECKPOINT,
    METRICS,
    LearnedQ,
    decision_latency_us,
    evaluate,
    held_out_states,
    learned_filter,
    load_checkpoint,
    save_checkpoint,
)
from governor.worlds.driving.bench import make_guard
from governor.worlds.driving.controllers import ErraticPolicy
from governor.worlds.driving.env import LABELS, DrivingEnv, DrivingParams

PARAMS = DrivingParams()
SMALL_TEXT = {"d_model": 8, "ff": 16, "head_hidden": 16}


def _checkpoint(path, obs="state", settings=None):
    torch.manual_seed(0)
    model = ObservationModel(obs, PARAMS, settings or (SMALL_TEXT if obs == "text" else {}))
    net = model.network()
    save_checkpoint(path, model, net, {"minutes": 1.5, "iteration": 7})
    return model, net


def test_round_trip_gives_the_same_q(tmp_path):
    model, net = _checkpoint(tmp_path / "ck")
    learned = LearnedQ.load(tmp_path / "ck", env="driving", obs="state")
    states = held_out_states(PARAMS, 50)
    with torch.no_grad():
        want = net(*model.from_states(states)).numpy()
    assert np.allclose(learned.q_states(states), want, atol=1e-6)
    q = learned({"state": states[0].astype(np.float32), "text": "ignored"})
    assert q.shape == (3,) and q.dtype == np.float64 and np.allclose(q, want[0], atol=1e-5)
    meta = json.loads((tmp_path / "ck" / "meta.json").read_text())
    assert meta["obs"] == "state" and meta["info"]["iteration"] == 7 and "state_dict" not in meta


def test_text_checkpoint_reads_the_text(tmp_path):
    _checkpoint(tmp_path / "ck", obs="text")
    learned = LearnedQ.load(tmp_path / "ck", obs="text")
    env = DrivingEnv(PARAMS)
    observation, _ = env.reset(seed=0)
    q = learned(observation)
    assert np.allclose(q, learned(observation["text"]))  # a plain string works too
    assert np.allclose(q, learned.q_states(observation["state"][None])[0], atol=1e-5)


def test_a_checkpoint_of_another_obs_or_env_is_refused_saying_which(tmp_path):
    _checkpoint(tmp_path / "ck")
    with pytest.raises(ConfigError, match=r"trained for obs 'state', expected obs 'text'"):
        LearnedQ.load(tmp_path / "ck", obs="text")
    data = torch.load(tmp_path / "ck" / CHECKPOINT, weights_only=True)
    data["env"] = "commerce"
    torch.save(data, tmp_path / "ck" / CHECKPOINT)
    with pytest.raises(ConfigError, match=r"trained for env 'commerce', expected env 'driving'"):
        LearnedQ.load(tmp_path / "ck", env="driving")
    with pytest.raises(ConfigError, match=r"trained for env 'commerce'"):
        learned_filter(tmp_path / "ck", 0.0)


def test_other_driving_params_are_refused(tmp_path):
    _checkpoint(tmp_path / "ck")
    other = DrivingParams(obstacles=((3.0, 1.0),))
    with pytest.raises(ConfigError, match="other driving parameters"):
        LearnedQ.load(tmp_path / "ck", params=other)


def test_missing_or_corrupt_checkpoints_are_clear_errors(tmp_path):
    with pytest.raises(ConfigError, match=r"train one with `governor train safety-value`"):
        LearnedQ.load(tmp_path / "nothing")
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / CHECKPOINT).write_bytes(b"not a checkpoint")
    with pytest.raises(ConfigError, match="cannot be read"):
        load_checkpoint(tmp_path / "bad")
    torch.save({"format": 99}, tmp_path / "bad" / CHECKPOINT)
    with pytest.raises(ConfigError, match="expected format 1, found 99"):
        load_checkpoint(tmp_path / "bad")


def test_evaluate_metrics(small_grid, tmp_path):
    _checkpoint(tmp_path / "ck")
    metrics = evaluate(LearnedQ.load(tmp_path / "ck"), small_grid, n_states=400)
    assert set(metrics) == set(METRICS)
    assert metrics["train_minutes"] == 1.5 and metrics["env"] == "driving"
    assert metrics["tp_rate"] + metrics["fn_rate"] == pytest.approx(1.0)
    assert all(0.0 <= metrics[k] <= 1.0 for k in ("agreement", "value_f1", "tn_rate"))


def test_learned_q_drives_a_safety_filter_in_an_observer_step(tmp_path):
    _checkpoint(tmp_path / "ck", obs="text")
    q = LearnedQ.load(tmp_path / "ck")
    observer = Observer(
        ErraticPolicy(PARAMS, p=0.5, seed=0),
        [SafetyFilter(q, margin=0.0, labels=LABELS)],
        ValueFallback(q),
        config=ObserverConfig(max_regenerations=0),
    )
    env = DrivingEnv(PARAMS)
    observation, info = env.reset(seed=3)
    traj = observer.start(observation, info)
    for _ in range(3):
        decision = observer.step(traj)
        assert decision.kind in (DecisionKind.EXECUTE, DecisionKind.FALLBACK)
        best = int(np.argmax(q(traj.observation)))
        if decision.kind is DecisionKind.FALLBACK:
            assert decision.action == best
        else:
            assert q(traj.observation)[decision.action] > 0.0
        observation, _, terminated, truncated, info = env.step(decision.action)
        traj = observer.commit(traj, decision, observation, info)
        if terminated or truncated:
            break
    assert decision_latency_us(q, n=20) > 0.0


def test_bench_builds_a_learned_guard(small_grid, tmp_path):
    _checkpoint(tmp_path / "ck")
    constraints, fallback = make_guard(f"learned:{tmp_path / 'ck'}", small_grid, 0.05)
    assert isinstance(constraints[0], SafetyFilter) and constraints[0].margin == 0.05
    assert constraints[0].name == "learned_state" and isinstance(fallback, ValueFallback)
