import math

import numpy as np
import pytest

from governor.backends.scripted import ScriptedBackend
from governor.core import Feedback, FeedbackKind, Trajectory
from governor.errors import BackendError, ConfigError
from governor.usage import metered
from governor.worlds.driving.controllers import (
    ErraticPolicy,
    LLMDrivingPolicy,
    NominalController,
    parse_choice,
)
from governor.worlds.driving.env import SYSTEM_PROMPT, DrivingEnv, DrivingParams, describe

P = DrivingParams()


def traj(x, y, theta):
    state = np.array([x, y, theta])
    return Trajectory({"state": state.astype(np.float32), "text": describe(P, state)})


@pytest.mark.parametrize(
    ("state", "action"),
    [((2.0, 1.5, 0.0), 1), ((2.0, 0.5, 0.0), 2), ((2.0, 2.5, 0.0), 0), ((2.0, 1.5, 0.5), 0)],
)
def test_nominal_steers_to_the_centre_line(state, action):
    candidates = NominalController(P).propose(traj(*state), None, 3)
    assert [c.action for c in candidates] == [action] and candidates[0].valid


def test_nominal_reaches_the_goal_on_an_empty_road():
    params = DrivingParams(obstacles=())
    env, policy = DrivingEnv(params), NominalController(params)
    obs, _ = env.reset(options={"state": (0.5, 0.6, math.pi / 4)})
    for _ in range(params.horizon):
        action = policy.propose(Trajectory(obs), None, 1)[0].action
        obs, _, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            break
    assert info["success"]


def test_erratic_policy_draws_independently():
    assert "stand_in" in ErraticPolicy.name and "not a model" in (ErraticPolicy.__doc__ or "")
    calm = ErraticPolicy(P, p=0.0, seed=1).propose(traj(2.0, 0.5, 0.0), None, 4)
    assert [c.action for c in calm] == [2, 2, 2, 2]
    wild = [c.action for c in ErraticPolicy(P, p=1.0, seed=1).propose(traj(2, 1.5, 0), None, 30)]
    assert set(wild) == {0, 1, 2}
    again = [c.action for c in ErraticPolicy(P, p=1.0, seed=1).propose(traj(2, 1.5, 0), None, 30)]
    assert again == wild
    with pytest.raises(ConfigError, match=r"\[0, 1\]"):
        ErraticPolicy(P, p=1.5)


@pytest.mark.parametrize(
    ("reply", "action"),
    [
        ("B", 1),
        (" B)\n", 1),
        ("b", 1),
        ("Answer: B", 1),
        ("B) Steer straight", 1),
        ("The answer is C.", 2),
        ("**A**", 0),
        ("(C) Steer", 2),
        ("Steer left", 2),
    ],
)
def test_replies_that_name_one_choice(reply, action):
    candidate = parse_choice(reply)
    assert candidate.valid and candidate.action == action and candidate.text == reply


@pytest.mark.parametrize(
    "reply", ["", "D", "Bravo", "A or C", "B C", "A) Steer left", "I would brake"]
)
def test_other_replies_are_invalid_candidates(reply):
    candidate = parse_choice(reply)
    assert not candidate.valid and candidate.text == reply
    assert candidate.error == f"expected one of A, B, C; found {reply!r}"


def test_llm_policy_asks_once_for_n_completions():
    backend = ScriptedBackend(["A", "garbage", "b"])
    policy = LLMDrivingPolicy(backend, P, temperature=0.7)
    t = traj(2.0, 1.0, 0.0)
    with metered() as meter:
        candidates = policy.propose(t, None, 3)
    assert meter.total.calls == 1 and len(backend.requests) == 1
    assert [c.action for c in candidates] == [0, None, 1] and not candidates[1].valid
    system, *examples, user = backend.requests[0]
    assert system.role == "system" and system.content == SYSTEM_PROMPT
    assert [m.role for m in examples] == ["user", "assistant"] * 3
    assert [m.content for m in examples[1::2]] == ["C", "A", "B"]
    assert user.role == "user" and user.content == t.observation["text"]


def test_llm_policy_without_shots_asks_the_papers_question_alone_and_counts_replies():
    backend = ScriptedBackend(["A", "Sure! Let me think"])
    policy = LLMDrivingPolicy(backend, P, shots=0)
    t = traj(2.0, 1.0, 0.0)
    assert policy.propose(t, None, 1)[0].action == 0
    assert not policy.propose(t, None, 1)[0].valid
    assert [m.role for m in backend.requests[0]] == ["system", "user"]
    assert policy.replies == {"valid": 1, "invalid": 1}


def test_llm_policy_appends_feedback_and_propagates_errors():
    backend = ScriptedBackend(["C", BackendError("endpoint down")])
    policy = LLMDrivingPolicy(backend, P)
    note = Feedback(FeedbackKind.FORCED, "steer straight leads toward failure")
    assert policy.propose(traj(2.0, 1.0, 0.0), note, 1)[0].action == 2
    assert backend.requests[0][-1].content.endswith(
        "\n\nFeedback: steer straight leads toward failure"
    )
    with pytest.raises(BackendError, match="endpoint down"):
        policy.propose(traj(2.0, 1.0, 0.0), None, 1)


def test_llm_policy_describes_a_bare_state():
    backend = ScriptedBackend(["B"])
    LLMDrivingPolicy(backend, P).propose(Trajectory({"state": np.array([2.0, 1.0, 0.0])}), None, 1)
    assert backend.requests[0][-1].content == describe(P, (2.0, 1.0, 0.0))
