"""The fallback of the small-talk observer: a small library of safe moves keyed by state.

When no candidate reply is admissible, the observer says something short and safe instead. The
state picks the move (first match wins):

- ``acknowledge``: the user sounds upset (``user_affect`` below ``upset``): a brief empathic
  acknowledgement, with no advice;
- ``deflect``: the user asked a question: a brief answer-shaped reply that commits to nothing;
- ``greet``: the user opened with a greeting: a greeting back;
- ``ask_back``: otherwise, a short open question back.

Within a move the phrasing is chosen by a hash of the dialogue, skipping phrasings the assistant
already used, so the same dialogue always gets the same reply and the bot does not repeat itself.
Every phrasing passes the shipped small-talk overlays (a test checks it).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from governor.core import Fallback, Trajectory, Verdict
from governor.overlays.features.dialogue import Dialogue, as_dialogue, last
from governor.overlays.features.text import compound

MOVES: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        "acknowledge": (
            "Oh no, that sounds like a lot.",
            "That sounds tough. How are you holding up?",
            "Ah, I hear you. That sounds rough.",
            "Oh no. That's a lot to carry.",
        ),
        "deflect": (
            "Hmm, good question. I go back and forth on that one.",
            "Honestly, it depends on the day!",
            "Oh, that's a hard one to pick. I'd have to think about it.",
            "Ha, I keep changing my mind on that.",
        ),
        "greet": (
            "Hi! How's your day going?",
            "Hey there! How are things?",
            "Hello! Nice to chat. How's your week been?",
        ),
        "ask_back": (
            "Oh nice. How about you?",
            "What got you into that?",
            "Oh really? Tell me more!",
            "That's fun. What do you like about it?",
            "Nice! How did that go?",
        ),
    }
)
_GREETING = re.compile(r"^\s*(hi|hello|hey|good (morning|afternoon|evening)|howdy)\b", re.I)


@dataclass(frozen=True)
class Move:
    """A chosen fallback move: its key and what is said."""

    key: str
    text: str


class SmallTalkFallback(Fallback):
    """Picks a safe move for the dialogue's state; never stops the conversation."""

    name = "small-talk fallback"

    def __init__(self, moves: Mapping[str, Sequence[str]] = MOVES, *, upset: float = -0.3) -> None:
        missing = sorted(set(MOVES) - set(moves))
        if missing or any(not moves[k] for k in MOVES):
            raise ValueError(f"fallback moves: expected phrasings for {sorted(MOVES)}")
        self.moves = {k: tuple(v) for k, v in moves.items()}
        self.upset = upset

    def state(self, dialogue: Dialogue) -> str:
        """The move key for ``dialogue`` (see the module doc)."""
        said = last(dialogue, "user") or ""
        if said and compound(said) < self.upset:
            return "acknowledge"
        if "?" in said:
            return "deflect"
        if _GREETING.match(said) and not any(t.role == "assistant" for t in dialogue):
            return "greet"
        return "ask_back"

    def choose(self, dialogue: Dialogue) -> Move:
        """The move for ``dialogue``: a phrasing the assistant has not used yet, if any."""
        key = self.state(dialogue)
        options = self.moves[key]
        used = {t.text for t in dialogue if t.role == "assistant"}
        fresh = [o for o in options if o not in used] or list(options)
        digest = hashlib.sha256("\x1f".join(t.text for t in dialogue).encode()).digest()
        return Move(key, fresh[int.from_bytes(digest[:4], "big") % len(fresh)])

    def act(self, traj: Trajectory, verdicts: Sequence[Verdict]) -> Any:
        return self.choose(as_dialogue(traj)).text
