"""Checkpoints of :class:`~governor.safety_values.llm_q.value.LLMQ`: the LoRA adapter and meta.json.

A checkpoint is a folder holding ``adapter/`` (peft ``save_pretrained``) and ``meta.json`` (the
env, the observation model, the base model's path and config hash, the LoRA settings, the task's
parameters and the training info); each is replaced atomically. The base model is not copied, so
a checkpoint names the model it was made for and is refused on any other.

Imports the runtime's checkpoint helpers, the model loader and the task protocol; never
:mod:`~governor.safety_values.llm_q.value` (what is saved is read through :class:`Saved`) nor a world.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Protocol

from governor.errors import ConfigError, expected
from governor.safety_values.checkpoint_io import atomic_write_dir, atomic_write_json
from governor.safety_values.llm_q.model import LLMQSettings, model_folder
from governor.safety_values.llm_q.task import LLMTask

OBS, FORMAT = "llm", 1
ADAPTER, META = "adapter", "meta.json"
KEYS = ("format", "env", "obs", "model_path", "model_config_hash", "settings", "params", "info")


def model_config_hash(model_path: str | Path) -> str:
    """A stable hash of the model's config.json (without the fields that saving rewrites)."""
    path = Path(model_path) / "config.json"
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ConfigError(f"{path}: expected a readable JSON model config, found {exc}") from exc
    if not isinstance(config, dict):
        raise ConfigError(f"{path}: {expected('a JSON object', type(config).__name__)}")
    for volatile in ("transformers_version", "_name_or_path"):
        config.pop(volatile, None)
    return hashlib.sha256(json.dumps(config, sort_keys=True).encode()).hexdigest()[:16]


class Saved(Protocol):
    """What a checkpoint is written from (an :class:`~governor.safety_values.llm_q.value.LLMQ`)."""

    @property
    def model(self) -> Any: ...  # the peft model: its adapter is saved
    @property
    def path(self) -> Path: ...  # the base model's folder
    @property
    def config_hash(self) -> str: ...
    @property
    def settings(self) -> LLMQSettings: ...
    @property
    def task(self) -> LLMTask: ...


def write_checkpoint(llm_q: Saved, directory: str | Path, info: dict[str, Any]) -> Path:
    """Write ``llm_q``'s adapter and meta.json (with ``info``) to ``directory``."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    atomic_write_dir(directory / ADAPTER, llm_q.model.save_pretrained)
    meta = {
        "format": FORMAT,
        "env": llm_q.task.name,
        "obs": OBS,
        "model_path": str(llm_q.path),
        "model_config_hash": llm_q.config_hash,
        "settings": dataclasses.asdict(llm_q.settings),
        "params": dataclasses.asdict(llm_q.task.params),
        "info": info,
    }
    atomic_write_json(directory / META, meta)
    return directory


def read_meta(
    directory: str | Path, fmt: int = FORMAT, keys: Iterable[str] = KEYS
) -> dict[str, Any]:
    """The checkpoint's meta.json, of format ``fmt`` with ``keys`` (the LoRA value's by
    default); a missing or malformed one is a ConfigError."""
    path = Path(directory) / META
    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ConfigError(f"checkpoint: expected a readable {path}, found {exc}") from exc
    if not isinstance(meta, dict) or not set(keys) <= set(meta) or meta.get("format") != fmt:
        raise ConfigError(
            f"checkpoint {path}: {expected(f'format {fmt} with {sorted(keys)}', meta)}"
        )
    return meta


def checked_model_path(
    directory: str | Path,
    meta: dict[str, Any],
    model_path: str | Path | None,
    *,
    env: str,
    obs: str,
    allow_moved: bool,
) -> Path:
    """The model folder to load checkpoint ``directory`` (with ``meta``) on.

    ``model_path`` None is the path it was made for. Refuses a checkpoint made for another env,
    observation model, model config or model path (``allow_moved`` accepts another path holding
    a model with the same config).
    """
    for what, wanted in (("env", env), ("obs", obs)):
        if meta[what] != wanted:
            raise ConfigError(
                f"checkpoint {directory} was made for {what} {meta[what]!r}, "
                f"expected {what} {wanted!r}"
            )
    path = model_folder(model_path if model_path is not None else meta["model_path"])
    if not allow_moved and str(path) != meta["model_path"]:
        raise ConfigError(
            f"checkpoint {directory} was made for the model at {meta['model_path']}, "
            f"expected one for {path} (allow_moved=True accepts a moved copy)"
        )
    found = model_config_hash(path)
    if found != meta["model_config_hash"]:
        raise ConfigError(
            f"checkpoint {directory} was made for a model with config hash "
            f"{meta['model_config_hash']}, found {found} at {path}"
        )
    return path


def load_adapter(model: Any, folder: Path) -> None:
    """Load saved LoRA weights into ``model``, built with the same settings (local files only)."""
    import peft
    from safetensors.torch import load_file

    weights = folder / "adapter_model.safetensors"
    if not weights.is_file():
        raise ConfigError(f"checkpoint adapter: expected {weights}, found no such file")
    wanted = sum(p.requires_grad for p in model.parameters())
    try:
        state = load_file(str(weights), device=str(next(model.parameters()).device))
        result = peft.set_peft_model_state_dict(model, state)
    except (RuntimeError, OSError) as exc:
        raise ConfigError(f"checkpoint adapter {folder} does not fit the model: {exc}") from exc
    unexpected = list(getattr(result, "unexpected_keys", []))
    if unexpected or len(state) != wanted:
        raise ConfigError(
            f"checkpoint adapter {folder}: expected {wanted} LoRA tensors of this model, "
            f"found {len(state)} (not fitting: {unexpected[:3]})"
        )
