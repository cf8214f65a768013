"""The "fallible" mode of a tutoring agent (extension 3): replies that leave an answer
deliberately incomplete for the learner to correct are admitted on a seeded share of turns, and
rejected otherwise like any incomplete answer; the configuration is recorded in the trajectory's
memory. The cue is a regular expression over the first 2,000 characters of a reply.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

from governor.core import Constraint, Trajectory, Verdict
from governor.errors import SpecError, expected
from governor.observer_extensions.teaching import MAX_READ
from governor.overlays.features.dialogue import as_dialogue

INCOMPLETE = re.compile(
    r"\b(can you finish|i'?ll leave the (last|rest)|your turn to|i'?m not sure about the rest)\b",
    re.I,
)


class FallibleMode(Constraint):
    """Completeness, with the fallible mode of a tutoring agent (see the module doc)."""

    name = "fallible_mode"

    def __init__(self, rate: float = 0.0, *, seed: int = 0) -> None:
        if not 0.0 <= rate <= 1.0:
            raise SpecError(f"fallible rate: {expected('a share in [0, 1]', rate)}")
        self.rate, self.seed = rate, seed

    def initial_state(self, observation: Any) -> dict[str, Any]:
        return {
            "mode": "fallible" if self.rate > 0 else "complete",
            "rate": self.rate,
            "seed": self.seed,
        }

    def check(self, traj: Trajectory, action: Any) -> Verdict:
        if not INCOMPLETE.search(str(action)[:MAX_READ]):
            return Verdict.allow(self.name)
        text = "\x1f".join(t.text for t in as_dialogue(traj))
        digest = hashlib.sha256(f"{self.seed}\x1e{text}".encode()).digest()
        if int.from_bytes(digest[:8], "big") / 2**64 < self.rate:
            return Verdict.allow(
                self.name, descriptor=f"deliberately incomplete (fallible mode, rate {self.rate:g})"
            )
        return Verdict.reject(self.name, 1.0, "the answer is incomplete; finish it")
