"""Tone: VADER sentiment of the whole response combined with its sentences.

The combination is the small-talk paper's C = H*w_H + mean_i(s_i*w_i), with H the compound score
of the whole response and s_i that of its i-th sentence, clipped to [-1, 1]. The weights are
estimated by least squares against human sentiment labels (:func:`fit_tone_weights`); Topical-Chat
labels are mapped to valence by :data:`SENTIMENT_VALENCE`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from governor.errors import ConfigError, expected
from governor.overlays.features.base import DEFAULT_RESOURCES, Resources, ToneWeights, register
from governor.overlays.features.dialogue import Dialogue
from governor.overlays.features.text import compound, memo, sentence_tuple

# Topical-Chat turn sentiment -> valence. "Curious to dive deeper" and "Surprised" have no clear
# valence and are left out of the fit.
SENTIMENT_VALENCE: Mapping[str, float] = {
    "Happy": 1.0,
    "Neutral": 0.0,
    "Sad": -1.0,
    "Angry": -1.0,
    "Disgusted": -1.0,
    "Fearful": -1.0,
}


TONE_MAX_SENTENCES = 64
"""The most sentences of a response whose tone is averaged (the first ones): a response's tone
costs time linear in its length at most."""


def tone_terms(text: str, positions: int) -> np.ndarray:
    """[H, mean-share of sentence position 0, ..., of positions >= ``positions``-1], over the
    first :data:`TONE_MAX_SENTENCES` sentences."""
    parts = sentence_tuple(text)[:TONE_MAX_SENTENCES] or (text,)
    row = np.zeros(1 + positions)
    row[0] = compound(text)
    for i, sentence in enumerate(parts):
        row[1 + min(i, positions - 1)] += compound(sentence) / len(parts)
    return row


def combine(text: str, weights: ToneWeights) -> float:
    """C = H*w_H + mean_i(s_i*w_i), clipped to [-1, 1]."""
    # Keyed by the weights' exact bits (0.0 and -0.0 are equal keys but not the same weight).
    whole, parts = weights.bits
    return _combine(text, whole, parts)


@memo()
def _combine(text: str, whole: str, sentences: tuple[str, ...]) -> float:
    weights = ToneWeights(float.fromhex(whole), tuple(float.fromhex(w) for w in sentences))
    terms = tone_terms(text, len(weights.sentences))
    value = terms[0] * weights.whole + float(np.dot(terms[1:], weights.sentences))
    return float(min(max(value, -1.0), 1.0))  # np.clip's value (NaN stays NaN), for a scalar


def fit_tone_weights(
    texts: Sequence[str], targets: Sequence[float], *, positions: int = 2
) -> ToneWeights:
    """Least-squares weights (no intercept) predicting ``targets`` in [-1, 1] from VADER terms.

    ``positions`` sentence weights are fitted: one per leading sentence, the last for the rest.
    """
    if len(texts) != len(targets) or len(texts) < 1 + positions:
        raise ConfigError(
            f"tone fit: {expected(f'as many targets as texts (at least {1 + positions})', len(targets))}"
        )
    x = np.stack([tone_terms(t, positions) for t in texts])
    y = np.asarray(targets, dtype=float)
    w, *_ = np.linalg.lstsq(x, y, rcond=None)
    return ToneWeights(
        whole=round(float(w[0]), 4), sentences=tuple(round(float(v), 4) for v in w[1:])
    )


@register(
    "tone",
    range=(-1.0, 1.0),
    unit="compound",
    description="VADER tone, C = H*w_H + mean_i(s_i*w_i); below 0 is negative",
)
def tone(context: Dialogue, candidate: str, *, res: Resources = DEFAULT_RESOURCES) -> float:
    return combine(candidate, res.tone)
