"""The LoRA-adapted causal LM behind :class:`~governor.safety_values.llm_q.value.LLMQ`: settings, loading.

Local files only: a folder without a model, and whatever transformers or peft raise about one,
is a ConfigError. Imports torch, the hf backend's helpers and the config checks; no world.
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

from governor.backends.hf import check_model_folder, dtype_kwargs, transformers_at_least
from governor.config import check_range, option
from governor.errors import BackendUnavailable, ConfigError

TokenIds = Sequence[int] | np.ndarray


@dataclasses.dataclass(frozen=True)
class LLMQSettings:
    """What a checkpoint is made of besides the base model (defaults: the paper's tables)."""

    top_p: float = option(0.9, "actions are the top-p tokens of the base model's softmax")
    lora_r: int = option(8, "LoRA rank")
    lora_alpha: int = option(16, "LoRA alpha")
    lora_dropout: float = option(0.0, "LoRA dropout")
    target_modules: tuple[str, ...] = option(("q_proj", "v_proj"), "modules LoRA adapts")

    def __post_init__(self) -> None:
        check_range("top_p", self.top_p, 1e-9, 1.0)
        check_range("lora_r", self.lora_r, 1, 4096)
        check_range("lora_alpha", self.lora_alpha, 1e-9, 1e6)
        check_range("lora_dropout", self.lora_dropout, 0.0, 0.99)
        object.__setattr__(self, "target_modules", tuple(self.target_modules))


def model_folder(model_path: str | Path) -> Path:
    """The resolved ``model_path``: a folder with config.json and weights, else a ConfigError."""
    path = Path(model_path).expanduser().resolve()
    try:
        check_model_folder(path)
    except BackendUnavailable as exc:
        raise ConfigError(f"model_path: {exc}") from exc
    return path


def load_model(
    path: Path, settings: LLMQSettings, device: torch.device, dtype: str | None, attn: str | None
) -> tuple[Any, Any, dict[str, int]]:
    """Tokenizer, LoRA-wrapped model, and the kwargs that keep only the last position's logits.

    ``dtype`` None keeps the saved dtype; ``attn`` (None: the default) goes to transformers.
    """
    try:
        import peft
        import transformers
    except ImportError as exc:
        raise ConfigError(
            f"an LLM safety value needs transformers and peft ({exc.name} is missing); "
            "install them with: pip install -e '.[hf]' in the governor checkout"
        ) from exc
    transformers.utils.logging.disable_progress_bar()  # no third-party bar in our output
    kwargs = dtype_kwargs(torch, transformers, dtype)
    if attn is not None:
        kwargs["attn_implementation"] = attn
    try:
        tokenizer = transformers.AutoTokenizer.from_pretrained(path, local_files_only=True)
        base: Any = transformers.AutoModelForCausalLM.from_pretrained(
            path, local_files_only=True, **kwargs
        )
        base = base.to(device)
    except Exception as exc:  # transformers raises many kinds; all mean the folder is unusable
        raise ConfigError(f"cannot load a model from {path}: {type(exc).__name__}: {exc}") from exc
    config = peft.LoraConfig(
        r=settings.lora_r,
        lora_alpha=settings.lora_alpha,
        lora_dropout=settings.lora_dropout,
        target_modules=list(settings.target_modules),
        bias="none",
        task_type="CAUSAL_LM",
    )
    with warnings.catch_warnings():  # peft asks transformers a question it has deprecated
        warnings.filterwarnings("ignore", ".*is_gradient_checkpointing", FutureWarning)
        try:
            model = peft.get_peft_model(base, config)
        except ValueError as exc:
            raise ConfigError(f"LoRA target_modules {settings.target_modules}: {exc}") from exc
    keep = {"logits_to_keep": 1} if transformers_at_least(transformers, 4, 50) else {}
    return tokenizer, model, keep


def special_ids(path: Path, tokenizer: Any, model: Any) -> tuple[int, frozenset[int], int]:
    """EOS (the tokenizer's, else the model's smallest), every token that stops, and padding."""
    eos = model.generation_config.eos_token_id
    stops = {int(t) for t in (eos if isinstance(eos, list) else [eos]) if t is not None}
    eos_id = tokenizer.eos_token_id
    if eos_id is None and not stops:
        raise ConfigError(f"{path}: expected a tokenizer or model with an EOS token, found none")
    eos_id = int(eos_id) if eos_id is not None else min(stops)
    pad = tokenizer.pad_token_id
    return eos_id, frozenset(stops | {eos_id}), int(pad if pad is not None else eos_id)


def single_token(path: Path, tokenizer: Any, text: str) -> int:
    """The one token id of an answer ``text``; an answer of several tokens is a ConfigError."""
    ids = tokenizer(text, add_special_tokens=False)["input_ids"]
    if len(ids) != 1:
        raise ConfigError(f"{path}: expected the answer {text!r} to be one token, found {ids}")
    return int(ids[0])


def left_padded(rows: Sequence[TokenIds], pad_id: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Token ids and attention mask ([len(rows), longest]) of ``rows``, padded on the left."""
    width = max(len(r) for r in rows)
    ids = torch.full((len(rows), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    for i, row in enumerate(rows):  # left padding: every row ends at the last column
        ids[i, width - len(row) :] = torch.as_tensor(list(row), dtype=torch.long)
        mask[i, width - len(row) :] = 1
    return ids, mask
