import dataclasses

import numpy as np
import pytest
import torch

from governor.errors import ConfigError
from governor.safety_values.ddqn import safety_target, train
from governor.safety_values.ddqn_config import DDQNConfig, gamma_at, step_schedule
from governor.safety_values.learned import LearnedQ, load_checkpoint
from governor.safety_values.replay import ReplayBuffer, Transitions
from governor.worlds.driving.env import DrivingParams, margin
from governor.worlds.driving.task import Cars, sample_live_states

TINY = DDQNConfig(
    minutes=1.0,
    iterations=40,
    n_envs=8,
    batch_size=32,
    learning_starts=64,
    eval_every=20,
    eval_states=200,
)


def test_bellman_target_on_hand_values():
    levels = torch.tensor([-0.2, 0.4, 0.5, 0.5])
    done = torch.tensor([True, True, False, False])  # failure, goal, normal, normal
    q = torch.tensor([[9.0, 9.0, 9.0], [9.0, 9.0, 9.0], [0.1, 0.3, 0.2], [1.0, 2.0, 0.0]])
    y = safety_target(levels, done, q, q, gamma=0.9)
    # terminal: the margin itself; otherwise (1 - g) l + g min(l, Q_target(z', a*))
    expected = [-0.2, 0.4, 0.1 * 0.5 + 0.9 * 0.3, 0.1 * 0.5 + 0.9 * 0.5]
    assert y.tolist() == pytest.approx(expected)


def test_double_q_evaluates_the_online_argmax_with_the_target_network():
    online = torch.tensor([[0.0, 1.0, 0.5]])  # picks action 1
    target = torch.tensor([[2.0, -0.3, 5.0]])  # whose max (5.0) must not be used
    y = safety_target(torch.tensor([1.0]), torch.tensor([False]), online, target, gamma=1.0)
    assert y.item() == pytest.approx(-0.3)


def test_schedules_follow_start_decay_period_end():
    assert step_schedule(0.95, 0.7, 20_000, 0.05, 0) == 0.95
    assert step_schedule(0.95, 0.7, 20_000, 0.05, 19_999) == 0.95
    assert step_schedule(0.95, 0.7, 20_000, 0.05, 20_000) == pytest.approx(0.665)
    assert step_schedule(0.95, 0.7, 20_000, 0.05, 10**6) == 0.05
    assert step_schedule(1e-3, 0.8, 20_000, 1e-4, 40_000) == pytest.approx(6.4e-4)
    cfg = dataclasses.replace(TINY, gamma=0.99, gamma_end=0.999, gamma_period=10)
    assert [round(gamma_at(cfg, t), 6) for t in (0, 10, 20, 30, 1000)] == [
        0.99,
        0.995,
        0.9975,
        0.99875,
        0.999,
    ]
    assert gamma_at(TINY, 10**6) == 0.99  # gamma_end = gamma: fixed


def _batch(start: int, n: int) -> Transitions:
    i = np.arange(start, start + n, dtype=float)
    return Transitions(
        np.stack([i, i, i], axis=1), np.arange(n) % 3, np.stack([i, i, i], 1) + 1, i, i % 2 == 0
    )


def test_replay_buffer_wraps_and_samples_whole_transitions():
    buffer = ReplayBuffer(5)
    buffer.add(_batch(0, 3))
    assert len(buffer) == 3
    buffer.add(_batch(3, 4))  # 7 added: the two oldest are gone
    assert len(buffer) == 5 and sorted(buffer.levels.tolist()) == [2.0, 3.0, 4.0, 5.0, 6.0]
    sample = buffer.sample(64, np.random.default_rng(0))
    assert sample.states.shape == (64, 3) and set(sample.levels.tolist()) <= {2, 3, 4, 5, 6}
    assert (sample.next_states[:, 0] == sample.states[:, 0] + 1).all()
    assert (sample.done == (sample.levels % 2 == 0)).all()
    buffer.add(_batch(100, 9))  # more than fits: only the newest five
    assert sorted(buffer.levels.tolist()) == [104.0, 105.0, 106.0, 107.0, 108.0]
    with pytest.raises(ConfigError, match="none"):
        ReplayBuffer(3).sample(1, np.random.default_rng(0))
    with pytest.raises(ConfigError, match="buffer_size"):
        ReplayBuffer(0)


