"""Overlays as constraints of the runtime loop: one :class:`OverlayConstraint` per overlay.

Each overlay is its own constraint, so every verdict, explanation and feedback line names the
overlay that produced it, the arbiter can weigh overlays separately, and the observer's "same
violation twice" detection works per overlay. Permissive overlays are not constraints: their
effect lives inside the overlays they widen. The dialogue is read from the trajectory with
:func:`~governor.overlays.features.dialogue.as_dialogue` (or a function given instead).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from governor.core import Constraint, Trajectory, Verdict
from governor.overlays.features.dialogue import Dialogue, Turn, as_dialogue, bot_history
from governor.overlays.rules import Overlay


class OverlayConstraint(Constraint):
    """Checks a candidate reply (a string) against one overlay; keeps no state of its own."""

    def __init__(
        self, overlay: Overlay, *, dialogue: Callable[[Trajectory], Dialogue] = as_dialogue
    ) -> None:
        self.overlay = overlay
        self.name = overlay.name
        self.dialogue = dialogue

    def check(self, traj: Trajectory, action: Any) -> Verdict:
        """The overlay's verdict on ``action`` as the reply to the dialogue in ``traj``."""
        return self.overlay.evaluate(self.dialogue(traj), action)


def overlay_constraints(
    overlays: Sequence[Overlay], *, dialogue: Callable[[Trajectory], Dialogue] = as_dialogue
) -> list[OverlayConstraint]:
    """One constraint per non-permissive overlay, highest priority first."""
    ranked = sorted(overlays, key=lambda o: -o.priority)
    return [OverlayConstraint(o, dialogue=dialogue) for o in ranked if o.kind != "permissive"]


def repeated_violations(
    overlay: Overlay, context: Sequence[Turn], candidate: str | None = None
) -> int:
    """Assistant turns (the candidate too, if given) past ``overlay``'s bounds (deviation > 0)."""
    ctx = as_dialogue(context)
    judged = [*bot_history(ctx), *([(ctx, candidate)] if candidate is not None else [])]
    return sum(1 for c, text in judged if overlay.evaluate(c, text).deviation > 0.0)
