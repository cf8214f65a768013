"""A cheap LLM safety value: a small Q head on the frozen hidden states of a causal LM.

The LoRA value (:mod:`~governor.safety_values.llm_q.value`) backpropagates through the whole model at
every step. :class:`FrozenQ` instead reads each state's prompt once
(:class:`~governor.safety_values.frozen_q.hidden_states.HiddenStates`: the final hidden state at the
last position, cached on disk) and puts a small torch head on it (:class:`QHead`: standardised
input, then linear or an MLP, one output per answer letter), trained by the same reach-avoid
TD targets (:mod:`~governor.safety_values.frozen_q.train_head`). Every letter is an action: there is
no V' here, the base model's logits are never read.

A checkpoint is a folder with ``head.pt`` (the head's state dict) and ``meta.json`` (the env,
the observation model ``llm-head``, the model's path, config hash and :func:`model_hash`, the
head's settings, the task's parameters and the training info). Loading refuses a checkpoint made
for another env, model path (unless ``allow_moved``), model config or model hash.

``q_values(observation)`` makes it the Q of a :class:`~governor.safety_values.filter.SafetyFilter`.
Imports the runtime (checkpoint helpers, the LLM value's checkpoint checks, the task protocol);
no world: the task is handed in.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from governor.config import check_range, option
from governor.errors import ConfigError
from governor.safety_values.checkpoint_io import atomic_torch_save, atomic_write_json
from governor.safety_values.frozen_q.hidden_states import HiddenStates, model_hash
from governor.safety_values.llm_q.checkpoint import (
    checked_model_path,
    model_config_hash,
    read_meta,
)
from governor.safety_values.llm_q.task import LLMTask, observation_text

OBS, FORMAT = "llm-head", 1
HEAD, META = "head.pt", "meta.json"
KEYS = ("format", "env", "obs", "model_path", "model_config_hash", "model_hash", "head", "params")


@dataclasses.dataclass(frozen=True)
class HeadSettings:
    """The Q head on the hidden states: its width and depth, and the model's dtype."""

    hidden: int = option(128, "width of the MLP's hidden layers (0: a linear head)")
    layers: int = option(2, "hidden layers of the MLP (ignored by a linear head)")
    dtype: str | None = option(None, "model dtype for the hidden states; None keeps the saved one")

    def __post_init__(self) -> None:
        check_range("hidden", self.hidden, 0, 65_536)
        check_range("layers", self.layers, 1, 16)


class QHead(nn.Module):
    """Q (N, n_actions) from hidden states: (h - mean) / std, then linear or an MLP."""

    def __init__(self, dim: int, n_actions: int, settings: HeadSettings) -> None:
        super().__init__()
        self.mean: torch.Tensor
        self.std: torch.Tensor
        self.register_buffer("mean", torch.zeros(dim))
        self.register_buffer("std", torch.ones(dim))
        layers: list[nn.Module] = []
        width = dim
        for _ in range(settings.layers if settings.hidden else 0):
            layers += [nn.Linear(width, settings.hidden), nn.ReLU()]
            width = settings.hidden
        self.net = nn.Sequential(*layers, nn.Linear(width, n_actions))

    def standardise_on(self, features: torch.Tensor) -> None:
        """Fix the input scaling to the mean and standard deviation of ``features``."""
        self.mean.copy_(features.mean(dim=0))
        if len(features) > 1:
            self.std.copy_(features.std(dim=0).clamp(min=1e-6))

    def forward(self, features: torch.Tensor) -> torch.Tensor:
        return self.net((features - self.mean) / self.std)


