"""The backend interface: chat completions and embeddings, every call counted.

A backend implements ``_chat`` (and ``_embed`` where it can); the public :meth:`Backend.chat` and
:meth:`Backend.embed` validate the request, time it, and record it with
:func:`governor.usage.record_llm_call`, whether it succeeds or fails. That is the one place where
LLM calls are counted, so no backend and no constraint can make a hidden one.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal

import numpy as np

from governor.errors import BackendError, ConfigError, expected
from governor.usage import Usage, record_llm_call

Role = Literal["system", "user", "assistant"]
ROLES: tuple[str, ...] = ("system", "user", "assistant")


@dataclass(frozen=True)
class Message:
    role: Role
    content: str

    def __post_init__(self) -> None:
        if self.role not in ROLES:
            raise ConfigError(f"message role: {expected(' or '.join(ROLES), self.role)}")
        if not isinstance(self.content, str):
            raise ConfigError(
                f"message content: {expected('a string', type(self.content).__name__)}"
            )


@dataclass(frozen=True)
class TokenLogprob:
    """One generated token, its log-probability, and the most likely alternatives."""

    token: str
    logprob: float
    top: tuple[tuple[str, float], ...] = ()


@dataclass(frozen=True)
class Completion:
    text: str
    finish_reason: str | None = None
    logprobs: tuple[TokenLogprob, ...] | None = None


@dataclass(frozen=True)
class ChatRequest:
    """One validated chat request, as a backend receives it."""

    messages: tuple[Message, ...]
    n: int
    temperature: float
    max_tokens: int
    logprobs: bool  # also true when top_logprobs > 0
    top_logprobs: int
    stop: tuple[str, ...]


@dataclass(frozen=True)
class ChatResult:
    """The completions of one request. ``usage.calls`` counts the requests it took (retries too)."""

    completions: tuple[Completion, ...]
    usage: Usage
    model: str

    @property
    def text(self) -> str:
        """The first completion's text."""
        return self.completions[0].text


def as_messages(messages: str | Sequence[Message]) -> tuple[Message, ...]:
    """A bare string is one user message."""
    if isinstance(messages, str):
        return (Message("user", messages),)
    result = tuple(messages)
    if not result or not all(isinstance(m, Message) for m in result):
        raise ConfigError(f"messages: {expected('a non-empty sequence of Message', messages)}")
    return result


class Backend(ABC):
    """A language model reached somehow. Subclasses implement ``_chat`` and maybe ``_embed``."""

    name: str = "backend"

    def chat(
        self,
        messages: str | Sequence[Message],
        *,
        n: int = 1,
        temperature: float = 0.0,
        max_tokens: int = 256,
        logprobs: bool = False,
        top_logprobs: int = 0,
        stop: Sequence[str] | None = None,
    ) -> ChatResult:
        """Complete a conversation ``n`` times. Counted as LLM call(s) even when it fails."""
        msgs = as_messages(messages)
        if not 1 <= n <= 128:
            raise ConfigError(f"n: {expected('an integer in [1, 128]', n)}")
        if not 0.0 <= temperature <= 5.0:
            raise ConfigError(f"temperature: {expected('a number in [0, 5]', temperature)}")
        if not 1 <= max_tokens <= 1_000_000:
            raise ConfigError(f"max_tokens: {expected('an integer >= 1', max_tokens)}")
        if not 0 <= top_logprobs <= 20:
            raise ConfigError(f"top_logprobs: {expected('an integer in [0, 20]', top_logprobs)}")
        start = time.perf_counter()
        try:
            result = self._chat(
                ChatRequest(
                    msgs,
                    n,
                    temperature,
                    max_tokens,
                    logprobs or top_logprobs > 0,
                    top_logprobs,
                    tuple(stop or ()),
                )
            )
        except BackendError as exc:
            calls = getattr(exc, "requests", 1)
            record_llm_call(Usage(calls=calls, seconds=time.perf_counter() - start, failed=1))
            raise
        except Exception as exc:  # a backend bug still fails as a backend error, counted
            record_llm_call(Usage(calls=1, seconds=time.perf_counter() - start, failed=1))
            raise BackendError(f"{self.name}: {type(exc).__name__}: {exc}") from exc
        result = replace(result, usage=replace(result.usage, seconds=time.perf_counter() - start))
        record_llm_call(result.usage)
        return result

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """One embedding row per text (float32). Counted as one LLM call."""
        items = list(texts)
        if not items or not all(isinstance(t, str) for t in items):
            raise ConfigError(f"texts: {expected('a non-empty sequence of strings', texts)}")
        start = time.perf_counter()
        try:
            vectors, usage = self._embed(items)
        except BackendError as exc:
            calls = getattr(exc, "requests", 1)
            record_llm_call(Usage(calls=calls, seconds=time.perf_counter() - start, failed=1))
            raise
        except Exception as exc:  # a backend bug still fails as a backend error, counted
            record_llm_call(Usage(calls=1, seconds=time.perf_counter() - start, failed=1))
            raise BackendError(f"{self.name}: {type(exc).__name__}: {exc}") from exc
        record_llm_call(replace(usage, seconds=time.perf_counter() - start))
        if vectors.ndim != 2 or vectors.shape[0] != len(items):
            raise BackendError(
                f"{self.name}: {expected(f'{len(items)} embedding rows', tuple(vectors.shape))}"
            )
        return vectors

    def check(self) -> None:
        """Raise a BackendError when the backend cannot be used at all. Makes no LLM call."""

    @abstractmethod
    def _chat(self, request: ChatRequest) -> ChatResult:
        """Do the call; ``usage.seconds`` is filled in by :meth:`chat`."""

    def _embed(self, texts: list[str]) -> tuple[np.ndarray, Usage]:
        raise BackendError(f"{self.name}: this backend has no embeddings")


def word_tokens(text: str) -> int:
    """A word-based token estimate, for backends that cannot count tokens."""
    return len(text.split())
