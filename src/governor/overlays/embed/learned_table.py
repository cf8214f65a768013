"""A static embedding learned in context: a table whose piece means reproduce MiniLM's sentences.

The distilled table of :mod:`governor.overlays.embed.static` runs each word piece through the
transformer alone, so a piece never sees the words it is used with. This table is learned from
the transformer in context instead: the shipped human turns of the calibration split of each
corpus (:func:`~governor.overlays.corpora.split_of`; never the held-out dialogues, on which
``governor bench embed-speed`` measures the AUC) are encoded once by the local all-MiniLM-L6-v2
(at most :data:`TEXTS` texts, the same share per corpus; a corpus with fewer turns leaves its
share to the others), and the table ``E`` solves the ridge regression

    min ||A E - T||^2 + RIDGE ||E - P||^2

where row ``t`` of ``A`` averages text ``t``'s word pieces, ``T`` holds the transformer's unit
sentence vectors and the prior ``P`` is each piece's mean unit contextual output over its
occurrences (blended, for rarely seen pieces, with the distilled table: pieces the texts never
use keep their distilled direction). It is solved by conjugate gradients, every column at once.

The table is built on first use (about 2 to 3 minutes on one thread, with a progress bar) and
cached in the cache folder under a key made from the weights' SHA-256, :data:`RECIPE` and the
SHA-256 of every corpus file read, written atomically with a digest note beside it (a torn or
foreign file is built again, never used). :class:`LearnedEmbed` is a
:class:`~governor.overlays.embed.static.StaticEmbed` whose ``tokens`` (the points coherence
compares) is the text's one vector: without its context a piece's vector says little, and on
TIAGE's pairs the whole-text vector ranks topic shifts better than the pieces (docs/overlays.md
gives the figures, and those of a mixture of both, slightly better and slower).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from governor.errors import ConfigError, expected
from governor.overlays.corpora import CORPORA, corpus_files, corpus_path, load_dialogues, split_of
from governor.overlays.embed import onnx_graph
from governor.overlays.embed.minilm import MAX_TOKENS, MODEL_SHA256, LocalEmbed, torch_embed
from governor.overlays.embed.static import StaticEmbed, static_embed

RECIPE = "1"  # bump when the texts chosen, the objective or its constants change
TEXTS = 20_000  # training texts at most (about 4.5 ms each to encode on one thread)
BATCH = 64  # texts per forward pass while encoding
RIDGE = 1e-2  # pull toward the prior
ITERATIONS = 40  # conjugate-gradient steps
Progress = Callable[[Sequence[Any], str], Iterable[Any]]  # items, what is done -> the items


class LearnedEmbed(StaticEmbed):
    """Texts to unit vectors by look-up in the learned table; ``tokens`` is the text's vector."""

    method = "all-MiniLM-L6-v2 static (learned in context)"

    def tokens(self, text: str) -> np.ndarray:
        """The text's unit vector as the one point coherence compares (zero without pieces)."""
        return self([text])


