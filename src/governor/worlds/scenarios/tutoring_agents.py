"""The tutoring scenario's agents: a simulated learner, a seeded tutor-reply generator, a repair.

:class:`Learner` is a simulated learner, not a person: it answers each exercise correctly with a
probability that starts at its skill and moves with the tutor's tone (an encouraging reply adds
``lift``, a reply with negativity n subtracts ``sting`` x n), clipped to [0.1, 0.95].
:class:`TutorReplies` is an offline stand-in for a tutor model's replies (seeded draws from fixed
phrasings; not a model): after a wrong answer it grows impatient, drawing blunt and harsh
corrections more often the more wrong answers came in a row; under forced feedback it draws the
gentler phrasings more often, but not always. :class:`TutorRepair` is the fallback: an
encouraging question (a repair move).
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from governor.core import Candidate, Fallback, Feedback, Policy, Trajectory, Verdict

PRAISE = ("Yes, that's right. Nice work!", "Correct. Well done, on to the next one.")
GENTLE = (
    "You're close. Let's work through it step by step.",
    "Good try! What do you get if you do the multiplication first?",
)
MILD = ("Not quite. Check the second step.", "Not quite, have another look at the sign.")
BLUNT = ("That answer is incorrect; try again.", "Incorrect. Try again.")
HARSH = ("Wrong again. As I said, you should know this by now.",)
REPAIR = "Good effort so far. Let's take a smaller step together: what would you do first?"


@dataclass
class Learner:
    """A simulated learner (see the module doc); its state changes as the tutor speaks."""

    p: float
    lift: float = 0.04
    sting: float = 0.08

    def answer(self, rng: random.Random) -> bool:
        return rng.random() < self.p

    def hear(self, negativity: float, encouragement: float) -> None:
        delta = self.lift * (encouragement > 0.0) - self.sting * negativity
        self.p = min(0.95, max(0.1, self.p + delta))


class TutorReplies(Policy):
    """Seeded draws of tutor replies; the observation is (correct, wrong answers in a row)."""

    name = "tutor reply generator (offline stand-in, not a model)"

    def __init__(self, seed: int) -> None:
        self.seed = seed

    def propose(self, traj: Trajectory, feedback: Feedback | None, n: int) -> list[Candidate[Any]]:
        correct, streak = traj.info.get("correct", True), int(traj.info.get("streak", 0))
        key = f"{self.seed}:{traj.t}:{feedback.text if feedback else ''}"
        rng = random.Random(int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big"))
        pools: tuple[tuple[str, ...], ...] = (PRAISE,)
        weights = [1.0]
        if correct:
            pass
        elif feedback is None:
            blunt = min(0.7, 0.25 + 0.15 * streak)
            harsh = min(0.2, 0.05 * streak)
            pools, weights = (BLUNT, HARSH, MILD, GENTLE), [blunt, harsh, 0.5, 0.25]
        else:
            pools, weights = (BLUNT, MILD, GENTLE), [0.3, 0.4, 0.3]
        out = []
        for _ in range(n):
            text = rng.choice(rng.choices(pools, weights=weights)[0])
            out.append(Candidate(text, text))
        return out


class TutorRepair(Fallback):
    name = "tutor repair"

    def act(self, traj: Trajectory, verdicts: Sequence[Verdict]) -> Any:
        return REPAIR
