"""Instruction echo: a reply that restates what the model was told instead of talking.

A chat model given a system prompt and the observer's notes sometimes answers with them, in its
own words: "my supervisor rejected my proposal", "I'll keep it brief and light, no advice". A
verbatim copy is caught before it becomes a candidate (half of its words inside a 4-gram of the
instructions); a paraphrase shares the instructions' words but not their order, so this feature
compares vocabularies, not sequences.

``instruction_echo`` is the share of the reply's content stems (stop words left out, crude
stems) that belong to :func:`instruction_vocabulary` and were not said by the user in the
conversation (a user who talks about their supervisor may be answered about them), over at least
:data:`MIN_STEMS` stems, so that a short "Sounds good, keep it light!" is not an echo. The
vocabulary is the words of the notes the loop sends the model: each shipped overlay's descriptor
and feedback (:data:`~governor.overlays.defaults.SMALL_TALK`, which fill the observer's notes)
and :data:`EXCHANGE_WORDS`, the words of the system prompt, the note wrappers and the feedback
templates, which talk about the exchange itself; words as common as "people" or "new" (Zipf
frequency :data:`COMMON` or more) carry no sign of the instructions and are left out. Human
replies score 0.4 or less at the 0.999 quantile (calibration split); the two paraphrases above
score 0.6 and 0.8.
"""

from __future__ import annotations

import re
from functools import lru_cache

from governor.overlays.defaults import SMALL_TALK
from governor.overlays.features.base import DEFAULT_RESOURCES, Resources, register
from governor.overlays.features.dialogue import Dialogue
from governor.overlays.features.text import STOPWORDS, content_stems, memo, stem, words, zipf

MIN_STEMS = 5  # the share is taken over at least this many content stems
COMMON = 5.8  # words this frequent (Zipf) say nothing about the instructions
EXCHANGE_WORDS = """supervisor supervise observer observations instruction instructions feedback
    note notes rejected accepted proposal propose proposed action attempt reply replies response
    rewrite regenerate candidate prompt system assistant merge directive concrete preamble second
    person companion casual small talk brief light informal engage engages friendly stay talking
    avoid specific details advice offers help unless asked exchanges gave match length tone below
    different instruct instructed"""
_SLOT = re.compile(r"\{[^}]*\}")  # a template's "{value:.0f}"


@lru_cache(maxsize=1)
def instruction_vocabulary() -> frozenset[str]:
    """The stems of the words the model is told things with (see the module doc)."""
    texts = [EXCHANGE_WORDS, *(f"{r.descriptor} {r.feedback}" for r in SMALL_TALK)]
    return frozenset(
        stem(w)
        for text in texts
        for w in words(_SLOT.sub(" ", text))
        if len(w) > 1 and w.lower() not in STOPWORDS and zipf(w) < COMMON
    )


def instruction_share(candidate: str, said: frozenset[str] = frozenset()) -> float:
    """Share of ``candidate``'s content stems in the instruction vocabulary and not in ``said``,
    over at least :data:`MIN_STEMS` stems."""
    mine = content_stems(candidate)
    echoed = (mine - said) & instruction_vocabulary()
    return len(echoed) / max(len(mine), MIN_STEMS)


@register(
    "instruction_echo",
    range=(0.0, 1.0),
    unit="share",
    description="share of the reply's content words restating its instructions or the observer's"
    " notes (words the user said excluded)",
)
def instruction_echo(
    context: Dialogue, candidate: str, *, res: Resources = DEFAULT_RESOURCES
) -> float:
    return _instruction_echo(candidate, tuple(t.text for t in context if t.role == "user"))


@memo()
def _instruction_echo(candidate: str, user_texts: tuple[str, ...]) -> float:
    said: frozenset[str] = frozenset().union(*(content_stems(t) for t in user_texts))
    return instruction_share(candidate, said)