class FrozenQ:
    """Q(s, a) of ``task`` from a :class:`QHead` on the frozen hidden states of a model."""

    obs = OBS

    def __init__(
        self,
        model_path: str | Path,
        task: LLMTask,
        *,
        settings: HeadSettings | None = None,
        features: HiddenStates | None = None,
        cache_dir: str | Path | None = None,
        progress: bool = True,
        info: Mapping[str, Any] | None = None,
    ) -> None:
        self.task, self.settings = task, settings or HeadSettings()
        self.features = features or HiddenStates(
            model_path,
            task.system_prompt(),
            dtype=self.settings.dtype,
            cache_dir=cache_dir,
            progress=progress,
        )
        self.path, self.info = self.features.path, dict(info or {})
        self.head = QHead(self.features.dim, len(task.letters), self.settings)
        self.head.eval()
        self._last: tuple[str, np.ndarray] | None = None

    @property
    def params(self) -> Any:
        """The task's parameters."""
        return self.task.params

    def text_of(self, observation: Any) -> str:
        """The prompt text of an observation: text, a mapping with "text", or with "state"."""
        return observation_text(self.task, observation)

    def q_batch(self, observations: Sequence[Any], batch: int = 16) -> np.ndarray:
        """Q (N, letters) of the observations (``batch`` is unused: the features are cached)."""
        vectors = self.features([self.text_of(o) for o in observations])
        with torch.inference_mode():
            return self.head(torch.from_numpy(vectors)).double().numpy()

    def q_states(self, states: np.ndarray, batch: int = 16) -> np.ndarray:
        """Q (N, letters) of the task's states through their text observations."""
        return self.q_batch([self.task.describe(s) for s in np.asarray(states)], batch)

    def q_values(self, observation: Any) -> np.ndarray:
        """Q (letters,) of one observation, for a :class:`~governor.safety_values.filter.SafetyFilter`."""
        text = self.text_of(observation)
        if self._last is None or self._last[0] != text:
            self._last = (text, self.q_batch([text])[0])
        return self._last[1].copy()

    __call__ = q_values

    def save(self, directory: str | Path, info: Mapping[str, Any]) -> Path:
        """Write ``head.pt`` and ``meta.json`` (with ``info``) to ``directory``."""
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        self.info = dict(info)
        atomic_torch_save(self.head.state_dict(), directory / HEAD)
        meta = {
            "format": FORMAT,
            "env": self.task.name,
            "obs": OBS,
            "model_path": str(self.path),
            "model_config_hash": model_config_hash(self.path),
            "model_hash": self.features.hash,
            "head": dataclasses.asdict(self.settings),
            "params": dataclasses.asdict(self.task.params),
            "info": self.info,
        }
        atomic_write_json(directory / META, meta)
        self._last = None
        return directory

    @classmethod
    def load(
        cls,
        directory: str | Path,
        model_path: str | Path | None = None,
        *,
        task: LLMTask,
        env: str | None = None,
        allow_moved: bool = False,
        cache_dir: str | Path | None = None,
        progress: bool = True,
    ) -> FrozenQ:
        """Load a checkpoint of ``task`` on ``model_path`` (default: the path it was trained on)."""
        meta = read_meta(directory, FORMAT, KEYS)
        env = task.name if env is None else env
        path = checked_model_path(
            directory, meta, model_path, env=env, obs=OBS, allow_moved=allow_moved
        )
        found = model_hash(path)
        if found != meta["model_hash"]:
            raise ConfigError(
                f"checkpoint {directory} was made for a model with hash {meta['model_hash']}, "
                f"found {found} at {path}"
            )
        q = cls(
            path,
            task.with_params(meta["params"]),
            settings=HeadSettings(**meta["head"]),
            cache_dir=cache_dir,
            progress=progress,
            info=meta.get("info"),
        )
        try:
            state = torch.load(Path(directory) / HEAD, map_location="cpu", weights_only=True)
            q.head.load_state_dict(state)
        except (OSError, RuntimeError) as exc:
            raise ConfigError(
                f"checkpoint {directory}/{HEAD} does not fit the head: {exc}"
            ) from exc
        return q


def is_head_checkpoint(directory: str | Path) -> bool:
    """Whether ``directory`` holds a frozen-head checkpoint (a head.pt beside its meta.json)."""
    return (Path(directory) / HEAD).is_file()
