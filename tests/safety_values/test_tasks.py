import dataclasses

import numpy as np
import pytest
import torch

from governor.core import Trajectory
from governor.errors import ConfigError
from governor.safety_values.ddqn import safety_target, train
from governor.safety_values.ddqn_config import DDQNConfig
from governor.safety_values.encoders import ObservationModel
from governor.safety_values.learned import LearnedQ, evaluate, learned_filter, save_checkpoint
from governor.safety_values.replay import ReplayBuffer
from governor.safety_values.tasks import make_task
from governor.worlds.commerce.env import (
    CommerceParams,
    cart_state,
    levels,
    named_start,
    random_carts,
    step_carts,
)
from governor.worlds.commerce.task import Carts, CommerceTask
from governor.worlds.commerce.value import (
    CommerceValue,
    commerce_exact_filter,
    safe_exists,
    subsets,
)
from governor.worlds.driving.env import DrivingParams
from governor.worlds.driving.task import DrivingTask

P = CommerceParams()
SMALL = CommerceParams(max_items=5, actions=3)


def _brute_force(params, state):
    """Q by enumerating every click sequence on the true dynamics."""
    q = []
    for action in range(params.n_actions):
        nxt, done = step_carts(params, state, action)
        level = levels(params, nxt, done)[0]
        q.append(level if done[0] else max(_brute_force(params, nxt[0])))
    return q


def test_exact_value_equals_brute_force_on_small_carts():
    states = random_carts(SMALL, 60, np.random.default_rng(3))
    exact = CommerceValue(SMALL).q_batch(states)
    brute = np.array([_brute_force(SMALL, s) for s in states])
    assert np.allclose(exact, brute, atol=1e-9)
    assert (exact.max(axis=1) > 0).any() and (exact.max(axis=1) < 0).any()


def test_exact_value_is_removing_the_most_expensive_items():
    # a property of this task the programme does not assume: the best is the k priciest removed
    states = random_carts(P, 300, np.random.default_rng(4))
    cents = P.prices_cents[states[:, :-1].astype(int)]  # 0 where there is no row
    k = states[:, -1].astype(int)
    kept = np.array(
        [np.sort(c)[: max(len(c) - kk, 0)].sum() for c, kk in zip(cents, k, strict=True)]
    )
    best = P.budget + 0.005 - kept / 100
    assert np.allclose(CommerceValue(P).values(states), best, atol=1e-9)


def test_subset_table_removes_the_ith_present_row():
    bits, after = subsets(4)
    assert after[0b1011, 0] == 0b1010 and after[0b1011, 1] == 0b1001
    assert after[0b1011, 2] == 0b0011 and after[0b1011, 3] == 0b1011  # no fourth row: wasted
    assert bits.shape == (16, 4)


def test_named_starts_have_the_documented_safe_sequences():
    exact = CommerceValue(P)
    q = exact.q(named_start(P, "five_largest"))
    prices = P.prices_cents[named_start(P, "five_largest")[:-1].astype(int)]
    five = set((np.argsort(-prices)[:5] + 1).tolist())
    assert {a for a in range(11) if q[a] > 0} == five  # only removing one of the five priciest
    assert exact.values(named_start(P, "exactly_budget")[None])[0] == pytest.approx(0.005)
    for name, expected in [
        ("ginger_ale", True),
        ("over_by_a_cent", False),
        ("ten_mid_priced", False),
    ]:
        assert safe_exists(P, named_start(P, name)) is expected
    assert exact.q(named_start(P, "under_budget"))[0] > 0  # checking out at once is safe


def test_the_exact_q_is_the_ddqn_target_fixed_point_at_gamma_one():
    """Margins of the envs' transitions put into safety_target with the exact V reproduce Q."""
    states = random_carts(P, 200, np.random.default_rng(5))
    exact = CommerceValue(P)
    q = exact.q_batch(states)
    for action in range(P.n_actions):
        nxt, done = step_carts(P, states, action)
        v = torch.tensor(exact.values(nxt))[:, None].repeat(1, P.n_actions)
        level = torch.tensor(levels(P, nxt, done))
        y = safety_target(level, torch.tensor(done), v, v, gamma=1.0)
        assert np.allclose(y.numpy(), q[:, action])
    # with gamma < 1 the open level's share biases a doomed cart's value upward
    doomed = named_start(P, "over_by_a_cent")
    nxt, done = step_carts(P, doomed, 2)
    v = torch.tensor([[exact.values(nxt)[0]]])
    y = safety_target(torch.tensor(levels(P, nxt, done)), torch.tensor(done), v, v, gamma=0.99)
    assert exact.q(doomed)[2] < 0 < y.item()


