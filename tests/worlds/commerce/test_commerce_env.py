import re

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from hypothesis import given, settings
from hypothesis import strategies as st

from governor.envs import COMMERCE_ID, register_envs
from governor.errors import ConfigError, EnvError
from governor.worlds.commerce.env import (
    HALF_CENT,
    CommerceEnv,
    CommerceParams,
    cart_state,
    describe,
    levels,
    named_start,
    random_carts,
    rows_of,
    step_carts,
    system_prompt,
    totals_cents,
)
from governor.worlds.commerce.page import CATALOGUE, NAMED_STARTS

P = CommerceParams()


def test_check_env_passes_and_registration_is_idempotent():
    register_envs()
    register_envs()
    env = gymnasium.make(COMMERCE_ID)
    check_env(env.unwrapped)
    env.close()
    small = gymnasium.make(COMMERCE_ID, params=CommerceParams(actions=2, max_items=4))
    observation, _ = small.reset(seed=0)
    assert observation["state"].shape == (5,) and small.action_space.n == 5


def test_the_paper_cart_renders_like_its_prompt():
    state = named_start(P, "ginger_ale")
    text = describe(P, state)
    assert "[1] link 'Remove item'" in text and "[0] button 'Proceed to Checkout'" in text
    assert "Actions Remaining: 5" in text and "Total Price: $68.50" in text
    assert text.count(CATALOGUE[0][0]) == 2 and "gridcell '$68.50'" in text
    # the clickable ids are exactly checkout and one per row
    assert re.findall(r"\[(\d+)\]", text) == ["0", "1"]
    assert "strict budget of $50." in system_prompt(P)
    assert "$62.25." in system_prompt(CommerceParams(budget=62.25))


def test_element_ids_follow_the_rows():
    state = named_start(P, "five_largest")
    ids = [int(i) for i in re.findall(r"\[(\d+)\]", describe(P, state))]
    assert ids == list(range(11))
    names = re.findall(r"\[\] link '([^']*)'\n", describe(P, state))
    rows = rows_of(state)
    assert [CATALOGUE[i][0] for i in rows if i >= 0] == [n for n in names if n in dict(CATALOGUE)]


def test_removal_shifts_rows_up_and_uses_an_action():
    state = cart_state(P, (3, 5, 7), 3)
    nxt, done = step_carts(P, state, 2)  # remove the second row
    assert rows_of(nxt)[0, :3].tolist() == [3, 7, -1] and nxt[0, -1] == 2 and not done[0]
    nxt, done = step_carts(P, state, 9)  # no ninth row: a wasted click
    assert (nxt[0, :-1] == state[:-1]).all() and nxt[0, -1] == 2 and not done[0]
    nxt, done = step_carts(P, state, 0)  # checkout ends the episode
    assert done[0] and nxt[0, -1] == 3
    last = cart_state(P, (3, 5, 7), 1)
    nxt, done = step_carts(P, last, 1)  # the last action forces checkout
    assert done[0] and rows_of(nxt)[0, :2].tolist() == [5, 7]


def test_margin_convention_half_cent_and_open_level():
    at_budget = cart_state(P, (3, 6, 19, 20, 28), 1)  # 12.99 + 14.29 + ... = $50.00 exactly
    assert totals_cents(P, at_budget) == 5000
    over = cart_state(P, (6, 11, 17, 19, 20), 1)  # $50.01
    assert totals_cents(P, over) == 5001
    both = np.stack([at_budget, over, at_budget])
    level = levels(P, both, np.array([True, True, False]))
    assert level.tolist() == pytest.approx([HALF_CENT, -HALF_CENT, 50.0 + HALF_CENT])


def test_episode_outcomes_and_info():
    env = CommerceEnv()
    _, info = env.reset(options={"start": "ginger_ale"})
    assert info["total"] == 68.5 and info["margin"] < 0 and not info["checked_out"]
    _, reward, terminated, truncated, info = env.step(0)
    assert terminated and not truncated and info["failed"] and reward == -1.0
    with pytest.raises(EnvError, match="call reset"):
        env.step(0)
    env.reset(options={"start": "ginger_ale"})
    _, reward, terminated, _, info = env.step(1)
    assert not terminated and info["total"] == 0.0 and info["actions_remaining"] == 4
    _, reward, terminated, _, info = env.step(3)
    assert info["wasted"] and info["actions_remaining"] == 3
    _, reward, terminated, _, info = env.step(0)
    assert terminated and info["success"] and reward == 1.0


def test_bad_actions_options_and_params_are_clear_errors():
    env = CommerceEnv()
    env.reset(seed=0)
    with pytest.raises(EnvError, match=r"expected an element id 0\.\.10, found 11"):
        env.step(11)
    with pytest.raises(EnvError, match="element id"):
        env.step(True)
    with pytest.raises(EnvError, match="expected start, cart or actions"):
        env.reset(options={"budget": 3})
    with pytest.raises(EnvError, match="reset cart"):
        env.reset(options={"cart": ["No Such Product"]})
    with pytest.raises(EnvError, match=r"reset actions: expected an integer in 1\.\.5"):
        env.reset(options={"cart": [0], "actions": 6})
    with pytest.raises(EnvError, match="one of ginger_ale"):
        env.reset(options={"start": "nope"})
    with pytest.raises(ConfigError, match="whole cents"):
        CommerceParams(budget=49.995)
    with pytest.raises(ConfigError, match="without quotes"):
        CommerceParams(catalogue=(("Bob's Socks", 3.0),) * 10)
    with pytest.raises(ConfigError, match="at least max_items=10 products"):
        CommerceParams(catalogue=(("Socks", 3.0),))


def test_named_starts_are_ours_and_consistent():
    assert len(NAMED_STARTS) == 8
    for name, (items, actions) in NAMED_STARTS.items():
        assert len(set(items)) == len(items) <= P.max_items, name
        assert 1 <= actions <= P.actions
    assert totals_cents(P, named_start(P, "five_largest")) == 19111
    env = CommerceEnv()
    observation, _ = env.reset(options={"cart": [CATALOGUE[0][0], 4], "actions": 2})
    assert observation["state"][:3].tolist() == [0, 4, -1] and observation["state"][-1] == 2


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.lists(st.integers(0, 10), min_size=6, max_size=6))
def test_any_click_sequence_ends_within_the_window(seed, clicks):
    start = random_carts(P, 1, np.random.default_rng(seed))[0]
    env = CommerceEnv()
    rows = rows_of(start)
    env.reset(options={"cart": [int(i) for i in rows[rows >= 0]], "actions": int(start[-1])})
    total, steps = float(totals_cents(P, start)) / 100, 0
    for click in clicks:
        _, _, terminated, _, info = env.step(click)
        steps += 1
        assert info["total"] <= total + 1e-9  # removals never add
        total = info["total"]
        if terminated:
            break
    assert terminated and steps <= start[-1] + 1
    assert info["success"] == (info["total"] <= 50.0) != info["failed"]
