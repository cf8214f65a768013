"""Specificity: named things, numbers, descriptive words and rare words in a response.

Counts come from TextBlob's pattern tagger (Penn tags, no NLTK data) and ``wordfreq``. The score
is the mean of four components, each normalised by the maximum count expected in a human response
(:class:`~governor.overlays.features.base.SpecificityNorms`, calibrated as an upper quantile of
human responses) and capped at 1, as in the small-talk paper.
"""

from __future__ import annotations

from governor.overlays.features.base import DEFAULT_RESOURCES, Resources, register
from governor.overlays.features.dialogue import Dialogue
from governor.overlays.features.text import memo, tags, word_tuple, zipf

RARE_ZIPF = 3.0  # rarer than one in a million words
COMMON_ZIPF = 4.5  # a capitalised word this common at a sentence start is not a name
# Adjectives and adverbs that quantify, negate or connect rather than describe.
_FUNCTION_MODIFIERS = """not n't so just too really well only very then also now pretty never even actually maybe
    ever always most still back probably here there right yet once down else again soon away ago
    quite enough already rather anymore sure far more much many other own same such few last
    first next least less able whole as up out how when where why almost often sometimes usually
    lot little"""
FUNCTION_MODIFIERS = frozenset(_FUNCTION_MODIFIERS.split())
_NAME_TAGS = ("NNP", "NNPS")
_DESCRIPTIVE_TAGS = ("JJ", "JJR", "JJS", "RB", "RBR", "RBS")


@memo(8192)
def counts(text: str) -> tuple[int, int, int, float]:
    """(proper-noun runs, numbers, descriptive words, rare-word rate) of a text."""
    names = numbers = descriptive = 0
    in_name = False
    sentence_start = True
    for word, tag in tags(text):
        letters = word.isalpha()  # all letters: one at least, and no digit
        is_name = (
            tag in _NAME_TAGS
            and word[:1].isupper()
            and (letters or any(c.isalpha() for c in word))
            and not (sentence_start and zipf(word.strip(".")) >= COMMON_ZIPF)
        )
        if is_name and not in_name:
            names += 1
        in_name = is_name
        if tag == "CD" or (not letters and any(c.isdigit() for c in word)):
            numbers += 1
        elif tag in _DESCRIPTIVE_TAGS and word.lower() not in FUNCTION_MODIFIERS:
            descriptive += 1
        sentence_start = word in (".", "!", "?", ":", ";") or word.endswith((".", "!", "?"))
    content = [w for w in word_tuple(text) if w.isalpha() and len(w) > 2]
    rare = sum(1 for w in content if zipf(w) < RARE_ZIPF)
    return names, numbers, descriptive, (rare / len(content) if content else 0.0)


@register(
    "proper_nouns", range=(0.0, float("inf")), unit="runs", description="runs of proper nouns"
)
def proper_nouns(context: Dialogue, candidate: str, *, res: Resources = DEFAULT_RESOURCES) -> float:
    return float(counts(candidate)[0])


@register(
    "numbers", range=(0.0, float("inf")), unit="numbers", description="numbers and digit tokens"
)
def numbers(context: Dialogue, candidate: str, *, res: Resources = DEFAULT_RESOURCES) -> float:
    return float(counts(candidate)[1])


@register(
    "descriptive_words",
    range=(0.0, float("inf")),
    unit="words",
    description="descriptive adjectives and adverbs (quantifiers and negations excluded)",
)
def descriptive_words(
    context: Dialogue, candidate: str, *, res: Resources = DEFAULT_RESOURCES
) -> float:
    return float(counts(candidate)[2])


@register(
    "rare_word_rate",
    range=(0.0, 1.0),
    unit="share",
    description=f"share of words (3+ letters) with wordfreq Zipf frequency below {RARE_ZIPF}",
)
def rare_word_rate(
    context: Dialogue, candidate: str, *, res: Resources = DEFAULT_RESOURCES
) -> float:
    return counts(candidate)[3]


@register(
    "specificity",
    range=(0.0, 1.0),
    unit="score",
    description="mean of names, numbers, descriptive words and rare-word rate, each divided"
    " by its maximum expected human count and capped at 1",
)
def specificity(context: Dialogue, candidate: str, *, res: Resources = DEFAULT_RESOURCES) -> float:
    n = res.specificity
    names, nums, desc, rare = counts(candidate)
    parts = (
        names / n.proper_nouns,
        nums / n.numbers,
        desc / n.descriptive,
        rare / n.rare_rate,
    )
    return sum(min(1.0, p) for p in parts) / len(parts)
