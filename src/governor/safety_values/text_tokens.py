"""Text observations as token sequences whose numbers are values (xVal-style).

A text is split into numbers (``-12.5``), words (lower-cased) and single punctuation marks. Words
map to ids of a small vocabulary built from the environment's own text templates (unknown words
map to ``<unk>``); every number maps to the id of ``[NUM]`` and carries its value divided by
:data:`NUMBER_SCALE` (metres and degrees alike), so the encoder can scale the ``[NUM]`` embedding
by it. Word tokens carry the value 1 and padding 0.

:class:`DrivingTemplates` renders the same token sequences for many states at once, without going
through strings: the text of :func:`~governor.worlds.driving.env.describe` is fixed up to its numbers
and to which side words it uses, so each side-word variant is tokenised once from a real text and
cached, and its number slots are filled with the values :func:`describe` would print (rounded the
same way). It must agree with :meth:`Vocabulary.encode` of the real text (a test checks that).
:class:`CommerceTemplates` does the same for the commerce page, from cached pieces.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from governor.worlds.commerce.env import CommerceParams, rows_of
from governor.worlds.commerce.page import footer_text, header_text, page_text, row_text
from governor.worlds.driving.env import DrivingParams, describe, wrap_angle

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


def driving_vocabulary(params: DrivingParams) -> Vocabulary:
    """Every word of the driving text, from texts covering each side-word variant."""
    samples = [(0.5, 1.0, 0.0), (0.5, 2.0, 0.3), (0.5, 1.0, -0.3), (9.0, 0.5, 2.0)]
    for cx, cy in params.obstacles:  # an obstacle straight ahead
        samples.append((max(cx - 1.5, 0.0), cy, 0.0))
    words: set[str] = set()
    for state in samples:
        words.update(p for p in split_text(describe(params, state)) if isinstance(p, str))
    return Vocabulary(words)


def pad_batch(rows: Sequence[Tokens]) -> tuple[np.ndarray, np.ndarray]:
    """Ids (N, L) and values (N, L) padded to the longest row with ``<pad>`` / 0."""
    length = max((len(r.ids) for r in rows), default=0)
    ids = np.full((len(rows), length), PAD_ID, dtype=np.int64)
    values = np.zeros((len(rows), length), dtype=np.float32)
    for i, r in enumerate(rows):
        ids[i, : len(r.ids)] = r.ids
        values[i, : len(r.ids)] = r.values
    return ids, values


class DrivingTemplates:
    """Token ids and values of ``describe(params, s)`` for many states at once."""

    def __init__(self, params: DrivingParams, vocab: Vocabulary) -> None:
        self.params, self.vocab = params, vocab
        self._cache: dict[int, tuple[Tokens, np.ndarray]] = {}

    def printed(self, states: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The varying numbers as printed (N, 5 + 2 * obstacles) and the side-word variant (N,).

        Numbers in text order: metres to the goal, to the left and right edges, past the start,
        |heading| in degrees, then per obstacle the gap (m) and |bearing| (degrees). The variant
        codes each angle's side word (0: none or straight ahead, 1: left, 2: right) in base 3.
        """
        p, m = self.params, self.params.unit_m
        x, y, theta = (np.asarray(states, dtype=np.float64)[:, i] for i in range(3))
        heading = np.degrees(theta)
        cols: list[np.ndarray] = [
            np.round(np.maximum(p.goal_x - x, 0.0) * m, 2),
            np.round((p.road_width - y) * m, 2),
            np.round(y * m, 2),
            np.round(x * m, 2),
            np.round(np.abs(heading), 1),
        ]
        code = _side(heading, cols[-1])
        for cx, cy in p.obstacles:
            gap = np.maximum(np.hypot(cx - x, cy - y) - p.obstacle_radius, 0.0) * m
            bearing = np.degrees(wrap_angle(np.arctan2(cy - y, cx - x) - theta))
            shown = np.round(np.abs(bearing), 1)
            cols += [np.round(gap, 2), shown]
            code = code * 3 + _side(bearing, shown)
        return np.stack(cols, axis=1), code

    def encode_states(self, states: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Ids (N, L) and values (N, L), padded like :func:`pad_batch`."""
        states = np.asarray(states, dtype=np.float64).reshape(-1, 3)
        numbers, code = self.printed(states)
        templates = {}
        for c in np.unique(code).tolist():
            templates[c] = self._template(c, states[int(np.argmax(code == c))])
        length = max(len(t.ids) for t, _ in templates.values()) if templates else 0
        ids = np.full((len(states), length), PAD_ID, dtype=np.int64)
        values = np.zeros((len(states), length), dtype=np.float32)
        k = numbers.shape[1]
        for c, (tokens, slots) in templates.items():
            rows = np.flatnonzero(code == c)
            n = len(tokens.ids)
            ids[rows, :n] = tokens.ids
            values[rows, :n] = tokens.values
            values[rows[:, None], slots[None, :k]] = numbers[rows] / NUMBER_SCALE
        return ids, values

    def _template(self, code: int, state: np.ndarray) -> tuple[Tokens, np.ndarray]:
        if code not in self._cache:
            tokens = self.vocab.encode(describe(self.params, state))
            self._cache[code] = (tokens, tokens.number_positions)
        return self._cache[code]


def _side(angle: np.ndarray, shown: np.ndarray) -> np.ndarray:
    """0 where the printed angle is 0.0 (no side word), 1 for left (positive), 2 for right."""
    return np.where(shown == 0.0, 0, np.where(angle > 0, 1, 2)).astype(np.int64)


def commerce_vocabulary(params: CommerceParams) -> Vocabulary:
    """Every word of the commerce page with any of the catalogue's products in the cart."""
    cents = params.prices_cents
    items = [(name, int(cents[i])) for i, (name, _) in enumerate(params.catalogue)]
    parts = split_text(page_text(items, params.actions))
    return Vocabulary(p for p in parts if isinstance(p, str))


class CommerceTemplates:
    """Token ids and values of the commerce page for many states at once.

    The page is a header, one block of rows per cart item and a footer, each ending at a line
    break, so the page's tokens are the pieces' tokens end to end. Each product's block is
    tokenised once with element id 1 (its last number) and the id is refilled per row; the
    footer's two numbers (actions remaining, total) are refilled per state.
    """

    def __init__(self, params: CommerceParams, vocab: Vocabulary) -> None:
        self.params, self.vocab = params, vocab
        self.header = vocab.encode(header_text())
        cents = params.prices_cents
        self.rows = [
            vocab.encode(row_text(1, name, int(cents[i])))
            for i, (name, _) in enumerate(params.catalogue)
        ]
        self.id_slots = [int(t.number_positions[-1]) for t in self.rows]
        self.footer = vocab.encode(footer_text(1, 0))
        self.footer_slots = self.footer.number_positions
        assert len(self.footer_slots) == 2, "the footer holds two numbers"

    def encode_states(self, states: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Ids (N, L) and values (N, L), padded like :func:`pad_batch`."""
        p = self.params
        states = np.asarray(states, dtype=np.float64).reshape(-1, p.max_items + 1)
        rows = rows_of(states)
        totals = p.prices_cents[rows].sum(axis=1)
        out = []
        for state, items, total in zip(states, rows, totals, strict=True):
            present = [int(i) for i in items if i >= 0]
            pieces = [self.header, *(self.rows[i] for i in present), self.footer]
            ids = np.concatenate([t.ids for t in pieces])
            values = np.concatenate([t.values for t in pieces])
            starts = np.cumsum([0] + [len(t.ids) for t in pieces])
            slots = starts[1:-2] + np.array([self.id_slots[i] for i in present], dtype=np.int64)
            values[slots] = np.arange(1, len(present) + 1) / NUMBER_SCALE
            footer = (state[-1] / NUMBER_SCALE, total / 100 / NUMBER_SCALE)
            values[starts[-2] + self.footer_slots] = footer
            out.append(Tokens(ids, values))
        return pad_batch(out)
