"""Example exchanges for a chat model's prompt, taken from the human conversation corpora.

A base model imitates what its prompt shows; a few real exchanges (someone's turn, the human
reply to it) show the length and tone of small talk. :func:`human_examples` picks short,
plain ones from the calibration split only (the held-out dialogues stay unseen), one corpus after
another, in an order fixed by ``seed``. Imports the corpora reader and the error tree.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from pathlib import Path

from governor.overlays.corpora import CORPORA, HumanTurn, load_turns

MIN_WORDS, MAX_WORDS = 4, 18
# a sentence: a capital first, an end mark last; no markup, no transcription marks
_PLAIN = re.compile(r"^[A-Z][A-Za-z0-9 ,.'!?;:\-]*[.!?]$")


def pick_examples(
    turns: Sequence[HumanTurn], k: int = 4, *, seed: int = 0
) -> tuple[tuple[str, str], ...]:
    """Up to ``k`` (turn, reply) pairs of ``turns`` whose both sides are short plain sentences,
    taking the corpora in turn."""
    by_corpus: dict[str, list[tuple[int, tuple[str, str]]]] = {}
    for turn in turns:
        if not turn.context:
            continue
        pair = (" ".join(turn.context[-1].text.split()), " ".join(turn.response.split()))
        if all(_plain(side) for side in pair):
            rank = hashlib.sha256(f"{seed}|{turn.corpus}|{turn.dialogue}|{turn.index}".encode())
            by_corpus.setdefault(turn.corpus, []).append((int(rank.hexdigest()[:8], 16), pair))
    pools = [sorted(v) for _, v in sorted(by_corpus.items())]
    out: list[tuple[str, str]] = []
    for i in range(max((len(p) for p in pools), default=0)):
        out += [p[i][1] for p in pools if i < len(p)]
    return tuple(out[:k])


def human_examples(
    data_dir: str | Path, k: int = 4, *, seed: int = 0, corpora: Sequence[str] = CORPORA
) -> tuple[tuple[str, str], ...]:
    """:func:`pick_examples` over the calibration split of the corpora in ``data_dir``."""
    turns = load_turns(data_dir, "calibration", max_turns=300, corpora=corpora)
    return pick_examples(turns, k, seed=seed)


def _plain(text: str) -> bool:
    words = len(text.split())
    spaced = " ." in text or " ," in text or "--" in text
    return MIN_WORDS <= words <= MAX_WORDS and not spaced and bool(_PLAIN.match(text))
