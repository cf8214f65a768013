"""ReGuard's Backseat AI Driver: the AI only advises in free text; a human proxy steers the car.

The action of :class:`BackseatEnv` is the advice, a string ("" is no advice). The human proxy
(:mod:`governor.worlds.backseat.human`: scripted personas ``none`` and ``urgent``, or an LLM) reads
the observation and the advice and picks A, B or C (steer right, straight, left), which moves the
car by the driving task's own dynamics. The observation also carries the human's intended action
(what it would do with no advice), so a shield can judge it before anyone speaks.
"""

from __future__ import annotations

import string
from collections.abc import Mapping
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from governor.errors import EnvError, expected
from governor.worlds.backseat.human import HumanChoice, HumanProxy, ScriptedHuman
from governor.worlds.driving.env import DrivingEnv, DrivingParams


class BackseatEnv(gym.Env[dict[str, Any], str]):
    """Driving where the action is advice to ``human`` (default: the scripted ``none`` persona).

    Observation: the driving task's state and text, and ``intended`` (the human's action if no
    advice is given). ``info`` adds ``advice``, ``human_action``, ``advised``, ``followed`` and
    ``human_fell_back``. The intent is asked for at reset and after every step that does not end
    the episode; with empty advice the human takes its intended action without being asked again
    (for an LLM human: one call per step, plus one per step with advice).
    """

    metadata: dict[str, Any] = {"render_modes": []}  # noqa: RUF012 (gymnasium's attribute)

    def __init__(self, params: DrivingParams | None = None, human: HumanProxy | None = None):
        self.driving = DrivingEnv(params)
        self.params = self.driving.params
        self.human = human if human is not None else ScriptedHuman(self.params)
        inner = self.driving.observation_space
        assert isinstance(inner, spaces.Dict)
        self.observation_space = spaces.Dict({**inner.spaces, "intended": spaces.Discrete(3)})
        self.action_space = spaces.Text(max_length=400, min_length=0, charset=string.printable)
        self._obs: dict[str, Any] = {}

    def reset(
        self, *, seed: int | None = None, options: Mapping[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """As the driving task's reset (``options["state"]`` picks the start); the human too."""
        super().reset(seed=seed)
        obs, info = self.driving.reset(seed=seed, options=options)
        self.human.reset(seed)
        return self._with_intent(obs), info

    def step(self, action: Any) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        if not isinstance(action, str):
            raise EnvError(f"advice: {expected('a string (empty: no advice)', action)}")
        state, text, intended = self.driving.state, self._obs["text"], int(self._obs["intended"])
        if action.strip():
            choice = self.human.respond(state, text, action, intended)
        else:
            choice = HumanChoice(intended, None, False)
        obs, reward, terminated, truncated, info = self.driving.step(choice.action)
        info.update(
            advice=action,
            human_action=choice.action,
            advised=choice.advised,
            followed=choice.followed,
            human_fell_back=choice.fell_back,
        )
        if not (terminated or truncated):
            obs = self._with_intent(obs)
        else:
            obs = {**obs, "intended": np.int64(intended)}
        return obs, reward, terminated, truncated, info

    def _with_intent(self, obs: dict[str, Any]) -> dict[str, Any]:
        intended = self.human.intend(self.driving.state, obs["text"])
        self._obs = {**obs, "intended": np.int64(intended)}
        return self._obs
