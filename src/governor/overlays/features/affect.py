"""User affect: how the person sounds, and whether it is getting worse.

All three read only the user's turns of the context (VADER compound scores); the candidate is
not used, so they serve as conditions ("when the user sounds upset, ...").
"""

from __future__ import annotations

from governor.overlays.features.base import DEFAULT_RESOURCES, Resources, register
from governor.overlays.features.dialogue import Dialogue, last, texts_of
from governor.overlays.features.text import compound

LOOP_STEP = 0.05  # a fall in affect smaller than this is noise, not a step of a loop


@register(
    "user_affect",
    range=(-1.0, 1.0),
    unit="compound",
    description="VADER compound score of the user's last turn (0 when there is none)",
)
def user_affect(context: Dialogue, candidate: str, *, res: Resources = DEFAULT_RESOURCES) -> float:
    text = last(context, "user")
    return compound(text) if text is not None else 0.0


@register(
    "user_escalation",
    range=(0.0, 2.0),
    unit="compound",
    description="drop in the user's affect from their previous turn to their last (0 if none)",
)
def user_escalation(
    context: Dialogue, candidate: str, *, res: Resources = DEFAULT_RESOURCES
) -> float:
    now, before = last(context, "user"), last(context, "user", 1)
    if now is None or before is None:
        return 0.0
    return max(0.0, compound(before) - compound(now))


@register(
    "emotional_loop",
    range=(0.0, float("inf")),
    unit="turns",
    scope="trajectory",
    description="consecutive falls in the user's affect ending at their last turn",
)
def emotional_loop(
    context: Dialogue, candidate: str, *, res: Resources = DEFAULT_RESOURCES
) -> float:
    scores = [compound(t) for t in texts_of(context, "user")]
    steps = 0
    for before, now in zip(reversed(scores[:-1]), reversed(scores[1:]), strict=True):
        if before - now < LOOP_STEP:
            break
        steps += 1
    return float(steps)
