"""The driving text as tokens: its vocabulary and a renderer of many states' tokens at once.

:class:`DrivingTemplates` renders the token sequences of
:func:`~governor.worlds.driving.env.describe` for many states at once, without going through
strings: the text is fixed up to its numbers and to which side words it uses, so each side-word
variant is tokenised once from a real text and cached, and its number slots are filled with the
values :func:`describe` would print (rounded the same way). It must agree with
:meth:`~governor.safety_values.text_tokens.Vocabulary.encode` of the real text (a test checks
that). The machinery is :mod:`governor.safety_values.text_tokens`.
"""

from __future__ import annotations

import numpy as np

from governor.safety_values.text_tokens import (
    NUMBER_SCALE,
    PAD_ID,
    Tokens,
    Vocabulary,
    split_text,
)
from governor.worlds.driving.env import DrivingParams, describe, wrap_angle


def driving_vocabulary(params: DrivingParams) -> Vocabulary:
    """Every word of the driving text, from texts covering each side-word variant."""
    samples = [(0.5, 1.0, 0.0), (0.5, 2.0, 0.3), (0.5, 1.0, -0.3), (9.0, 0.5, 2.0)]
    for cx, cy in params.obstacles:  # an obstacle straight ahead
        samples.append((max(cx - 1.5, 0.0), cy, 0.0))
    words: set[str] = set()
    for state in samples:
        words.update(p for p in split_text(describe(params, state)) if isinstance(p, str))
    return Vocabulary(words)


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
