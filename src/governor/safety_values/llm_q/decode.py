"""The action set V' of an LLM safety value, and value-guided decoding over it (ReGuard eq. 4).

V' = top-p(softmax(Q_b)) is read from the base model (adapters disabled), never from Q: a token
outside it is not an action. Value-guided decoding samples each token from
softmax((Q_b + beta Q) / T) over V': beta = 0 is top-p sampling from the base model; a large
beta follows argmax over V' of Q.

Imports torch, the message type, the config checks and usage metering; never
:mod:`~governor.safety_values.llm_q.value` (a decoder is read through :class:`Decoder`) nor a world.
"""

from __future__ import annotations

import dataclasses
import inspect
import time
from collections.abc import Sequence
from typing import Any, Protocol

import torch

from governor.backends.base import Message
from governor.config import check_range
from governor.safety_values.llm_q.model import LLMQSettings
from governor.usage import Usage, record_llm_call


def top_p_mask(logits: torch.Tensor, p: float) -> torch.Tensor:
    """V' per row: the fewest most likely tokens of softmax(``logits``) whose mass reaches p."""
    if p >= 1.0:
        return torch.ones_like(logits, dtype=torch.bool)
    probs = torch.softmax(logits.float(), dim=-1)
    sorted_probs, order = probs.sort(dim=-1, descending=True, stable=True)
    keep = (sorted_probs.cumsum(dim=-1) - sorted_probs) < p  # the mass before a token is < p
    return torch.zeros_like(keep).scatter(-1, order, keep)


def answer_mask(base_logits: torch.Tensor, p: float, choices: Sequence[int]) -> torch.Tensor:
    """The answer actions per row: the ``choices`` tokens in V', or all of them if none is."""
    inside = top_p_mask(base_logits, p)[:, list(choices)]
    return inside | ~inside.any(dim=1, keepdim=True)


@dataclasses.dataclass(frozen=True)
class GuidedText:
    """A value-guided generation: its text, its token ids, and whether it ended with EOS."""

    text: str
    tokens: tuple[int, ...]
    stopped: bool


class Decoder(Protocol):
    """What value-guided decoding reads (an :class:`~governor.safety_values.llm_q.value.LLMQ`)."""

    @property
    def model(self) -> Any: ...  # the peft model: adapters on for Q, disabled for Q_b
    @property
    def tokenizer(self) -> Any: ...
    @property
    def device(self) -> torch.device: ...
    @property
    def settings(self) -> LLMQSettings: ...
    @property
    def stop_ids(self) -> frozenset[int]: ...

    def encode(self, prompt: str | Sequence[Message]) -> list[int]: ...


def guided_generate(
    llm_q: Decoder,
    prompt: str | Sequence[Message],
    max_tokens: int = 50,
    beta: float = 38.0,
    temperature: float = 1.0,
    seed: int = 0,
) -> GuidedText:
    """Sample up to ``max_tokens`` tokens from softmax((Q_b + beta Q) / T) over V' (eq. 4).

    Stops at EOS; ``temperature`` 0 takes the argmax. Table 10: beta 38, T 1, K 50. Each step
    is two forward passes (base and adapted, each with its own KV cache), recorded as LLM calls.
    """
    check_range("max_tokens", max_tokens, 1, 1e6)
    check_range("temperature", temperature, 0.0, 1e6)
    model, device = llm_q.model, llm_q.device
    ids = llm_q.encode(prompt)
    generator = torch.Generator(device=device).manual_seed(seed)
    caches: list[Any] = [None, None]
    new, out, stopped = torch.tensor([ids], device=device), [], False
    start = time.perf_counter()
    with torch.inference_mode():
        for _ in range(max_tokens):
            base, caches[0] = _step(model, new, caches[0], adapted=False)
            q, caches[1] = _step(model, new, caches[1], adapted=True)
            blended = (base + beta * q).masked_fill(
                ~top_p_mask(base, llm_q.settings.top_p), -torch.inf
            )
            if temperature == 0.0:
                token = int(blended.argmax())
            else:
                probs = torch.softmax(blended / temperature, dim=-1)
                token = int(torch.multinomial(probs, 1, generator=generator))
            if token in llm_q.stop_ids:
                stopped = True
                break
            out.append(token)
            new = torch.tensor([[token]], device=device)
    steps = len(out) + stopped
    record_llm_call(Usage(2 * steps, 2 * len(ids), 2 * len(out), time.perf_counter() - start))
    text = llm_q.tokenizer.decode(out, skip_special_tokens=True)
    return GuidedText(text, tuple(out), stopped)


def _step(model: Any, new: torch.Tensor, cache: Any, *, adapted: bool) -> tuple[torch.Tensor, Any]:
    """The next-token logits after ``new`` (float32) and the grown KV cache."""
    key = _cache_keyword(model)
    if adapted:
        out = model(input_ids=new, use_cache=True, **{key: cache})
    else:
        with model.disable_adapter():
            out = model(input_ids=new, use_cache=True, **{key: cache})
    return out.logits[0, -1].float(), getattr(out, key)


def _cache_keyword(model: Any) -> str:
    """The forward argument (and output field) of the KV cache: ``cache`` in transformers 5.2x and
    later, ``past_key_values`` before."""
    forward = model.get_base_model().forward if hasattr(model, "get_base_model") else model.forward
    return "cache" if "cache" in inspect.signature(forward).parameters else "past_key_values"
