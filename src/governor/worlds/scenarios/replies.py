"""An offline reply generator for the supervision scenarios: **not a model**.

It stands in for a language model's candidate replies: per mode, a fixed pool of templated
utterances of varying demand (long and question-heavy to a silent marker), proposed in a seeded
random order, so the base policy's first choice is often a demanding one (as an LLM's default
helpfulness tends to be). It ignores feedback: an observer acts on it only by choosing among its
candidates, regenerating (a fresh draw) and falling back. :class:`LowestDemandFallback` says the
least demanding line of the pool.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from governor.core import Candidate, Fallback, Feedback, Policy, Trajectory, Verdict
from governor.overlays.features.demand import demand_score

POOLS: Mapping[str, tuple[str, ...]] = {
    "small_talk": (
        "What did you do at recess today? Did you play outside? Tell me all about it.",
        "Want to tell me about your day? What happened in class? Let's talk about it.",
        "I like your shoes. Where did you get them? Do you like red?",
        "Hi. I'm here with you.",
        "That sounds hard.",
        "Okay.",
    ),
    "breathing": (
        "Breathe in with me. Hold it. Now breathe out slowly. Count to four. Keep going. Again.",
        "Let's do some breathing. Put your hand on your belly. Breathe in through your nose.",
        "In... and out.",
        "Slow breath with me.",
        "[breathing light glows]",
    ),
    "creative": (
        "Let's draw a cat. Pick a color. Draw the ears first. Now the face. What color is it?",
        "Want to make up a story together? Who is the hero? Where do they live? What happens?",
        "Want to draw something?",
        "Here's some paper.",
        "[slides crayons over]",
    ),
    "silence": ("[silence]", "[sits quietly nearby]"),
    "crisis": (
        "I hear you. I'm getting a grown-up to help you now. You're safe.",
        "You're safe. A teacher is coming.",
    ),
}


class OfflineReplies(Policy):
    """Proposes ``n`` replies of ``pool`` in a seeded random order (not a model)."""

    name = "offline reply generator (not a model)"

    def __init__(self, pool: Sequence[str], rng: np.random.Generator) -> None:
        self.pool = tuple(pool)
        self.rng = rng

    def propose(
        self, traj: Trajectory, feedback: Feedback | None, n: int
    ) -> Sequence[Candidate[Any]]:
        order = self.rng.permutation(len(self.pool))[: max(1, n)]
        return [Candidate(self.pool[i], self.pool[i]) for i in order]


class LowestDemandFallback(Fallback):
    """Says the least demanding line of ``pool``."""

    name = "lowest-demand line"

    def __init__(self, pool: Sequence[str]) -> None:
        self.line = min(pool, key=demand_score)

    def act(self, traj: Trajectory, verdicts: Sequence[Verdict]) -> Any:
        return self.line
