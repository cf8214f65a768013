"""Coherence and topic shift: does the response continue what was being talked about?

With an embedding function, coherence follows the small-talk paper: the entropy of a response's
embeddings (the spread of its sentence vectors' energy over the embedding dimensions, normalised
to [0, 1]) measures its diversity, and the information gain of the candidate over the previous
turn is the entropy of the pooled sentences minus the sentence-weighted mean of the two entropies
(a Jensen-Shannon divergence). Coherence is 1 - gain / H(w), with H(w) the largest gain possible
for those weights, so 1 means the candidate adds no new direction to the previous turn.

Without embeddings both features are lexical proxies over content-word stems, reported as weak:
human replies often share no word with the turn before them, and against TIAGE's human
topic-shift labels (PersonaChat dev and test) the proxies rank shifts above non-shifts only
slightly better than chance (AUC about 0.57 for topic_shift, 0.59 for 1 - coherence).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from governor.overlays.features.base import DEFAULT_RESOURCES, Embed, Resources, register
from governor.overlays.features.dialogue import Dialogue, last
from governor.overlays.features.text import content_stems, sentences


def energy(vectors: np.ndarray) -> np.ndarray:
    """The mean share of each dimension in the squared unit vectors: a distribution."""
    v = np.asarray(vectors, dtype=float)
    v = v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-12)
    p = np.mean(v * v, axis=0)
    return p / p.sum()


def entropy(p: np.ndarray) -> float:
    """Shannon entropy of a distribution in nats."""
    q = p[p > 0]
    return float(-np.sum(q * np.log(q)))


def embedding_entropy(vectors: np.ndarray) -> float:
    """Entropy of a response's sentence embeddings, normalised by log(dimension) to [0, 1]."""
    d = np.asarray(vectors).shape[1]
    return entropy(energy(vectors)) / np.log(d) if d > 1 else 0.0


def information_gain(previous: np.ndarray, candidate: np.ndarray) -> tuple[float, float]:
    """(gain in nats, its maximum H(w)) of ``candidate`` sentences over ``previous`` ones."""
    n_p, n_c = len(previous), len(candidate)
    w = n_p / (n_p + n_c)
    p, q = energy(previous), energy(candidate)
    gain = entropy(w * p + (1 - w) * q) - (w * entropy(p) + (1 - w) * entropy(q))
    return max(0.0, gain), entropy(np.array([w, 1 - w]))


def embedding_coherence(embed: Embed, previous: str, candidate: str) -> float:
    """1 - information gain / its maximum; one embedding call for both turns' sentences."""
    prev = sentences(previous) or [previous]
    cand = sentences(candidate) or [candidate]
    vectors = np.asarray(embed([*prev, *cand]), dtype=float)
    gain, most = information_gain(vectors[: len(prev)], vectors[len(prev) :])
    return float(np.clip(1.0 - gain / most, 0.0, 1.0)) if most > 0 else 1.0


def overlap(candidate: str, others: Sequence[str]) -> float:
    """Share of the candidate's content stems found in ``others`` (1 when it has none)."""
    mine = content_stems(candidate)
    if not mine:
        return 1.0
    seen: set[str] = set()
    for text in others:
        seen |= content_stems(text)
    return len(mine & seen) / len(mine)


@register(
    "coherence",
    range=(0.0, 1.0),
    unit="score",
    description="1 - normalised embedding information gain over the previous turn; offline,"
    " the share of content words shared with the last two turns",
    optional="embed",
    method="embedding information gain",
    fallback="lexical overlap",
)
def coherence(context: Dialogue, candidate: str, *, res: Resources = DEFAULT_RESOURCES) -> float:
    if not context:
        return 1.0
    if res.embed is not None:
        return embedding_coherence(res.embed, context[-1].text, candidate)
    return overlap(candidate, [t.text for t in context[-2:]])


@register(
    "topic_shift",
    range=(0.0, 1.0),
    unit="share",
    weak=True,
    description="share of the response's content words absent from the user's last turn",
)
def topic_shift(context: Dialogue, candidate: str, *, res: Resources = DEFAULT_RESOURCES) -> float:
    previous = last(context, "user")
    return 0.0 if previous is None else 1.0 - overlap(candidate, [previous])
