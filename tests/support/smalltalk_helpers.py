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


_ODD = ["walk", "park", "day", "time", "home", "road", "room", "week", "town", "yard", "tree"]
_EVEN = ["door", "game", "book", "song", "film", "team", "show", "table", "chair", "lunch"]
_EVEN += ["train", "bus", "lake"]


def words(n: int) -> str:
    """A reply of exactly ``n`` words, neutral in tone (so only its length is judged); common
    nouns from two lists of coprime lengths, so no word 3-gram repeats within 280 words."""
    rest = [(_ODD, _EVEN)[i % 2][(i // 2) % (11, 13)[i % 2]] for i in range(n - 2)]
    return " ".join(["That", "sounds", *rest]) if n > 2 else "Sounds good"