def test_carts_restart_at_checkout_and_fill_a_wide_buffer():
    carts = Carts(SMALL, 8, np.random.default_rng(0))
    buffer = ReplayBuffer(100, state_dim=6)
    for _ in range(10):
        step = carts.step(np.zeros(8, dtype=np.int64))  # everyone checks out
        assert step.done.all() and (carts.states[:, -1] >= 1).all()
        buffer.add(step)
    assert len(buffer) == 80 and buffer.sample(5, np.random.default_rng(1)).states.shape == (5, 6)
    step = carts.step(np.full(8, 9, dtype=np.int64))  # wasted clicks use an action
    assert (step.next_states[:, -1] == step.states[:, -1] - 1).all()
    assert (step.levels[~step.done] == SMALL.open_level).all()


def test_tasks_describe_their_shapes_and_refuse_mismatches():
    commerce, driving = make_task("commerce"), make_task("driving")
    assert isinstance(commerce, CommerceTask) and isinstance(driving, DrivingTask)
    assert (commerce.state_dim, commerce.n_actions, commerce.feature_dim) == (11, 11, 22)
    assert (driving.state_dim, driving.n_actions, driving.feature_dim) == (3, 3, 4)
    features = commerce.features(named_start(P, "ginger_ale")[None])
    assert features.shape == (1, 22) and features[0, 0] == pytest.approx(68.5 / 50)
    assert make_task("commerce", {"budget": 60.0, "catalogue": [[n, p] for n, p in P.catalogue]})
    with pytest.raises(ConfigError, match="expected driving or commerce, found 'shop'"):
        make_task("shop")
    with pytest.raises(ConfigError, match="expected DrivingParams"):
        make_task("driving", P)


def test_exact_filter_vets_element_ids():
    monitor, fallback = commerce_exact_filter(P)
    traj = Trajectory({"state": named_start(P, "five_largest").astype(np.float32)})
    assert not monitor.check(traj, 0).admissible  # checking out $191.11
    best = fallback.act(traj, [])
    assert monitor.check(traj, best).admissible and monitor.check(traj, 4).admissible
    assert "cannot end within budget" in monitor.check(traj, 3).descriptor  # a cheap row
    failed = monitor.check(traj, 11)
    assert not failed.admissible and "expected an element id 0..10, found 11" in failed.descriptor


TINY = DDQNConfig(
    env="commerce",
    iterations=600,
    minutes=1.0,
    n_envs=16,
    batch_size=128,
    learning_starts=256,
    eval_every=300,
    eval_states=400,
)


def test_commerce_config_defaults_follow_table_9_and_gamma_one():
    cfg = DDQNConfig(env="commerce", obs="text")
    assert (cfg.iterations, cfg.tau, cfg.eps_period, cfg.lr_period) == (80_000, 0.005, 4000, 4000)
    assert cfg.gamma == cfg.gamma_end == 1.0 and cfg.batch == 32
    driving = DDQNConfig()
    assert (driving.iterations, driving.gamma, driving.tau, driving.n_envs) == (
        400_000,
        0.99,
        0.01,
        64,
    )
    assert DDQNConfig(env="commerce", tau=0.02).tau == 0.02
    with pytest.raises(ConfigError, match="expected driving or commerce"):
        DDQNConfig(env="shop")  # type: ignore[arg-type]


