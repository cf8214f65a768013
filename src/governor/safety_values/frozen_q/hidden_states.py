"""Frozen hidden states of a causal LM: the features of :mod:`~governor.safety_values.frozen_q.head`.

:class:`HiddenStates` loads a model from a local folder (no adapters, no gradients) and reads the
final hidden state (after the last norm) at the last position of a task's prompt: the system
prompt and a state's text through the chat template, as :class:`~governor.safety_values.llm_q.value.LLMQ`
builds it. Each prompt costs one forward pass, so the vectors are cached on disk: one file per
model, dtype and system prompt (``<cache>/hidden/<model hash>-<dtype>-<prompt hash>.npz``, keyed inside by the
hash of the state's text), rewritten atomically after every batch, with a progress bar over the
prompts not cached yet. Every forward pass (a batch of prompts) is recorded as an LLM call.

:func:`model_hash` names the weights, not just the config: the config hash and, per weights
file, its name, size and its first and last MiB (reading 1 GB of weights to hash it would cost
seconds at every load).

Imports the runtime (the hf backend's helpers, the local cache root, usage metering, the model
folder check); no world.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from tqdm import tqdm

from governor.backends.base import Message
from governor.backends.hf import chat_prompt, check_dtype, dtype_kwargs
from governor.backends.local_model import cache_root
from governor.errors import ConfigError
from governor.safety_values.checkpoint_io import atomic_write
from governor.safety_values.llm_q.checkpoint import model_config_hash
from governor.safety_values.llm_q.model import left_padded, model_folder
from governor.usage import Usage, record_llm_call

DATE = "12 Jul 2025"  # the date of the paper's prompts (as LLMQ passes to chat templates)
_MIB = 1 << 20


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:20]


def model_hash(model_path: str | Path) -> str:
    """A hash of the model at ``model_path``: its config and its weights files (module doc)."""
    path = model_folder(model_path)
    h = hashlib.sha256(model_config_hash(path).encode())
    files = sorted(path.glob("*.safetensors")) + sorted(path.glob("*.bin"))
    if not files:
        raise ConfigError(f"{path}: expected *.safetensors or *.bin weights, found none")
    for f in files:
        size = f.stat().st_size
        h.update(f"{f.name}:{size}".encode())
        with f.open("rb") as fh:
            h.update(fh.read(_MIB))
            fh.seek(max(0, size - _MIB))
            h.update(fh.read(_MIB))
    return h.hexdigest()[:16]


class HiddenStates:
    """The final hidden state at the last prompt position, per state text, cached on disk.

    ``system`` is the task's system prompt; ``cache_dir`` None is ``<cache root>/hidden``;
    ``dtype`` None keeps the saved dtype.
    """

    def __init__(
        self,
        model_path: str | Path,
        system: str,
        *,
        dtype: str | None = None,
        cache_dir: str | Path | None = None,
        batch: int = 4,
        progress: bool = True,
    ) -> None:
        import transformers

        check_dtype(dtype)
        self.path, self.system = model_folder(model_path), system
        self.hash, self.batch, self.progress = model_hash(self.path), batch, progress
        transformers.utils.logging.disable_progress_bar()
        try:
            self.tokenizer = transformers.AutoTokenizer.from_pretrained(
                self.path, local_files_only=True
            )
            model: Any = transformers.AutoModelForCausalLM.from_pretrained(
                self.path, local_files_only=True, **dtype_kwargs(torch, transformers, dtype)
            )
        except Exception as exc:  # transformers raises many kinds; all mean the folder is unusable
            raise ConfigError(f"cannot load a model from {self.path}: {exc}") from exc
        self.body = model.base_model.eval()  # the decoder without the LM head
        self.dim = int(model.config.get_text_config().hidden_size)
        pad = self.tokenizer.pad_token_id
        self.pad_id = int(pad if pad is not None else self.tokenizer.eos_token_id or 0)
        root = Path(cache_dir) if cache_dir is not None else cache_root() / "hidden"
        self.file = root / f"{self.hash}-{dtype or 'saved'}-{_digest(system)}.npz"
        self.vectors = self._read()
        self.forward_passes = 0  # prompts this object ran through the model

    def _read(self) -> dict[str, np.ndarray]:
        if not self.file.is_file():
            return {}
        try:
            with np.load(self.file) as data:
                keys, vectors = data["keys"], data["vectors"]
        except (OSError, KeyError, ValueError) as exc:
            raise ConfigError(f"hidden-state cache {self.file}: unreadable ({exc})") from exc
        if vectors.shape != (len(keys), self.dim):
            raise ConfigError(
                f"hidden-state cache {self.file}: expected ({len(keys)}, {self.dim}) vectors, "
                f"found {vectors.shape}"
            )
        return dict(zip(keys.tolist(), vectors, strict=True))

    def _write(self) -> None:
        keys = np.array(list(self.vectors), dtype=str)
        vectors = np.stack(list(self.vectors.values())).astype(np.float32)
        self.file.parent.mkdir(parents=True, exist_ok=True)

        def save(tmp: Path) -> None:
            with tmp.open("wb") as fh:
                np.savez(fh, keys=keys, vectors=vectors)

        atomic_write(self.file, save)

    def prompt_ids(self, text: str) -> list[int]:
        """Token ids of the chat prompt (the system prompt, then ``text`` as the user)."""
        messages = [Message("system", self.system), Message("user", text)]
        prompt, special = chat_prompt(self.tokenizer, messages, date_string=DATE)
        return list(self.tokenizer(prompt, add_special_tokens=special)["input_ids"])

    def _forward(self, texts: Sequence[str]) -> np.ndarray:
        ids, mask = left_padded([self.prompt_ids(t) for t in texts], self.pad_id)
        start = time.perf_counter()
        with torch.inference_mode():
            out = self.body(
                input_ids=ids, attention_mask=mask, position_ids=(mask.cumsum(-1) - 1).clamp(min=0)
            )
        seconds = time.perf_counter() - start
        record_llm_call(Usage(1, int(mask.sum()), 0, seconds))
        self.forward_passes += len(texts)
        return out.last_hidden_state[:, -1].float().numpy()

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        """The vectors (N, dim) of ``texts``; the missing ones are computed and cached."""
        keys = [_digest(t) for t in texts]
        todo = list(
            dict.fromkeys(t for t, k in zip(texts, keys, strict=True) if k not in self.vectors)
        )
        bar = tqdm(
            total=len(todo),
            desc="hidden states",
            unit="prompt",
            disable=not self.progress or not todo,
        )
        with bar:
            for i in range(0, len(todo), self.batch):
                chunk = todo[i : i + self.batch]
                for text, vector in zip(chunk, self._forward(chunk), strict=True):
                    self.vectors[_digest(text)] = vector
                self._write()
                bar.update(len(chunk))
        if not keys:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([self.vectors[k] for k in keys]).astype(np.float32)
