"""Critique: how harsh or how encouraging a reply is (a tutor's feedback to a learner).

Both are lexical proxies (weak evidence on their own), linear in the reply's length:

- ``negativity``: critical phrases, weighted 0.4 for harsh ones ("wrong", "careless", "as I
  said", "you should know") and 0.2 for mild ones ("not quite", "try again", "mistake"), summed
  and capped at 1;
- ``encouragement``: encouraging phrases ("you're close", "good thinking", "let's work through",
  "step by step", "well done"), 0.35 each, plus 0.15 when the reply ends with a question, capped
  at 1.
"""

from __future__ import annotations

import re

from governor.overlays.features.base import DEFAULT_RESOURCES, Resources, register
from governor.overlays.features.dialogue import Dialogue

HARSH = re.compile(
    r"\b(wrong|incorrect|careless|sloppy|as i (already )?said|you should know|obviously"
    r"|pay attention|how many times|that'?s bad)\b",
    re.I,
)
MILD = re.compile(r"\b(not quite|try again|mistake|you missed|you forgot|not right|no,)", re.I)
ENCOURAGING = re.compile(
    r"\b(you'?re close|almost there|good (try|thinking|start|question)|nice (work|try)|well done"
    r"|great|let'?s work through|step by step|you can do|keep going|we'?ll get there)\b",
    re.I,
)


@register(
    "negativity",
    range=(0.0, 1.0),
    unit="score",
    description="harshness of the reply: critical phrases (0.4 harsh, 0.2 mild), capped at 1",
    weak=True,
)
def negativity(context: Dialogue, candidate: str, *, res: Resources = DEFAULT_RESOURCES) -> float:
    harsh = sum(1 for _ in HARSH.finditer(candidate))
    mild = sum(1 for _ in MILD.finditer(candidate))
    return min(1.0, 0.4 * harsh + 0.2 * mild)


@register(
    "encouragement",
    range=(0.0, 1.0),
    unit="score",
    description="encouraging phrases (0.35 each) and a closing question (0.15), capped at 1",
    weak=True,
)
def encouragement(
    context: Dialogue, candidate: str, *, res: Resources = DEFAULT_RESOURCES
) -> float:
    hits = sum(1 for _ in ENCOURAGING.finditer(candidate))
    question = 0.15 if candidate.rstrip().endswith("?") else 0.0
    return min(1.0, 0.35 * hits + question)
