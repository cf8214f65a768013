"""A safety advisor that learns from outcomes how to say its advice: calmly or urgently.

ReGuard's advisor is an LLM trained by reach-avoid RL through the human proxy: it learns wording
that makes the human act safely, e.g. to capitalise and stress urgency for a human who ignores
calm advice. :class:`ToneLearningAdvisor` learns the one choice of wording our templates offer, the
tone, from what the human does. It advises the safety advisor's action (the value chose it); after
each step it reads what the human did (the transition's ``human_action``) and scores the tone it
used 1 if the human took the advised action, else 0. (Scoring by the value of the human's action
instead works with the exact value but not with a learned one, whose optimism about the other
actions hides the difference.) The scores are kept apart for advice that agrees with the human's intent and advice that overrides it
(a two-armed bandit per context). It speaks calmly unless the urgent tone's mean score beats the
calm one's by more than 1/sqrt(n), n the smaller of their counts: it raises its voice only when
the outcomes clearly say so (urgency that is not needed wears out). While learning it tries each
untried tone first, then the one with the higher upper bound, mean + 1/sqrt(count), and explores
with probability ``explore`` (seeded); :meth:`freeze` stops both.
It never sees the persona: it can only learn it from the outcomes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from governor.core import Candidate, Feedback, Trajectory, Verdict
from governor.errors import ConfigError, expected
from governor.safety_values.filter import QValues
from governor.worlds.backseat.advisors import SafetyAdvisor, advice_text

CALM, URGENT = 0, 1


class ToneLearningAdvisor(SafetyAdvisor):
    """The safety advisor's action, in the tone that has kept the human safe more often."""

    name = "learned_tone_advisor"

    def __init__(
        self, q_values: QValues, epsilon: float, *, explore: float = 0.2, seed: int = 0
    ) -> None:
        if not 0.0 <= explore <= 1.0:
            raise ConfigError(f"explore: {expected('a probability in [0, 1]', explore)}")
        super().__init__(q_values, epsilon, urgency_margin=-np.inf)
        self.explore, self.learning = explore, True
        self.rng = np.random.default_rng(seed)
        self.score = np.zeros((2, 2))  # [overrides the intent?][tone]: summed outcomes
        self.count = np.zeros((2, 2))
        self._pending: tuple[int, int, int] | None = None  # advised action, context, tone

    def freeze(self) -> None:
        """Stop learning and exploring: from now on the tone is the best one found."""
        self.learning, self._pending = False, None

    def tone(self, context: int) -> int:
        """The tone to use where the advice agrees (0) with the human's intent or overrides (1)."""
        if self.learning and self.rng.random() < self.explore:
            return int(self.rng.integers(2))
        count = self.count[context]
        if self.learning and (count == 0).any():
            return int(np.flatnonzero(count == 0)[0])
        if count.min() == 0:
            return CALM
        means = self.score[context] / count
        if self.learning:  # optimism: try the tone whose score could still be the higher one
            return int(np.argmax(means + 1.0 / np.sqrt(count)))
        return URGENT if means[URGENT] - means[CALM] > 1.0 / np.sqrt(count.min()) else CALM

    def propose(self, traj: Trajectory, feedback: Feedback | None, n: int) -> list[Candidate[Any]]:
        self._learn(traj)
        return super().propose(traj, feedback, n)

    def act(self, traj: Trajectory, verdicts: Sequence[Verdict]) -> str:
        self._learn(traj)
        return super().act(traj, verdicts)

    def advise(self, observation: Mapping[str, Any]) -> str:
        action, _ = self.recommend(observation)
        context = int(action != int(observation["intended"]))
        tone = self.tone(context)
        if self.learning:
            self._pending = (action, context, tone)
        return advice_text(action, urgent=tone == URGENT)

    def _learn(self, traj: Trajectory) -> None:
        """Score the tone of the last advice by what the human then did (none at a new start)."""
        pending, self._pending = self._pending, None
        if pending is None or not self.learning or not traj.steps:
            return
        human = traj.steps[-1].info.get("human_action")
        if human is None:
            return
        advised, context, tone = pending
        self.score[context, tone] += float(int(human) == advised)
        self.count[context, tone] += 1
