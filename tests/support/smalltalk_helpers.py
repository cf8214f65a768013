"""Helpers of the conversation tests: a scripted policy and replies of a given length."""

from collections.abc import Callable, Sequence
from typing import Any

from governor.core import Candidate, Feedback, Policy, Trajectory


class ScriptedReplies(Policy):
    """Replies from ``script(traj, feedback)``; records the feedback each proposal was given."""

    name = "scripted replies"

    def __init__(self, script: Callable[[Trajectory, Feedback | None], Sequence[str]]) -> None:
        self.script = script
        self.feedback_seen: list[Feedback | None] = []

    def propose(self, traj: Trajectory, feedback: Feedback | None, n: int) -> list[Candidate[Any]]:
        self.feedback_seen.append(feedback)
        return [Candidate(text, text) for text in self.script(traj, feedback)]


def words(n: int, word: str = "walk") -> str:
    """A reply of exactly ``n`` words, neutral in tone (so only its length is judged)."""
    return " ".join(["That", "sounds", *([word] * (n - 2))]) if n > 2 else "Sounds good"
