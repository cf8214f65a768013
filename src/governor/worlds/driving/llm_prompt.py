"""Worked examples for the driving question, and the one way an A/B/C answer is read.

A base model (not instruction-tuned) continues a prompt rather than answering it; shown a few
solved questions first, as earlier user and assistant turns, it answers in kind, and the same
turns read naturally to a chat model. :data:`EXAMPLES` are three states of the default task whose
letters are the exact value's best action there (obstacle ahead: steer left; close to the left
edge heading left: steer right; a clear road to the goal: straight); a test checks them.

:func:`ask_letter` puts the question through :func:`~governor.backends.choice.choose`: the local
model's next-token logits over A, B, C, or an HTTP model's log-probabilities, else its text
(:func:`~governor.worlds.driving.controllers.parse_choice` rules). One counted call per question.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from governor.backends.base import Backend, Message
from governor.backends.choice import Choice, choose
from governor.core import Candidate
from governor.worlds.driving.env import LABELS, LETTERS, DrivingParams, describe

EXAMPLES: tuple[tuple[tuple[float, float, float], str], ...] = (
    ((1.6, 1.0, 0.0), "C"),
    ((8.0, 2.7, 0.4), "A"),
    ((8.5, 1.5, 0.0), "B"),
)
"""(x, y, heading) and the best letter there, for the default parameters."""
_REPLY = re.compile(r"\(?([abc])\)?(?:[.):]\s*|\s+|$)(.*)", re.IGNORECASE | re.DOTALL)
_PREFIX = re.compile(r"^(?:the\s+)?(?:correct\s+)?answer(?:\s+is)?\s*[:\-]?\s*", re.IGNORECASE)


def worked_examples(params: DrivingParams, shots: int, suffix: str = "") -> list[Message]:
    """The first ``shots`` examples as (question, letter) turns; ``suffix`` ends each question."""
    return [
        m
        for state, letter in EXAMPLES[:shots]
        for m in (Message("user", describe(params, state) + suffix), Message("assistant", letter))
    ]


def parse_choice(text: str) -> Candidate[Any]:
    """The candidate a reply stands for: "B", "b", "B)", "Answer: B", "B) Steer straight", ...

    A reply naming no choice, or two different ones, is an invalid candidate (never an exception).
    """
    reply = _PREFIX.sub("", text.strip().strip("*`'\" ")).strip().rstrip(".").strip()
    labels = [label.lower() for label in LABELS]
    if reply.lower() in labels:
        return Candidate(labels.index(reply.lower()), text)
    match = _REPLY.fullmatch(reply)
    if match:
        index = LETTERS.index(match.group(1).upper())
        rest = match.group(2).strip().rstrip(".").strip().lower()
        if not rest or labels[index].startswith(rest):
            return Candidate(index, text)
    shown = text if len(text) <= 80 else text[:77] + "..."
    return Candidate.invalid(text, f"expected one of A, B, C; found {shown!r}")


def letter_of(text: str) -> str | None:
    """The letter a reply names by :func:`parse_choice`'s rules, else None."""
    action = parse_choice(text).action
    return LETTERS[action] if isinstance(action, int) else None


def ask_letter(
    backend: Backend,
    messages: Sequence[Message],
    *,
    n: int = 1,
    temperature: float = 0.0,
    max_tokens: int = 5,
    seed: int | None = None,
) -> tuple[list[Candidate[Any]], Choice]:
    """``n`` candidate actions (0, 1, 2 for A, B, C; invalid for no letter) and the choice."""
    choice = choose(
        backend,
        messages,
        LETTERS,
        parse=letter_of,
        n=n,
        temperature=temperature,
        max_tokens=max_tokens,
        seed=seed,
    )
    out: list[Candidate[Any]] = []
    for answer, text in zip(choice.answers, choice.texts, strict=True):
        if answer is None:
            shown = text if len(text) <= 80 else text[:77] + "..."
            out.append(Candidate.invalid(text, f"expected one of A, B, C; found {shown!r}"))
        else:
            out.append(Candidate(LETTERS.index(answer), text))
    return out, choice