def test_cars_restart_on_termination_anywhere_on_the_road():
    params = DrivingParams()
    cars = Cars(params, 16, np.random.default_rng(1))
    assert (margin(params, cars.states) >= 0).all()
    for _ in range(80):  # longer than the horizon: every car restarts at least once
        step = cars.step(np.zeros(16, dtype=np.int64))
        failed = step.levels < 0
        assert (step.done >= failed).all()
        assert (margin(params, cars.states) >= 0).all() and (cars.t < params.horizon).all()
    assert cars.failures > 0
    states = sample_live_states(params, 2000, np.random.default_rng(2))
    assert states[:, 0].max() > 9.5 and states[:, 2].min() < -3.0  # the whole road, any heading


def test_config_is_checked():
    with pytest.raises(ConfigError, match="gamma_end"):
        DDQNConfig(gamma=0.99, gamma_end=0.9)
    with pytest.raises(ConfigError, match="batch_size"):
        DDQNConfig(batch_size=0)
    with pytest.raises(ConfigError, match="expected state, text, llm or llm-head, found 'pixels'"):
        DDQNConfig(obs="pixels")  # type: ignore[arg-type]
    assert DDQNConfig().batch == 512 and DDQNConfig(obs="text").batch == 128


def test_training_improves_agreement_and_writes_a_checkpoint(small_grid, tmp_path):
    torch.set_num_threads(1)
    cfg = dataclasses.replace(
        TINY, iterations=2000, n_envs=32, batch_size=128, eval_every=1000, eval_states=500
    )
    result = train(cfg, tmp_path / "run", grid=small_grid, progress=False)
    data = load_checkpoint(tmp_path / "run")
    history = data["info"]["history"]
    assert history[0]["iteration"] == 0 and result.iterations == 2000
    assert result.agreement >= history[0]["agreement"] + 0.05  # from about 0.68 to 0.75+
    assert data["obs"] == "state" and not result.interrupted


def test_text_training_runs_end_to_end(small_grid, tmp_path):
    torch.set_num_threads(1)
    cfg = dataclasses.replace(TINY, obs="text", d_model=8, ff=16, head_hidden=16)
    result = train(cfg, tmp_path / "text", grid=small_grid, progress=False)
    learned = LearnedQ.load(tmp_path / "text", obs="text")
    assert result.iterations == TINY.iterations and learned.obs == "text"
    assert learned.info["config"]["d_model"] == 8


def test_interrupt_keeps_the_last_checkpoint(small_grid, tmp_path):
    seen = []

    def stop(status):
        seen.append(status["iteration"])
        raise KeyboardInterrupt

    cfg = dataclasses.replace(TINY, iterations=10_000)
    result = train(cfg, tmp_path / "run", grid=small_grid, callback=stop, progress=False)
    assert result.interrupted and seen == [TINY.eval_every]
    learned = LearnedQ.load(tmp_path / "run")
    assert learned.info["interrupted"] and learned.info["iteration"] == TINY.eval_every


def test_an_llm_config_needs_a_model_and_the_driving_env():
    assert DDQNConfig(obs="llm-head", model_path="m", llm_dtype="bfloat16").llm_dtype == "bfloat16"
    with pytest.raises(ConfigError, match="exactly when obs is llm or llm-head"):
        DDQNConfig(obs="llm-head")
    with pytest.raises(ConfigError, match="driving for obs llm-head"):
        DDQNConfig(env="commerce", obs="llm-head", model_path="m")
    with pytest.raises(ConfigError, match="llm_dtype"):
        DDQNConfig(obs="llm", model_path="m", llm_dtype="int4")
