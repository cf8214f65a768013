"""A static embedding distilled from the local all-MiniLM-L6-v2: one vector per vocabulary token.

Each of the model's 30,522 word pieces is run through the shipped transformer alone
(``[CLS] piece [SEP]``) and its output vector is kept: a table computed once from the verified
weights (about half a minute on one thread, nothing downloaded) and stored in the cache folder
(``$GOVERNOR_CACHE_DIR`` or ``~/.cache/governor``) under the weights' SHA-256, as float16. A text
is then its word pieces looked up in the table: no forward pass, a few microseconds per text.

:class:`StaticEmbed` is an ``Embed`` (texts to unit vectors: the mean of the pieces) with
``tokens`` (the unit vectors of the pieces, without punctuation and stop words, which carry no
topic without their context), so coherence and assistance use it as they use
:class:`~governor.overlays.embed.minilm.LocalEmbed`. It ranks TIAGE topic shifts less well than the
transformer (``governor bench embed-speed`` measures both); it is the fast option, not a drop-in
replacement.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from governor.overlays.embed.minilm import MAX_TOKENS, MODEL_SHA256, LocalEmbed, torch_embed
from governor.overlays.features.text import STOPWORDS

BATCH = 2048  # vocabulary pieces per forward pass while distilling
MEMO = 65536  # texts whose word pieces are remembered


class StaticEmbed:
    """Texts to unit vectors by table look-up (see the module docstring)."""

    method = "all-MiniLM-L6-v2 static (distilled)"

    def __init__(self, table: np.ndarray, tokenizer: Any) -> None:
        self.table = np.asarray(table, dtype=np.float32)
        norms = np.linalg.norm(self.table, axis=1, keepdims=True)
        self.unit = self.table / np.maximum(norms, 1e-12)
        self.tokenizer = tokenizer
        self._ids: dict[str, np.ndarray] = {}
        vocab = tokenizer.convert_ids_to_tokens(list(range(len(self.table))))
        self.topical = np.array(
            [any(c.isalnum() for c in p) and p.lower() not in STOPWORDS for p in vocab]
        )

    def ids(self, text: str) -> np.ndarray:
        """The text's word pieces (at most MAX_TOKENS), memoised per text."""
        found = self._ids.get(text)
        if found is None:
            pieces = self.tokenizer(
                text, add_special_tokens=False, truncation=True, max_length=MAX_TOKENS
            )["input_ids"]
            found = np.asarray(pieces, dtype=int)
            if len(self._ids) >= MEMO:
                self._ids.clear()
            self._ids[text] = found
        return found

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        """One unit vector per text (a zero row for a text without pieces)."""
        rows = []
        for text in texts:
            ids = self.ids(text)
            v = self.table[ids].mean(0) if len(ids) else np.zeros(self.table.shape[1])
            rows.append(v / max(float(np.linalg.norm(v)), 1e-12))
        return np.stack(rows).astype(float)

    def tokens(self, text: str) -> np.ndarray:
        """Unit vectors of the topical pieces (all pieces if none is; one zero row if none)."""
        ids = self.ids(text)
        kept = ids[self.topical[ids]] if len(ids) else ids
        chosen = kept if len(kept) else ids
        if not len(chosen):
            return np.zeros((1, self.table.shape[1]))
        return self.unit[chosen].astype(float)


def distil(model: LocalEmbed) -> np.ndarray:
    """The output vector of every vocabulary piece run through ``model`` alone."""
    torch = model._torch
    tok = model.tokenizer
    size = int(model.model.config.vocab_size)
    out = np.zeros((size, int(model.model.config.hidden_size)), dtype=np.float32)
    with torch.inference_mode():
        for start in range(0, size, BATCH):
            ids = torch.arange(start, min(size, start + BATCH))
            cls, sep = (
                torch.full_like(ids, tok.cls_token_id),
                torch.full_like(ids, tok.sep_token_id),
            )
            x = torch.stack([cls, ids, sep], 1)
            states = model.model(input_ids=x, attention_mask=torch.ones_like(x)).last_hidden_state
            out[start : start + len(ids)] = states[:, 1].numpy()
    return out


def cache_file() -> Path:
    """Where the distilled table is kept."""
    root = os.environ.get("GOVERNOR_CACHE_DIR") or Path.home() / ".cache" / "governor"
    return Path(root) / f"minilm-static-{MODEL_SHA256[:16]}.npy"


@lru_cache(maxsize=1)
def static_embed() -> StaticEmbed:
    """The shared static embedding, distilled on first use and then read from the cache."""
    model = torch_embed()
    path = cache_file()
    table = None
    if path.is_file():
        try:
            table = np.load(path)
        except (OSError, ValueError):
            table = None  # a torn or foreign file: distil again
    size = (int(model.model.config.vocab_size), int(model.model.config.hidden_size))
    if table is None or table.shape != size:
        table = distil(model)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(f".{os.getpid()}.tmp.npy")
            np.save(tmp, table.astype(np.float16))
            tmp.replace(path)
        except OSError:
            pass  # an unwritable cache only means distilling again next time
    return StaticEmbed(table, model.tokenizer)
