"""Base policies for the driving task: a goal-seeking controller, an erratic stand-in, an LLM.

None of them is trusted: they are what the guard filters. Each proposes
:class:`~governor.core.Candidate` actions 0, 1, 2 (steer right, straight, left).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from governor.backends.base import Backend, Message
from governor.config import check_range
from governor.core import Candidate, Feedback, Policy, Trajectory
from governor.worlds.driving.env import (
    DrivingParams,
    describe,
    system_prompt,
    wrap_angle,
)
from governor.worlds.driving.filter import state_of
from governor.worlds.driving.llm_prompt import EXAMPLES, ask_letter, parse_choice, worked_examples

__all__ = ["ErraticPolicy", "LLMDrivingPolicy", "NominalController", "parse_choice"]


class NominalController(Policy):
    """Goal-seeking and blind to obstacles: heads down the track while drifting to the centre line.

    The desired heading is atan(gain * (centre_y - y)), clipped to +-``max_heading``; the action
    whose next heading is closest to it is proposed.
    """

    name = "nominal"

    def __init__(self, params: DrivingParams, gain: float = 1.0, max_heading: float = math.pi / 6):
        self.params, self.gain, self.max_heading = params, gain, max_heading

    def action(self, state: np.ndarray) -> int:
        """The controller's action at ``state``."""
        centre = self.params.road_width / 2
        desired = math.atan(self.gain * (centre - float(state[1])))
        desired = min(max(desired, -self.max_heading), self.max_heading)
        nxt = state[2] + self.params.dt * self.params.controls
        return int(np.argmin(np.abs(wrap_angle(nxt - desired))))

    def propose(self, traj: Trajectory, feedback: Feedback | None, n: int) -> list[Candidate[Any]]:
        return [Candidate(self.action(state_of(traj.observation)))]


class ErraticPolicy(Policy):
    """A stand-in for an unreliable agent; it is not a model.

    The nominal action with probability 1 - p, otherwise a uniformly random one; ``n`` candidates
    are ``n`` independent draws.
    """

    name = "erratic_stand_in"

    def __init__(self, params: DrivingParams, p: float = 0.3, seed: int | None = None):
        check_range("p", p, 0.0, 1.0)
        self.nominal, self.p = NominalController(params), p
        self.rng = np.random.default_rng(seed)

    def propose(self, traj: Trajectory, feedback: Feedback | None, n: int) -> list[Candidate[Any]]:
        nominal = self.nominal.action(state_of(traj.observation))
        draws = self.rng.random(n) < self.p
        return [Candidate(int(self.rng.integers(3)) if d else nominal) for d in draws]


class LLMDrivingPolicy(Policy):
    """An LLM answering the paper's multiple-choice question, ``n`` answers in one counted call.

    The prompt is the system prompt, ``shots`` worked examples as earlier turns
    (:mod:`~governor.worlds.driving.llm_prompt`; 0: the paper's prompt alone), and the question,
    with the feedback appended. The answer is read by
    :func:`~governor.worlds.driving.llm_prompt.ask_letter` (the local model's next-token logits
    over A, B, C; an HTTP model's log-probabilities or text). ``replies`` counts the answers
    that named a letter ("valid") and those that did not ("invalid"). Backend errors propagate
    (the observer turns them into a fallback).
    """

    name = "llm_driver"

    def __init__(
        self,
        backend: Backend,
        params: DrivingParams,
        *,
        temperature: float = 0.0,
        max_tokens: int = 5,
        shots: int = len(EXAMPLES),
        seed: int | None = None,
    ) -> None:
        check_range("shots", shots, 0, len(EXAMPLES))
        self.backend, self.params = backend, params
        self.temperature, self.max_tokens, self.shots = temperature, max_tokens, shots
        self.system = system_prompt(params)
        self.examples = worked_examples(params, shots)
        self.rng = np.random.default_rng(seed)
        self.replies: Counter[str] = Counter()

    def messages(self, observation: Any, feedback: Feedback | None = None) -> list[Message]:
        """The system prompt, the worked examples, and the observation's question with
        ``feedback`` appended."""
        if isinstance(observation, Mapping) and "text" in observation:
            question = str(observation["text"])
        else:
            question = describe(self.params, state_of(observation))
        if feedback is not None and feedback.text:
            question += f"\n\nFeedback: {feedback.text}"
        return [Message("system", self.system), *self.examples, Message("user", question)]

    def propose(
        self, traj: Trajectory, feedback: Feedback | None, n: int
    ) -> Sequence[Candidate[Any]]:
        candidates, _ = ask_letter(
            self.backend,
            self.messages(traj.observation, feedback),
            n=n,
            temperature=self.temperature,
            max_tokens=self.max_tokens,
            seed=int(self.rng.integers(2**32)),
        )
        self.replies.update("valid" if c.valid else "invalid" for c in candidates)
        return candidates
