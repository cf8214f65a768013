"""The commerce page as tokens: its vocabulary and a renderer of many carts' tokens at once.

:class:`CommerceTemplates` renders the token sequences of the commerce page
(:func:`~governor.worlds.commerce.env.describe`) for many states at once from cached pieces;
it must agree with :meth:`~governor.safety_values.text_tokens.Vocabulary.encode` of the real page
(a test checks that). The machinery is :mod:`governor.safety_values.text_tokens`.
"""

from __future__ import annotations

import numpy as np

from governor.safety_values.text_tokens import (
    NUMBER_SCALE,
    Tokens,
    Vocabulary,
    pad_batch,
    split_text,
)
from governor.worlds.commerce.env import CommerceParams, rows_of
from governor.worlds.commerce.page import footer_text, header_text, page_text, row_text


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
