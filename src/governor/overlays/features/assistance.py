"""Conversational motive: assistance language, unsolicited advice, requests, questions.

Offline these are phrase lexicons (regular expressions over the text); ``assistance`` switches to
embedding similarity with assistance phrases when an ``embed`` function is given.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache

import numpy as np

from governor.overlays.features.base import DEFAULT_RESOURCES, Embed, Resources, register
from governor.overlays.features.dialogue import Dialogue, last
from governor.overlays.features.text import memo, sentence_tuple

ASSISTANCE_PHRASES = (
    r"(?:i'?d|i would|i'?m|i am) (?:be )?(?:happy|glad|here) to help",
    r"how (?:can|may) i (?:help|assist)",
    r"i can help you",
    r"here (?:are|is|'s) (?:some|a few|a list|a couple)",
    r"let me know if",
    r"feel free to",
    r"(?:hope|hopefully) (?:this|that) helps",
    r"is there anything else (?:i|you)",
    r"anything else (?:i can|you'?d like)",
    r"you might (?:want to )?consider",
    r"great question",
    r"as an ai",
    r"(?:i can|i could) (?:provide|offer|suggest|recommend)",
    r"would you like (?:me to|more|some|information|any)",
    r"(?:more|further|additional) (?:information|suggestions|tips|resources)",
    r"in summary|to summari[sz]e|in conclusion",
)
PROTOTYPES = (
    "I'd be happy to help you with that.",
    "Here are some suggestions you might consider.",
    "Let me know if you need any more information.",
    "Feel free to ask if you have other questions.",
)
ADVICE_PHRASES = (
    r"you (?:should|could|might|may|need to|ought to) (?:try|consider|look into|think about|start"
    r"|avoid|talk to|reach out|take (?:a|some|time)|get (?:some|a|more)|make (?:sure|time)|keep"
    r"|focus|practice|set (?:a|some|aside)|limit|drink|exercise|journal|write down|speak)",
    r"(?:i'?d|i would|i) (?:recommend|suggest|advise)",
    r"my (?:advice|suggestion|recommendation)",
    r"(?:^\W*|\b(?:you|just|please|and|so) )(?:make sure|be sure|don'?t forget|remember) to",
    r"it'?s (?:a good idea|important|best|helpful|worth it) to",
    r"(?:a good|one) (?:idea|option|way) (?:is|would be|might be) to",
    r"(?:some|a few|these|my|quick|useful|helpful) tips",
    r"why not (?:try|consider)",
)
IMPERATIVES = (
    r"try|consider|remember to|avoid|make sure|focus on|practice|plan to|start by|drink|book"
    r"|limit|schedule|talk to|reach out|don'?t forget"
)
REQUEST_PHRASES = (
    r"should i\b",
    r"what (?:should|would|do|can) (?:i|you) (?:do|recommend|suggest)",
    r"any (?:advice|tips|suggestions|ideas|recommendations)",
    r"(?:can|could|would|will) you (?:recommend|suggest|help|tell|explain|give|show)",
    r"how (?:do|can|should|would) i\b",
    r"\b(?:recommend|suggest|advice|tips?|help me|explain|tell me (?:more|about))\b",
)

_ASSIST = re.compile(r"\b(?:" + "|".join(ASSISTANCE_PHRASES) + ")", re.IGNORECASE)
_ADVICE = re.compile(
    "|".join(p if p.startswith("(?:^") else rf"\b{p}" for p in ADVICE_PHRASES), re.IGNORECASE
)
_IMPERATIVE = re.compile(rf"^(?:\W*\d*[.)]?\s*)(?:{IMPERATIVES})\b", re.IGNORECASE)
_REQUEST = re.compile(r"\b(?:" + "|".join(REQUEST_PHRASES) + ")", re.IGNORECASE)
# A list item: a bullet or "1." at a line start, or an inline "2)" after a space or colon.
_LIST_ITEM = re.compile(r"^\s*(?:[-*•]|\d{1,2}[.)])\s+\S|[\s:]\d{1,2}\)\s+\S", re.MULTILINE)
_QUESTION = re.compile(r"\?+")


@memo()
def assistance_markers(text: str) -> int:
    """Assistance phrases found, plus one when the text holds a list of two or more items."""
    found = len(_ASSIST.findall(text))
    return found + (1 if len(_LIST_ITEM.findall(text)) >= 2 else 0)


@memo()
def advice_markers(text: str) -> int:
    """Sentences that give advice: an advice phrase or an imperative opening."""
    return sum(1 for s in sentence_tuple(text) if _ADVICE.search(s) or _IMPERATIVE.search(s))


@memo()
def requested(text: str | None) -> bool:
    """Whether a user turn asks for advice, help, an explanation or more detail."""
    return bool(text) and _REQUEST.search(text or "") is not None


@lru_cache(maxsize=8)
def _prototype_vectors(embed: Callable[..., np.ndarray]) -> np.ndarray:
    return _unit(np.asarray(embed(list(PROTOTYPES)), dtype=float))


def _unit(x: np.ndarray) -> np.ndarray:
    return x / np.maximum(np.linalg.norm(x, axis=-1, keepdims=True), 1e-12)


def embedding_assistance(embed: Embed, text: str) -> float:
    """Largest cosine similarity to the assistance prototypes, floored at 0."""
    v = _unit(np.asarray(embed([text]), dtype=float))[0]
    return max(0.0, float(np.max(_prototype_vectors(embed) @ v)))


@register(
    "assistance",
    range=(0.0, 1.0),
    unit="score",
    description="similarity to assistance language: embedding cosine with assistance phrases,"
    " or offline 1 - 0.5**k for k lexicon markers (phrases, lists)",
    optional="embed",
    method="embedding",
    fallback="lexicon",
)
def assistance(context: Dialogue, candidate: str, *, res: Resources = DEFAULT_RESOURCES) -> float:
    if res.embed is not None:
        return embedding_assistance(res.embed, candidate)
    return 1.0 - 0.5 ** assistance_markers(candidate)


@register(
    "suggestions",
    range=(0.0, float("inf")),
    unit="sentences",
    description="sentences giving advice or suggestions, asked for or not",
)
def suggestions(context: Dialogue, candidate: str, *, res: Resources = DEFAULT_RESOURCES) -> float:
    return float(advice_markers(candidate))


@register(
    "advice",
    range=(0.0, float("inf")),
    unit="sentences",
    description="sentences giving advice when the user's last turn did not ask for any",
)
def advice(context: Dialogue, candidate: str, *, res: Resources = DEFAULT_RESOURCES) -> float:
    return 0.0 if requested(last(context, "user")) else float(advice_markers(candidate))


@register(
    "user_request",
    range=(0.0, 1.0),
    unit="flag",
    description="1 when the user's last turn asks for advice, help, explanation or detail",
)
def user_request(context: Dialogue, candidate: str, *, res: Resources = DEFAULT_RESOURCES) -> float:
    return 1.0 if requested(last(context, "user")) else 0.0


@register(
    "questions",
    range=(0.0, float("inf")),
    unit="questions",
    description="questions asked in the response (runs of '?')",
)
def questions(context: Dialogue, candidate: str, *, res: Resources = DEFAULT_RESOURCES) -> float:
    return float(len(_QUESTION.findall(candidate)))