def training_texts(data_dir: Path, limit: int = TEXTS) -> list[str]:
    """Distinct turns of the calibration split, at most ``limit``, the same share per corpus."""
    per_corpus = []
    for corpus in CORPORA:
        turns = (
            text
            for dialogue, _, texts, _ in load_dialogues(data_dir, corpus)
            if split_of(corpus, dialogue) == "calibration"
            for text in texts
        )
        per_corpus.append(list(dict.fromkeys(turns)))
    out: list[str] = []
    left = len(per_corpus)
    for distinct in sorted(per_corpus, key=len):  # a small corpus leaves its share to the others
        out += distinct[: (limit - len(out)) // left]
        left -= 1
    return list(dict.fromkeys(out))


def data_key(data_dir: Path, limit: int = TEXTS) -> str:
    """The cache key: the weights, the recipe, the number of texts and every corpus file's bytes."""
    digest = hashlib.sha256(f"{MODEL_SHA256}:{RECIPE}:{limit}".encode())
    for corpus in CORPORA:
        for name in corpus_files(corpus):
            path = corpus_path(data_dir, name)
            if not path.is_file():
                raise ConfigError(f"{corpus}: {expected(f'the file {path} (or .gz)', 'none')}")
            digest.update(f":{name}={onnx_graph.file_sha256(path)}".encode())
    return digest.hexdigest()[:16]


def encode(
    model: LocalEmbed, texts: Sequence[str], progress: Progress
) -> tuple[list[np.ndarray], np.ndarray, np.ndarray, np.ndarray]:
    """(word pieces per text, unit sentence vectors, sum of unit contextual vectors per piece,
    occurrences per piece), the texts run through ``model`` in batches of similar length."""
    ids = model.tokenizer(list(texts), truncation=True, max_length=MAX_TOKENS)["input_ids"]
    size, dim = int(model.model.config.vocab_size), int(model.model.config.hidden_size)
    sentences = np.zeros((len(texts), dim), dtype=np.float32)
    sums, counts = np.zeros((size, dim), dtype=np.float32), np.zeros(size, dtype=np.int64)
    order = sorted(range(len(texts)), key=lambda i: len(ids[i]))
    batches = [order[s : s + BATCH] for s in range(0, len(order), BATCH)]
    for batch in progress(batches, "encoding the training texts"):
        width = max(len(ids[i]) for i in batch)
        x = np.full((len(batch), width), model.tokenizer.pad_token_id or 0, dtype=np.int64)
        mask = np.zeros_like(x)
        for row, i in enumerate(batch):
            x[row, : len(ids[i])], mask[row, : len(ids[i])] = ids[i], 1
        pooled, tokens = model._forward(x, mask)
        sentences[batch] = pooled
        for row, i in enumerate(batch):
            inner = np.asarray(ids[i][1:-1], dtype=np.int64)  # without [CLS] and [SEP]
            np.add.at(sums, inner, tokens[row, 1 : len(ids[i]) - 1])
            np.add.at(counts, inner, 1)
    return [np.asarray(p[1:-1], dtype=np.int64) for p in ids], sentences, sums, counts


def prior(sums: np.ndarray, counts: np.ndarray, distilled: np.ndarray) -> np.ndarray:
    """Unit rows: each piece's mean contextual vector, blended with its distilled vector by
    ``n / (n + 1)`` for ``n`` occurrences (an unseen piece keeps the distilled one)."""
    seen = (counts / (counts + 1.0))[:, None]
    mixed = seen * _unit(sums) + (1 - seen) * _unit(distilled)
    return _unit(mixed)


def solve(
    pieces: Sequence[np.ndarray],
    targets: np.ndarray,
    start: np.ndarray,
    progress: Progress,
) -> np.ndarray:
    """The table minimising ``||A E - targets||^2 + RIDGE ||E - start||^2`` (module docstring),
    by :data:`ITERATIONS` conjugate-gradient steps on all columns at once, from ``start``."""
    from scipy import sparse

    rows = np.repeat(np.arange(len(pieces)), [len(p) for p in pieces])
    cols = np.concatenate([*pieces, np.zeros(0, dtype=np.int64)])
    vals = np.concatenate([np.full(len(p), 1.0 / len(p)) for p in pieces if len(p)] + [[]])
    a = sparse.csr_matrix((vals, (rows, cols)), shape=(len(pieces), len(start)))
    at = a.T.tocsr()

    def normal(x: np.ndarray) -> np.ndarray:
        return at @ (a @ x) + RIDGE * x

    x = start.astype(np.float64)
    r = at @ targets.astype(np.float64) + RIDGE * x - normal(x)
    p, rs = r.copy(), (r * r).sum(0)
    for _ in progress(range(ITERATIONS), "fitting the table"):
        ap = normal(p)
        alpha = rs / np.maximum((p * ap).sum(0), 1e-30)
        x += p * alpha
        r -= ap * alpha
        rs_new = (r * r).sum(0)
        p, rs = r + p * (rs_new / np.maximum(rs, 1e-30)), rs_new
    return x.astype(np.float32)


def build(data_dir: Path, out: Path, *, limit: int = TEXTS, progress: bool = True) -> None:
    """Learn the table from the corpora in ``data_dir`` and write it to ``out`` (float16)."""
    model = torch_embed()
    show = _progress if progress else _silent
    texts = training_texts(data_dir, limit)
    pieces, sentences, sums, counts = encode(model, texts, show)
    table = solve(pieces, sentences, prior(sums, counts, static_embed().table), show)
    with open(out, "wb") as f:
        np.save(f, table.astype(np.float16))


def cache_file(data_dir: Path, limit: int = TEXTS) -> Path:
    """Where the table learned from ``data_dir`` is kept."""
    return onnx_graph.cache_dir() / f"minilm-learned-{data_key(data_dir, limit)}.npy"


def load(data_dir: Path, *, limit: int = TEXTS, progress: bool = True) -> LearnedEmbed:
    """The learned embedding: read from the cache, or built now and cached."""
    model = torch_embed()
    size = (int(model.model.config.vocab_size), int(model.model.config.hidden_size))
    path = cache_file(data_dir, limit)
    for _ in range(2):
        onnx_graph.cached(path, lambda out: build(data_dir, out, limit=limit, progress=progress))
        try:
            table = np.load(path)
        except (OSError, ValueError):
            table = None
        if table is not None and table.shape == size and np.isfinite(table).all():
            return LearnedEmbed(table, model.tokenizer)
        path.with_name(path.name + ".sha256").unlink(missing_ok=True)  # foreign: build again
    wanted = f"a {size[0]} x {size[1]} table of finite numbers"
    raise ConfigError(f"{path}: {expected(wanted, 'another file, twice')}")


@lru_cache(maxsize=1)
def learned_embed() -> LearnedEmbed:
    """The shared learned embedding (the corpora of the shared data folder)."""
    from governor.data import shared_data_dir

    return load(shared_data_dir() / "conversations")


def _unit(x: np.ndarray) -> np.ndarray:
    return x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)


def _progress(items: Sequence[Any], what: str) -> Iterable[Any]:
    from rich.console import Console
    from rich.progress import track

    return track(items, description=what, console=Console(stderr=True), transient=True)


def _silent(items: Sequence[Any], what: str) -> Iterable[Any]:
    return items
