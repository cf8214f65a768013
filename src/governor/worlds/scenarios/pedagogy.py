"""Pedagogical feedback: features of the agent's feedback messages and the overlays over them.

In-home training (the journal paper, section 6.2) gives the learner feedback after each
conversation; it must be clear, respectful and non-judgemental. Features (registered with the
overlay features, so the shipped loader reads ``feedback.yaml`` next to this module):

- ``judgemental``: judgemental phrases ("wrong", "bad", "you never", "you should have", ...);
- ``sentence_words``: mean words per sentence (long sentences are hard to follow);
- ``hedges``: vague hedges ("kind of", "sort of", "in terms of", "somewhat", ...).

Respectfulness uses the existing ``tone`` feature. Lexicons are short and lexical, stated here.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from governor.overlays.features.base import DEFAULT_RESOURCES, FEATURES, Resources, register
from governor.overlays.features.dialogue import Dialogue
from governor.overlays.features.text import sentences, words
from governor.overlays.loader import load_overlays
from governor.overlays.rules import Overlay

FEEDBACK_OVERLAYS = Path(__file__).with_name("feedback.yaml")
JUDGEMENTAL = re.compile(
    r"\b(?:wrong|bad|terrible|awful|failed|failure|lazy|rude|awkward|weird|boring|poor(?:ly)?)\b"
    r"|\byou (?:always|never|can'?t|didn'?t even)\b|\byou should have\b|\bwhy (?:didn'?t|can'?t) you\b",
    re.IGNORECASE,
)
HEDGES = re.compile(
    r"\b(?:kind of|sort of|somewhat|in terms of|to some extent|more or less|perhaps|arguably"
    r"|in a way|considering everything)\b",
    re.IGNORECASE,
)


def judgemental_count(text: str) -> int:
    return len(JUDGEMENTAL.findall(text))


def mean_sentence_words(text: str) -> float:
    parts = sentences(text) or [text]
    return sum(len(words(s)) for s in parts) / len(parts)


def _on_candidate(measure: Callable[[str], float]) -> Callable[..., float]:
    def feature(context: Dialogue, candidate: str, *, res: Resources = DEFAULT_RESOURCES) -> float:
        return float(measure(candidate))

    return feature


PEDAGOGY_FEATURES: tuple[tuple[str, str, str, Callable[[str], float]], ...] = (
    ("judgemental", "phrases",
     "judgemental phrases in feedback ('wrong', 'you never', 'you should have')", judgemental_count),
    ("sentence_words", "words/sentence", "mean words per sentence of the reply", mean_sentence_words),
    ("hedges", "phrases", "vague hedges ('kind of', 'in terms of', 'somewhat')",
     lambda text: len(HEDGES.findall(text))),
)  # fmt: skip
"""(name, unit, description, measure of the reply's text) of each feature registered here."""

for _name, _unit, _description, _measure in PEDAGOGY_FEATURES:
    if _name not in FEATURES:
        register(_name, range=(0.0, float("inf")), unit=_unit, description=_description)(
            _on_candidate(_measure)
        )


def feedback_overlays() -> list[Overlay]:
    """The pedagogical-feedback overlays (clarity, respectfulness, non-judgemental wording)."""
    return load_overlays(FEEDBACK_OVERLAYS)