def test_commerce_training_improves_agreement_and_checkpoints(tmp_path):
    torch.set_num_threads(1)
    result = train(TINY, tmp_path / "ck", progress=False)
    learned = LearnedQ.load(tmp_path / "ck", env="commerce", obs="state", params=P)
    history = learned.info["history"]
    assert result.iterations == 600 and learned.env == "commerce"
    assert (
        result.agreement >= history[0]["agreement"] + 0.1 and result.agreement > 0.8
    )  # ~0.7 -> 0.85+
    metrics = evaluate(learned, CommerceValue(P), n_states=300)
    assert metrics["env"] == "commerce" and metrics["agreement"] > 0.75
    monitor, _ = learned_filter(tmp_path / "ck", 0.0, env="commerce")
    assert monitor.name == "learned_state"


def test_commerce_text_training_runs_end_to_end(tmp_path):
    torch.set_num_threads(1)
    cfg = dataclasses.replace(
        TINY, obs="text", iterations=6, batch_size=8, learning_starts=16, eval_states=20
    )
    cfg = dataclasses.replace(cfg, d_model=8, ff=16, head_hidden=16, eval_every=3)
    result = train(cfg, tmp_path / "text", progress=False)
    learned = LearnedQ.load(tmp_path / "text", env="commerce", obs="text")
    assert result.iterations == 6 and learned.info["config"]["env"] == "commerce"
    state = named_start(P, "five_largest")
    from governor.worlds.commerce.env import describe

    q = learned({"text": describe(P, state), "state": np.zeros(3)})  # reads the text only
    assert q.shape == (11,) and np.allclose(q, learned.q_states(state[None])[0], atol=1e-4)


def test_a_checkpoint_of_another_env_is_refused_saying_which(tmp_path):
    torch.manual_seed(0)
    driving = ObservationModel("state", DrivingParams(), {})
    save_checkpoint(tmp_path / "drive", driving, driving.network(), {"minutes": 0.1})
    with pytest.raises(ConfigError, match=r"trained for env 'driving', expected env 'commerce'"):
        LearnedQ.load(tmp_path / "drive", env="commerce")
    with pytest.raises(ConfigError, match=r"trained for env 'driving', expected env 'commerce'"):
        learned_filter(tmp_path / "drive", 0.0, env="commerce")
    commerce = ObservationModel("state", P, {})
    save_checkpoint(tmp_path / "shop", commerce, commerce.network(), {"minutes": 0.1})
    with pytest.raises(ConfigError, match=r"trained for env 'commerce', expected env 'driving'"):
        learned_filter(tmp_path / "shop", 0.0)
    with pytest.raises(ConfigError, match="other commerce parameters"):
        LearnedQ.load(tmp_path / "shop", params=CommerceParams(budget=60.0))
    with pytest.raises(ConfigError, match="other commerce parameters"):
        LearnedQ.load(tmp_path / "shop", params=DrivingParams())


def test_text_head_scores_absent_elements_alike():
    torch.manual_seed(0)
    model = ObservationModel("text", P, {"d_model": 8, "ff": 16, "head_hidden": 16})
    net = model.network().eval()
    two_items = cart_state(P, (4, 9), 3)
    with torch.no_grad():
        q = net(*model.from_states(two_items[None]))[0]
    assert torch.allclose(q[3:], q[3].expand(8))  # rows 3..10 are not on the page
    assert not torch.isclose(q[1], q[2]) and not torch.isclose(q[0], q[1])


@pytest.mark.parametrize("heads", [1, 2])
def test_windowed_read_equals_the_full_read_when_the_window_covers_the_text(heads):
    from governor.safety_values.text_net import _Block

    torch.manual_seed(1)
    block = _Block(8, heads, 16, rel=4, norm_keys=False)
    with torch.no_grad():
        block.bias.normal_()
    xk = torch.randn(3, 9, 8)
    qpos = torch.tensor([[0, 4, 8], [2, 3, 3], [1, 5, 7]])
    xq = torch.gather(xk, 1, qpos[..., None].expand(-1, -1, 8))
    keep = torch.ones(3, 9, dtype=torch.bool)
    keep[1, 6:] = False  # padding
    full = block(xq, xk, qpos, keep)
    assert torch.allclose(block.local(xq, xk, qpos, keep, window=9), full, atol=1e-5)
    assert not torch.allclose(block.local(xq, xk, qpos, keep, window=1), full, atol=1e-3)
