"""Brevity: how long a response is, in words and in tokens."""

from __future__ import annotations

from governor.overlays.features.base import DEFAULT_RESOURCES, Resources, register
from governor.overlays.features.dialogue import Dialogue
from governor.overlays.features.text import words

TOKENS_PER_WORD = 4.0 / 3.0  # the usual English rule of thumb for BPE tokenizers


@register(
    "word_count",
    range=(0.0, float("inf")),
    unit="words",
    description="number of words in the response",
    grows=True,
)
def word_count(context: Dialogue, candidate: str, *, res: Resources = DEFAULT_RESOURCES) -> float:
    return float(len(words(candidate)))


@register(
    "token_count",
    range=(0.0, float("inf")),
    unit="tokens",
    description="completion tokens: counted by the tokenizer, else estimated as 4/3 per word",
    optional="tokenizer",
    method="tokenizer",
    fallback="word estimate",
    grows=True,
)
def token_count(context: Dialogue, candidate: str, *, res: Resources = DEFAULT_RESOURCES) -> float:
    if res.tokenizer is not None:
        return float(len(res.tokenizer(candidate)))
    return round(len(words(candidate)) * TOKENS_PER_WORD)
