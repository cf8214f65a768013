"""How human-like a bot's replies are: likeness to human distributions, and drift over turns.

Likeness follows the small-talk paper's comparison with human responses, as a distance between
distributions: the Wasserstein-1 distance between the bot's per-turn values of a feature and the
held-out human values, divided by the human standard deviation (0 is identical; 1 is a shift of
one human spread). Drift is the least-squares slope of a feature over the turns of one
conversation, averaged over conversations (the paper's "forgetfulness": replies growing longer or
more specific as a conversation goes on), with its standard error over conversations. Features are
computed with the given resources (the overlay file's calibrated tone weights and specificity
maxima, and its embedding function when it has one), so bots and humans are measured alike.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from governor.overlays.features.base import DEFAULT_RESOURCES, Resources, measure
from governor.overlays.features.dialogue import Dialogue

Values = Sequence[float] | np.ndarray

# feature name -> the small-talk criterion it measures
CRITERIA: Mapping[str, str] = {
    "word_count": "brevity",
    "tone": "tone",
    "specificity": "specificity",
    "coherence": "coherence",
    "assistance": "assistance",
    "questions": "questions",
}


def feature_table(
    pairs: Sequence[tuple[Dialogue, str]],
    names: Sequence[str] = tuple(CRITERIA),
    res: Resources = DEFAULT_RESOURCES,
) -> dict[str, np.ndarray]:
    """Each feature's value for every (context, reply) pair."""
    return {
        n: np.array([measure(n, ctx, reply, res).value for ctx, reply in pairs], dtype=float)
        for n in names
    }


def likeness(bot: Values, human: Values) -> float:
    """Wasserstein-1 distance to the human values, in units of the human standard deviation."""
    b, h = np.asarray(bot, dtype=float), np.asarray(human, dtype=float)
    if len(b) == 0 or len(h) == 0:
        return float("nan")
    spread = float(np.std(h)) or 1.0
    from scipy.stats import wasserstein_distance  # 0.3 s to import: only when measuring

    return float(wasserstein_distance(b, h)) / spread


def slope(values: Values) -> float:
    """Least-squares slope of ``values`` against their index (0 for fewer than two)."""
    y = np.asarray(values, dtype=float)
    if len(y) < 2:
        return 0.0
    x = np.arange(len(y), dtype=float)
    return float(np.polyfit(x, y, 1)[0])


def mean_drift(conversations: Sequence[Mapping[str, Values]]) -> dict[str, float]:
    """Per feature, the mean over conversations of its slope per turn."""
    if not conversations:
        return {}
    names = list(conversations[0])
    return {n: float(np.mean([slope(c[n]) for c in conversations])) for n in names}


def drift_error(conversations: Sequence[Mapping[str, Values]]) -> dict[str, float]:
    """Per feature, the standard error of :func:`mean_drift` (0 with one conversation)."""
    if len(conversations) < 2:
        return dict.fromkeys(conversations[0], 0.0) if conversations else {}
    out = {}
    for n in conversations[0]:
        slopes = np.array([slope(c[n]) for c in conversations])
        out[n] = float(np.std(slopes, ddof=1) / np.sqrt(len(slopes)))
    return out
