"""ONNX Runtime for the local MiniLM encoder: the graph exported once, cached, checked, run.

The transformer of the ``[embed]`` extra is exported with torch's ONNX exporter, with mean
pooling and normalisation inside the graph (inputs ``input_ids`` and ``attention_mask``, dynamic
batch and sequence axes; outputs the unit sentence vector and the unit token vectors). The file
is kept in the cache folder (``$GOVERNOR_CACHE_DIR`` or ``~/.cache/governor``) under a key made
from the weights' SHA-256, the model's config and :data:`GRAPH_VERSION`, written atomically
(temporary file, then rename) with a ``.sha256`` note of its own digest beside it. A cached file
whose digest does not match its note, or that ONNX Runtime refuses, is built again, never
trusted. An int8 variant (``onnxruntime.quantization.quantize_dynamic``) is derived from the
fp32 file the same way. Sessions run on one intra-op thread.

This module imports only numpy and the standard library at load time; onnxruntime, onnx and
torch are imported when a file is built or run.
"""

from __future__ import annotations

import hashlib
import logging
import os
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

GRAPH_VERSION = "1"  # bump when the exported graph changes
OPSET = 17


def cache_dir() -> Path:
    """The cache folder: ``$GOVERNOR_CACHE_DIR`` or ``~/.cache/governor``."""
    return Path(os.environ.get("GOVERNOR_CACHE_DIR") or Path.home() / ".cache" / "governor")


def cache_key(weights_sha256: str, config: bytes) -> str:
    """The key of an exported graph: the weights, the model's config and the graph version."""
    digest = hashlib.sha256(f"{weights_sha256}:{GRAPH_VERSION}:".encode() + config)
    return digest.hexdigest()[:16]


def file_sha256(path: Path) -> str:
    """The SHA-256 of a file's bytes."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def trusted(path: Path) -> bool:
    """Whether ``path`` exists and matches the digest noted beside it."""
    note = path.with_name(path.name + ".sha256")
    try:
        return path.is_file() and note.read_text().strip() == file_sha256(path)
    except OSError:
        return False


def cached(path: Path, build: Callable[[Path], None]) -> Path:
    """``path`` if trusted, else ``build(tmp)`` written atomically with its digest note."""
    if trusted(path):
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        build(tmp)
        note = path.with_name(path.name + ".sha256")
        note_tmp = note.with_name(f"{note.name}.{os.getpid()}.tmp")
        note_tmp.write_text(file_sha256(tmp) + "\n")
        tmp.replace(path)
        note_tmp.replace(note)
    finally:
        for leftover in path.parent.glob(f"{path.name}*.{os.getpid()}.tmp"):
            leftover.unlink(missing_ok=True)
    return path


def _graph(model: Any) -> Any:
    """The transformer with mean pooling and normalisation, as one torch module."""
    import torch

    class Pooled(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.bert = model

        def forward(self, input_ids: Any, attention_mask: Any) -> tuple[Any, Any]:
            h = self.bert.embeddings(
                input_ids=input_ids, token_type_ids=torch.zeros_like(input_ids)
            )
            mask = attention_mask.to(h.dtype)
            # the additive mask built here, not by transformers' helpers (they branch on values)
            extended = (1.0 - mask[:, None, None, :]) * torch.finfo(h.dtype).min
            states = self.bert.encoder(h, attention_mask=extended).last_hidden_state
            pooled = (states * mask.unsqueeze(-1)).sum(1) / mask.sum(1, keepdim=True).clamp(min=1)
            unit = torch.nn.functional.normalize
            return unit(pooled, dim=1), unit(states, dim=2)

    return Pooled().eval()


def export(model: Any, tokenizer: Any, out: Path) -> None:
    """Write the pooled transformer ``model`` as an ONNX graph to ``out``."""
    import torch

    graph = _graph(model)
    sample = tokenizer(["a short example", "a"], padding=True, return_tensors="pt")
    axes = {"input_ids": {0: "batch", 1: "tokens"}, "attention_mask": {0: "batch", 1: "tokens"}}
    axes |= {"pooled": {0: "batch"}, "token_vectors": {0: "batch", 1: "tokens"}}
    with warnings.catch_warnings(), torch.inference_mode():
        # the TorchScript exporter announces its own deprecation; the graph it writes is checked
        warnings.filterwarnings(
            "ignore", "You are using the legacy TorchScript", DeprecationWarning
        )
        warnings.filterwarnings("ignore", "The feature will be removed", DeprecationWarning)
        torch.onnx.export(
            graph,
            (sample["input_ids"], sample["attention_mask"]),
            str(out),
            input_names=["input_ids", "attention_mask"],
            output_names=["pooled", "token_vectors"],
            dynamic_axes=axes,
            opset_version=OPSET,
            dynamo=False,
        )
    model.eval()  # the exporter restores the wrapper's mode, which is training


class _QuietPreprocessHint(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return "pre-processing before quantization" not in record.getMessage()


def quantize(source: Path, out: Path) -> None:
    """Write the dynamically int8-quantised ``source`` graph to ``out``."""
    from onnxruntime.quantization import QuantType, quantize_dynamic  # type: ignore[import-untyped]

    hint = _QuietPreprocessHint()
    logging.getLogger().addFilter(hint)
    try:
        quantize_dynamic(str(source), str(out), weight_type=QuantType.QInt8)
    finally:
        logging.getLogger().removeFilter(hint)


class OnnxEncoder:
    """An ONNX Runtime session of the pooled encoder, one intra-op thread."""

    def __init__(self, path: Path) -> None:
        import onnxruntime  # type: ignore[import-untyped]

        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.log_severity_level = 3  # errors only: no third-party notes in our output
        self.path = path
        self.session = onnxruntime.InferenceSession(
            str(path), options, providers=["CPUExecutionProvider"]
        )

    def __call__(self, ids: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(unit sentence vectors (batch, dim), unit token vectors (batch, tokens, dim))."""
        feeds = {"input_ids": ids.astype(np.int64), "attention_mask": mask.astype(np.int64)}
        pooled, tokens = self.session.run(None, feeds)
        return np.asarray(pooled), np.asarray(tokens)


def onnx_available() -> bool:
    """Whether onnxruntime and onnx are installed (without importing them)."""
    from importlib.util import find_spec

    return all(find_spec(m) is not None for m in ("onnxruntime", "onnx"))
