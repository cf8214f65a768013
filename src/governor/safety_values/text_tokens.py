"""Text observations as token sequences whose numbers are values (xVal-style).

A text is split into numbers (``-12.5``), words (lower-cased) and single punctuation marks. Words
map to ids of a small vocabulary built from the environment's own text templates (unknown words
map to ``<unk>``); every number maps to the id of ``[NUM]`` and carries its value divided by
:data:`NUMBER_SCALE` (metres and degrees alike), so the encoder can scale the ``[NUM]`` embedding
by it. Word tokens carry the value 1 and padding 0.

A world renders the same token sequences for many states at once, without going through strings
(its task's ``templates``, e.g. :class:`~governor.worlds.driving.text.DrivingTemplates`), and
builds its vocabulary from its own texts; both must agree with :meth:`Vocabulary.encode` of the
real text. Imports numpy only: no world.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

PAD, UNK, NUM = "<pad>", "<unk>", "[NUM]"
SPECIALS = (PAD, UNK, NUM)
PAD_ID, UNK_ID, NUM_ID = 0, 1, 2
NUMBER_SCALE = 100.0  # value of a number token = printed number / NUMBER_SCALE
TOKEN_RE = re.compile(r"(-?\d+(?:\.\d+)?)|([A-Za-z]+)|(\S)")


def split_text(text: str) -> list[str | float]:
    """Numbers as floats, words lower-cased, other non-space characters one by one."""
    out: list[str | float] = []
    for number, word, mark in TOKEN_RE.findall(text):
        out.append(float(number) if number else (word.lower() if word else mark))
    return out


@dataclass(frozen=True)
class Tokens:
    """One text as token ids and values (word: 1, number: printed value / NUMBER_SCALE)."""

    ids: np.ndarray  # int64 (L,)
    values: np.ndarray  # float32 (L,)

    @property
    def number_positions(self) -> np.ndarray:
        return np.flatnonzero(self.ids == NUM_ID)


class Vocabulary:
    """Word <-> id; ids 0, 1, 2 are ``<pad>``, ``<unk>`` and ``[NUM]``."""

    def __init__(self, words: Iterable[str]) -> None:
        extra = sorted(set(words) - set(SPECIALS))
        self.words: tuple[str, ...] = (*SPECIALS, *extra)
        self.index = {w: i for i, w in enumerate(self.words)}

    def __len__(self) -> int:
        return len(self.words)

    def id(self, word: str) -> int:
        return self.index.get(word, UNK_ID)

    def encode(self, text: str) -> Tokens:
        """The token ids and values of ``text``."""
        parts = split_text(text)
        ids = np.fromiter(
            (NUM_ID if isinstance(p, float) else self.id(p) for p in parts), np.int64, len(parts)
        )
        values = np.fromiter(
            (p / NUMBER_SCALE if isinstance(p, float) else 1.0 for p in parts),
            np.float32,
            len(parts),
        )
        return Tokens(ids, values)


def pad_batch(rows: Sequence[Tokens]) -> tuple[np.ndarray, np.ndarray]:
    """Ids (N, L) and values (N, L) padded to the longest row with ``<pad>`` / 0."""
    length = max((len(r.ids) for r in rows), default=0)
    ids = np.full((len(rows), length), PAD_ID, dtype=np.int64)
    values = np.zeros((len(rows), length), dtype=np.float32)
    for i, r in enumerate(rows):
        ids[i, : len(r.ids)] = r.ids
        values[i, : len(r.ids)] = r.values
    return ids, values
