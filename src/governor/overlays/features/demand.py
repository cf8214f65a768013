"""Interaction demand: how much a reply asks of the person who hears it.

De-escalation lowers demand (the journal paper, section 6.3.2): shorter utterances, fewer
questions, fewer directives, slower pacing, deliberate silence. The family, beside the existing
``word_count`` (utterance length) and ``questions`` (question count):

- ``directives``: sentences that tell the listener to do something (an imperative opening, "you
  need to", "let's", "please ...");
- ``pacing``: prompts (questions + directives) per assistant turn over the last
  :data:`PACING_TURNS` turns, the candidate included: persistent prompting, not one busy turn;
- ``silence``: 1 when the reply says nothing verbal (a silence marker such as ``[silence]``,
  ``...`` or a bracketed non-verbal act), else 0;
- ``demand``: one number in [0, 1], 0 for silence, else
  ``min(1, words / DEMAND_WORDS + (questions + directives) / DEMAND_PROMPTS)``.

All are lexical and linear in the text; none reads the user's turns.
"""

from __future__ import annotations

import re

from governor.overlays.features.base import DEFAULT_RESOURCES, Resources, register
from governor.overlays.features.dialogue import Dialogue, bot_history
from governor.overlays.features.text import sentences, words

PACING_TURNS = 3
DEMAND_WORDS = 40.0
"""Words that alone make a reply fully demanding: above the human 97.5th percentile of
conversational turns (35 words in the shipped small-talk reference), so an ordinary human turn
stays below 1 on length alone."""
DEMAND_PROMPTS = 4.0
"""Prompts (questions + directives) that alone make a reply fully demanding: one prompt is a
quarter of the scale, the share a single human question takes."""
SILENCE_MARKERS = re.compile(r"^\s*(?:\[[^\]]{0,80}\]|\([^)]{0,80}\)|[.\u2026\s]+)\s*$")

_VERBS = (
    "try look listen breathe take tell show come go stop sit stand put give pick use write"
    " draw think count close open wait calm hold focus remember keep answer say read check move"
    " follow repeat finish start clean get make"
)
_DIRECTIVE = re.compile(
    rf"^(?:(?:please|now|okay|ok|so|just|first|then|next|alright)[,]?\s+)*(?:{'|'.join(_VERBS.split())})\b"
    r"|\byou (?:need|have|must|should|ought) to\b|\blet'?s (?!see\b)|\bi (?:need|want) you to\b",
    re.IGNORECASE,
)


def is_silence(text: str) -> bool:
    """Whether ``text`` is a deliberate silence: a marker with no spoken words."""
    return bool(SILENCE_MARKERS.match(text[:200])) if text.strip() else False


def directive_count(text: str) -> int:
    """Sentences that direct the listener to act (a question is not a directive)."""
    if is_silence(text):
        return 0
    return sum(1 for s in sentences(text) if not s.rstrip().endswith("?") and _DIRECTIVE.search(s))


def prompt_count(text: str) -> int:
    """Questions plus directives: what a reply asks the listener to answer or do."""
    if is_silence(text):
        return 0
    return len(re.findall(r"\?+", text)) + directive_count(text)


@register(
    "directives",
    range=(0.0, float("inf")),
    unit="sentences",
    description="sentences telling the listener to do something (imperatives, 'you need to')",
)
def directives(context: Dialogue, candidate: str, *, res: Resources = DEFAULT_RESOURCES) -> float:
    return float(directive_count(candidate))


@register(
    "pacing",
    range=(0.0, float("inf")),
    unit="prompts/turn",
    scope="trajectory",
    description=f"questions + directives per assistant turn over the last {PACING_TURNS} turns",
)
def pacing(context: Dialogue, candidate: str, *, res: Resources = DEFAULT_RESOURCES) -> float:
    earlier = [text for _, text in bot_history(context)[-(PACING_TURNS - 1) :]]
    counts = [prompt_count(t) for t in (*earlier, candidate)]
    return sum(counts) / len(counts)


@register(
    "silence",
    range=(0.0, 1.0),
    unit="flag",
    description="1 when the reply is a deliberate silence (a marker, no spoken words)",
)
def silence(context: Dialogue, candidate: str, *, res: Resources = DEFAULT_RESOURCES) -> float:
    return 1.0 if is_silence(candidate) else 0.0


def demand_score(text: str) -> float:
    """The ``demand`` of a reply (see the module doc), without a dialogue."""
    if is_silence(text) or not text.strip():
        return 0.0
    load = len(words(text)) / DEMAND_WORDS + prompt_count(text) / DEMAND_PROMPTS
    return min(1.0, load)


@register(
    "demand",
    range=(0.0, 1.0),
    unit="score",
    description="interaction demand: words/40 + prompts/4, capped at 1; 0 for silence",
)
def demand(context: Dialogue, candidate: str, *, res: Resources = DEFAULT_RESOURCES) -> float:
    return demand_score(candidate)
