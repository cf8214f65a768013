"""Dialogues: who said what before the candidate reply, read from turns or a trajectory.

Features read at most :data:`MAX_TURN_CHARS` characters of any turn: a longer turn is kept whole
by whoever holds it, but its :class:`Turn` holds only its first ``MAX_TURN_CHARS`` characters, so
that no feature's time or memory grows with a hostile input. Overlays reject a candidate reply
longer than that outright.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import repeat
from typing import Any, Literal

from governor.core import Trajectory
from governor.errors import ConfigError, expected

Role = Literal["user", "assistant"]
MAX_TURN_CHARS = 20_000
"""The most characters of one turn that features read (about 3,000 words)."""


@dataclass(frozen=True)
class Turn:
    """One utterance: who said it (``user`` or ``assistant``, the speaker being judged) and what."""

    role: Role
    text: str

    def __post_init__(self) -> None:
        if self.role not in ("user", "assistant"):
            raise ConfigError(f"turn role: {expected('user or assistant', self.role)}")
        if not isinstance(self.text, str):
            raise ConfigError(f"turn text: {expected('a string', type(self.text).__name__)}")
        if len(self.text) > MAX_TURN_CHARS:
            object.__setattr__(self, "text", self.text[:MAX_TURN_CHARS])


Dialogue = tuple[Turn, ...]


def as_dialogue(context: Any) -> Dialogue:
    """The turns before the candidate, from a sequence of :class:`Turn` or a trajectory.

    A trajectory whose observation is a sequence of turns is that dialogue. Otherwise each step
    contributes its text observation as a user turn and its text action as an assistant turn,
    and the current text observation is the user's last turn.
    """
    if isinstance(context, Trajectory):
        obs = context.observation
        if isinstance(obs, (tuple, list)) and all(map(isinstance, obs, repeat(Turn))):
            return tuple(obs)
        turns: list[Turn] = []
        for step in context.steps:
            if isinstance(step.observation, str):
                turns.append(Turn("user", step.observation))
            if isinstance(step.action, str):
                turns.append(Turn("assistant", step.action))
        if isinstance(obs, str):
            turns.append(Turn("user", obs))
        return tuple(turns)
    dialogue = tuple(context)  # a tuple already is itself: no copy
    if not all(map(isinstance, dialogue, repeat(Turn))):
        raise ConfigError(f"context: {expected('a trajectory or a sequence of Turn', context)}")
    return dialogue


def last(context: Sequence[Turn], role: Role, k: int = 0) -> str | None:
    """The text of the (k+1)-th most recent turn by ``role``, or None."""
    seen = 0
    for turn in reversed(context):
        if turn.role == role:
            if seen == k:
                return turn.text
            seen += 1
    return None


def texts_of(context: Sequence[Turn], role: Role) -> list[str]:
    """All turns by ``role``, oldest first."""
    return [t.text for t in context if t.role == role]


def bot_history(context: Sequence[Turn], last: int | None = None) -> list[tuple[Dialogue, str]]:
    """Each earlier assistant turn with the dialogue before it, oldest first (the ``last`` of
    them only, when given)."""
    ctx = tuple(context)
    if last is None:
        return [(ctx[:i], t.text) for i, t in enumerate(ctx) if t.role == "assistant"]
    found: list[tuple[Dialogue, str]] = []
    for i in range(len(ctx) - 1, -1, -1):
        if len(found) >= last:
            break
        if ctx[i].role == "assistant":
            found.append((ctx[:i], ctx[i].text))
    found.reverse()
    return found


def assistant_turns(context: Sequence[Turn]) -> int:
    """How many turns of ``context`` are the assistant's."""
    return sum(1 for t in context if t.role == "assistant")
