"""Brevity: how long a response is, in words, tokens and characters.

Each reads the reply normalised (:func:`~.text.normalised`: entities decoded, NFKC, invisible
characters removed). A word is a run of letters or digits, and an unbroken token counts at least
one word per :data:`~.text.MAX_WORD_CHARS` characters (:func:`~.text.length_in_words`), so a
5,000-character token or a run of emoji is long, as it looks.
"""

from __future__ import annotations

from governor.overlays.features.base import DEFAULT_RESOURCES, Resources, register
from governor.overlays.features.dialogue import Dialogue
from governor.overlays.features.text import length_in_words, normalised

TOKENS_PER_WORD = 4.0 / 3.0  # the usual English rule of thumb for BPE tokenizers


@register(
    "word_count",
    range=(0.0, float("inf")),
    unit="words",
    description="number of words in the response (a long unbroken token counts as several)",
    grows=True,
)
def word_count(context: Dialogue, candidate: str, *, res: Resources = DEFAULT_RESOURCES) -> float:
    return float(length_in_words(normalised(candidate)))


@register(
    "char_count",
    range=(0.0, float("inf")),
    unit="characters",
    description="characters in the response, spaces excluded",
    grows=True,
)
def char_count(context: Dialogue, candidate: str, *, res: Resources = DEFAULT_RESOURCES) -> float:
    text = normalised(candidate)
    return float(len(text) - sum(ch.isspace() for ch in text))


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
    return round(length_in_words(normalised(candidate)) * TOKENS_PER_WORD)
