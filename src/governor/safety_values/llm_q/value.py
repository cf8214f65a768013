"""A safety value on an LLM backbone (ReGuard section 4): token logits read as Q-values.

:class:`LLMQ` is a causal LM from a local folder with LoRA adapters (r 8, alpha 16, q_proj and
v_proj, no dropout: the paper's Tables 5, 9, 10). The adapted model's next-token logit of token a
is Q(z, a); the base model (the same weights with the adapters disabled) gives Q_b(z, a). Only the
tokens of V' = top-p(softmax(Q_b)) are actions (p = 0.9): a token outside V' is never chosen,
never bootstrapped from, and its logit is not a safety value (it was never trained).

The task (:mod:`~governor.safety_values.llm_q.task`; driving: A, B, C, steer right, straight,
left) gives the prompt (its system prompt and the text of a state), answered by one letter. Its
actions are the letters in V', or all letters when top-p keeps none of them. ``q_values`` returns
Q of the letters; a letter outside the set reads :data:`EXCLUDED`, a finite number far below any
margin, so :class:`~governor.safety_values.filter.SafetyFilter` rejects it and
:class:`~governor.safety_values.filter.ValueFallback` never picks it. When the base model is so
sure of one letter that top-p drops the others, the value cannot learn them either: use
``top_p=1.0`` to make every letter an action.

Every forward pass is recorded as an LLM call: each batch through :meth:`LLMQ.logits` (the
values, the action sets, and training's envs and targets) and each token of
:meth:`LLMQ.guided_generate`. The other parts of the package: settings and loading in
:mod:`.model`, V' and value-guided decoding in :mod:`.decode`, checkpoints in :mod:`.checkpoint`,
token transitions and their loss in :mod:`.transitions`, training (and a recipe) in :mod:`.train`,
metrics in :mod:`.evaluate`, what it reads of a task in :mod:`.task`.

Chat prompts pass ``date_string`` to the chat template, so Llama 3's system header carries a
fixed date (the paper's 12 Jul 2025) instead of the day the prompt was built.

Imports the runtime (the hf backend's helpers, usage metering, the package's parts below it), no
world: the task is handed in.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

from governor.backends.base import Message
from governor.backends.hf import chat_prompt, check_dtype
from governor.safety_values.llm_q.checkpoint import (
    ADAPTER,
    OBS,
    checked_model_path,
    load_adapter,
    model_config_hash,
    read_meta,
    write_checkpoint,
)
from governor.safety_values.llm_q.decode import GuidedText, answer_mask, guided_generate
from governor.safety_values.llm_q.model import (
    LLMQSettings,
    TokenIds,
    left_padded,
    load_model,
    model_folder,
    single_token,
    special_ids,
)
from governor.safety_values.llm_q.task import LLMTask, observation_text
from governor.usage import Usage, record_llm_call

EXCLUDED = -1e6  # Q of a letter outside the action set: not an action, below any margin
DATE = "12 Jul 2025"  # the date in the paper's prompts, for chat templates that show one


class LLMQ:
    """Q(z, a) from the logits of a LoRA-adapted causal LM loaded from ``model_path``.

    ``task`` gives the prompts and the answer letters (:mod:`~governor.safety_values.llm_q.task`).
    ``adapter`` is a saved LoRA adapter folder (fresh adapters when None: B = 0, so Q = Q_b).
    ``dtype`` None keeps the saved dtype; ``attn_implementation`` is passed to transformers.
    """

    obs = OBS

    def __init__(
        self,
        model_path: str | Path,
        task: LLMTask,
        *,
        settings: LLMQSettings | None = None,
        adapter: str | Path | None = None,
        device: str = "cpu",
        dtype: str | None = None,
        attn_implementation: str | None = None,
        info: Mapping[str, Any] | None = None,
    ) -> None:
        path = model_folder(model_path)
        check_dtype(dtype)
        self.path, self.settings = path, settings or LLMQSettings()
        self.task, self.info = task, dict(info or {})
        self.config_hash = model_config_hash(path)
        self.device = torch.device(device)
        self.tokenizer, self.model, self._keep = load_model(
            path, self.settings, self.device, dtype, attn_implementation
        )
        if adapter is not None:
            load_adapter(self.model, Path(adapter))
        self.model.eval()
        self.eos_id, self.stop_ids, self.pad_id = special_ids(path, self.tokenizer, self.model)
        self.choice_ids = tuple(single_token(path, self.tokenizer, x) for x in task.letters)
        self.system = task.system_prompt()
        self._last: tuple[str, np.ndarray] | None = None

    @classmethod
    def load(
        cls,
        directory: str | Path,
        model_path: str | Path | None = None,
        *,
        task: LLMTask,
        env: str | None = None,
        obs: str = OBS,
        allow_moved: bool = False,
        device: str = "cpu",
        dtype: str | None = None,
        attn_implementation: str | None = None,
    ) -> LLMQ:
        """Load a checkpoint of ``task`` on ``model_path`` (default: the path it was trained on).

        The task's parameters are those saved in the checkpoint; ``env`` None is the task's name.
        Refuses a checkpoint made for another env, observation model, model config or model path
        (``allow_moved`` accepts another path holding a model with the same config).
        """
        meta, env = read_meta(directory), task.name if env is None else env
        path = checked_model_path(
            directory, meta, model_path, env=env, obs=obs, allow_moved=allow_moved
        )
        return cls(
            path,
            task.with_params(meta["params"]),
            settings=LLMQSettings(**meta["settings"]),
            adapter=Path(directory) / ADAPTER,
            device=device,
            dtype=dtype,
            attn_implementation=attn_implementation,
            info=meta["info"],
        )

    def save(self, directory: str | Path, info: Mapping[str, Any]) -> Path:
        """Write the adapter and meta.json (:mod:`~governor.safety_values.llm_q.checkpoint`)."""
        path = write_checkpoint(self, directory, dict(info))
        self.info = dict(info)
        return path

    @property
    def params(self) -> Any:
        """The task's parameters."""
        return self.task.params

    # ------------------------------------------------------------------ prompts and logits

    def encode(self, prompt: str | Sequence[Message]) -> list[int]:
        """Token ids of a prompt: a string verbatim, messages through the chat template."""
        text, special = (
            (prompt, True)
            if isinstance(prompt, str)
            else chat_prompt(self.tokenizer, prompt, date_string=DATE)
        )
        return list(self.tokenizer(text, add_special_tokens=special)["input_ids"])

    def observation_ids(self, observation: Any) -> list[int]:
        """The task's prompt of an observation: text, a mapping with "text", or with "state"."""
        return self.encode(
            [Message("system", self.system), Message("user", self.text_of(observation))]
        )

    def text_of(self, observation: Any) -> str:
        """The prompt text of an observation (see :func:`.task.observation_text`)."""
        return observation_text(self.task, observation)

    def logits(
        self,
        rows: Sequence[TokenIds],
        *,
        adapted: bool = True,
        lora: Mapping[str, torch.Tensor] | None = None,
    ) -> torch.Tensor:
        """Next-token logits (float32, [len(rows), vocab]) after each row of token ids.

        ``adapted`` False reads the base model (adapters disabled); ``lora`` replaces the adapter
        weights for this call (the target network). Gradients flow unless the caller stops them.
        The pass is recorded as one LLM call (its prompt tokens and forward time).
        """
        ids, mask = left_padded(rows, self.pad_id)
        start = time.perf_counter()
        kwargs = {
            "input_ids": ids.to(self.device),
            "attention_mask": mask.to(self.device),
            "position_ids": (mask.cumsum(-1) - 1).clamp(min=0).to(self.device),
            **self._keep,
        }
        if not adapted:
            with self.model.disable_adapter():
                out = self.model(**kwargs)
        elif lora is not None:
            out = torch.func.functional_call(self.model, dict(lora), args=(), kwargs=kwargs)
        else:
            out = self.model(**kwargs)
        seconds = time.perf_counter() - start
        record_llm_call(Usage(calls=1, prompt_tokens=int(mask.sum()), seconds=seconds))
        return out.logits[:, -1].float()

    def lora_parameters(self) -> dict[str, torch.nn.Parameter]:
        """The trainable adapter weights by name (everything else is frozen)."""
        return {n: p for n, p in self.model.named_parameters() if p.requires_grad}

    # ------------------------------------------------------------------ the safety value

    def q_batch(self, observations: Sequence[Any], batch: int = 16) -> np.ndarray:
        """Q (N, letters) of the answer letters after each observation's prompt (or EXCLUDED)."""
        out = [np.zeros((0, len(self.choice_ids)))]
        for i in range(0, len(observations), batch):
            rows = [self.observation_ids(o) for o in observations[i : i + batch]]
            with torch.inference_mode():
                q = self.logits(rows)[:, list(self.choice_ids)]
                allowed = answer_mask(
                    self.logits(rows, adapted=False), self.settings.top_p, self.choice_ids
                )
            out.append(torch.where(allowed, q, EXCLUDED).double().cpu().numpy())
        return np.concatenate(out)

    def q_values(self, observation: Any) -> np.ndarray:
        """Q (letters,) of one observation, for :class:`~governor.safety_values.filter.SafetyFilter`.

        The last text and its Q are remembered (the weights are taken as fixed once in use): a
        filter and its fallback asking about the same observation cost one evaluation.
        """
        text = self.text_of(observation)
        if self._last is None or self._last[0] != text:
            self._last = (text, self.q_batch([text])[0])
        return self._last[1].copy()

    __call__ = q_values

    def q_states(self, states: np.ndarray, batch: int = 16) -> np.ndarray:
        """Q (N, letters) of the task's states through their text observations."""
        texts = [self.task.describe(s) for s in np.asarray(states, dtype=np.float64)]
        return self.q_batch(texts, batch)

    def guided_generate(
        self,
        prompt: str | Sequence[Message],
        max_tokens: int = 50,
        beta: float = 38.0,
        temperature: float = 1.0,
        seed: int = 0,
    ) -> GuidedText:
        """Value-guided decoding (eq. 4): :func:`~governor.safety_values.llm_q.decode.guided_generate`."""
        return guided_generate(self, prompt, max_tokens, beta, temperature, seed)
