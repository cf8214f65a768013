"""A retrieval responder: an offline stand-in for a base chat model. It is not a model.

It answers the user by returning human turns from the calibration split of the corpora, ranked by
BM25 between the dialogue so far (the last ``window`` turns, its own included, the latest with
weight 1 and each earlier one ``memory`` times the next) and each stored exchange (the turn a
human replied to, plus the reply).
Knowledge-heavy Topical-Chat replies are over-represented in the pool (``knowledge_turns``), and a
weak length normalisation (``b``) lets long replies that share more words with the query win, so
the responder shows the failure modes an observer corrects: long, detailed, specific replies,
which get longer as its own replies feed the query.

It reads no feedback. Regenerating just takes the next-best retrieved replies: the first call
of a step (no feedback, or implicit feedback) returns the top ``n``; each call under forced
feedback for the same dialogue returns the next ``n``. Ties are broken by a jitter drawn from the
seed and the dialogue, so the same seed and dialogue give the same candidates.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from governor.core import Candidate, Feedback, FeedbackKind, Policy, Trajectory
from governor.errors import ConfigError, expected
from governor.overlays.corpora import CORPORA, HumanTurn, load_turns
from governor.overlays.features.dialogue import Dialogue, as_dialogue
from governor.overlays.features.text import STOPWORDS, stem

_TOKEN = re.compile(r"[a-z0-9']+")


def terms(text: str) -> list[str]:
    """Stemmed content words (stop words and one-letter tokens dropped)."""
    return [stem(w) for w in _TOKEN.findall(text.lower()) if len(w) > 1 and w not in STOPWORDS]


class RetrievalResponder(Policy):
    """Proposes stored human replies ranked by BM25 against the dialogue (see the module doc)."""

    name = "retrieval responder (not a model)"

    def __init__(
        self,
        turns: Sequence[HumanTurn],
        *,
        seed: int = 0,
        memory: float = 0.8,
        window: int = 8,
        k1: float = 1.2,
        b: float = 0.1,
    ) -> None:
        if not turns:
            raise ConfigError(f"retrieval responder: {expected('human turns', 'none')}")
        if not 0.0 <= memory <= 1.0 or not 0.0 <= b <= 1.0:
            raise ConfigError(f"memory and b: {expected('numbers in [0, 1]', (memory, b))}")
        self.turns = tuple(turns)
        self.seed, self.memory, self.window = seed, memory, window
        docs = [terms(f"{t.context[-1].text if t.context else ''} {t.response}") for t in turns]
        vocab: dict[str, int] = {}
        rows, cols, vals = [], [], []
        lengths = np.array([len(d) for d in docs], dtype=float)
        avg = max(float(lengths.mean()), 1.0)
        for i, doc in enumerate(docs):
            for term, tf in Counter(doc).items():
                rows.append(i)
                cols.append(vocab.setdefault(term, len(vocab)))
                vals.append(tf * (k1 + 1) / (tf + k1 * (1 - b + b * len(doc) / avg)))
        self.vocab = vocab
        from scipy import sparse  # imported when a responder is built, not by the CLI

        matrix = sparse.csr_matrix((vals, (rows, cols)), shape=(len(docs), len(vocab)))
        df = np.bincount(cols, minlength=len(vocab)).astype(float)
        idf = np.log1p((len(docs) - df + 0.5) / (df + 0.5))
        self.matrix = matrix @ sparse.diags(idf)
        self._served: dict[int, int] = {}

    @classmethod
    def from_corpora(
        cls,
        data_dir: str | Path,
        *,
        max_turns: int = 1500,
        knowledge_turns: int = 4500,
        split_seed: int = 0,
        seed: int = 0,
    ) -> RetrievalResponder:
        """Built from the calibration split only (held-out dialogues never enter the pool).

        ``max_turns`` replies per corpus, but ``knowledge_turns`` from Topical-Chat.
        """
        pool: list[HumanTurn] = []
        for corpus in CORPORA:
            n = knowledge_turns if corpus == "topical_chat" else max_turns
            if n > 0:
                pool += load_turns(
                    data_dir, "calibration", seed=split_seed, max_turns=n, corpora=(corpus,)
                )
        return cls(pool, seed=seed)

    def query(self, dialogue: Dialogue) -> np.ndarray:
        """Query weights: the last turn 1, each earlier turn ``memory`` times the next."""
        weights = np.zeros(len(self.vocab))
        recent = dialogue[-self.window :]
        for age, turn in enumerate(reversed(recent)):
            w = self.memory**age
            for term in terms(turn.text):
                j = self.vocab.get(term)
                if j is not None:
                    weights[j] += w
        return weights

    def rank(self, dialogue: Dialogue) -> list[int]:
        """Indices of stored replies, best first; replies already said in the dialogue skipped."""
        scores = self.matrix @ self.query(dialogue)
        said = {t.text for t in dialogue if t.role == "assistant"}
        key = _digest(f"{self.seed}|" + "\x1f".join(t.text for t in dialogue))
        jitter = np.random.default_rng(key).random(len(scores)) * 1e-9
        order = np.argsort(-(scores + jitter), kind="stable")
        return [int(i) for i in order if self.turns[i].response not in said]

    def propose(self, traj: Trajectory, feedback: Feedback | None, n: int) -> list[Candidate[str]]:
        """The next ``n`` replies for this dialogue (see the module doc on regeneration)."""
        dialogue = as_dialogue(traj)
        key = _digest("\x1f".join(f"{t.role}:{t.text}" for t in dialogue))
        forced = feedback is not None and feedback.kind is FeedbackKind.FORCED
        start = self._served.get(key, 0) if forced else 0
        if not forced:
            self._served.clear()  # a new step: only this dialogue's offset is kept
        self._served[key] = start + n
        picked = self.rank(dialogue)[start : start + n]
        return [Candidate(self.turns[i].response, self.turns[i].response) for i in picked]


def _digest(text: str) -> int:
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")
