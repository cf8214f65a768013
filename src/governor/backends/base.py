"""The backend interface: chat completions and embeddings, every call counted.

A backend implements ``_chat`` (and ``_embed`` where it can); the public :meth:`Backend.chat` and
:meth:`Backend.embed` validate the request, time it, and record it with
:func:`governor.usage.record_llm_call`, whether it succeeds or fails. That is the one place where
LLM calls are counted, so no backend and no constraint can make a hidden one; a backend that
streams (:meth:`Backend.stream_chat`, overridden where a backend can stream: the OpenAI one, in
:mod:`governor.backends.openai_stream`) records each request it makes the same way.

Messages and completions may carry tool calls (:class:`ToolCall` and :class:`Message`, defined in
:mod:`governor.backends.messages`); a backend with ``supports_tools`` also receives the tool
schemas of a request, and a request with tools for any other backend is refused.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np

from governor.backends.messages import MAX_ARGUMENTS_CHARS, ROLES, Message, Role, ToolCall
from governor.errors import BackendError, ConfigError, expected
from governor.jsontext import exact_bytes, is_json
from governor.usage import Usage, llm_call_running, record_llm_call

__all__ = [
    "MAX_ARGUMENTS_CHARS",
    "ROLES",
    "Backend",
    "ChatRequest",
    "ChatResult",
    "Completion",
    "Message",
    "OnDelta",
    "Role",
    "TokenLogprob",
    "ToolCall",
    "as_messages",
    "word_tokens",
]
T = TypeVar("T")

OnDelta = Callable[[str, bool], None]
"""Called by :meth:`Backend.stream_chat` with each new piece of text and whether the reply has
started a tool call."""


@dataclass(frozen=True)
class TokenLogprob:
    """One generated token, its log-probability, and the most likely alternatives."""

    token: str
    logprob: float
    top: tuple[tuple[str, float], ...] = ()


@dataclass(frozen=True, slots=True)
class Completion:
    """One completion: its text ('' when it only calls tools) and its tool calls."""

    text: str
    finish_reason: str | None = None
    logprobs: tuple[TokenLogprob, ...] | None = None
    tool_calls: tuple[ToolCall, ...] = ()


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
    tools: tuple[Mapping[str, Any], ...] = ()  # JSON-safe tool schemas, as given
    tools_json: bytes | None = field(default=None, compare=False, repr=False)
    """``tools`` as the compact JSON text :func:`~governor.jsontext.compact_bytes` writes, when
    it holds them exactly (:func:`~governor.jsontext.exact_bytes`); None otherwise."""


@dataclass(frozen=True, slots=True)
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


def as_tools(
    tools: Sequence[Mapping[str, Any]] | None, backend: Backend
) -> tuple[Mapping[str, Any], ...]:
    """The tool schemas of a request: JSON-safe objects, for a backend that supports tools."""
    return _tools(tools, backend)[0]


def _tools(
    tools: Sequence[Mapping[str, Any]] | None, backend: Backend
) -> tuple[tuple[Mapping[str, Any], ...], bytes | None]:
    """:func:`as_tools`, and their JSON text when it holds them exactly (else None)."""
    given = tuple(tools or ())
    if not given:
        return given, b"[]"
    if not backend.supports_tools:
        raise ConfigError(
            f"{backend.name}: tools: expected none (this backend has no tool calling),"
            f" found {len(given)}"
        )
    if set(map(type, given)) == {dict}:  # the usual case: objects read from JSON
        text = exact_bytes(list(given))  # every schema at once, written as it will be sent
        if text is not None:
            return given, text
        if is_json(list(given)):
            return given, None
    for i, tool in enumerate(given):
        if not (isinstance(tool, Mapping) and is_json(dict(tool))):
            raise ConfigError(f"tools[{i}]: {expected('a JSON-safe tool schema object', tool)}")
    return given, None


class Backend(ABC):
    """A language model reached somehow. Subclasses implement ``_chat`` and maybe ``_embed``."""

    name: str = "backend"
    supports_tools: bool = False
    """Whether ``_chat`` sends tool schemas to the model and reads its tool calls back."""

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
        tools: Sequence[Mapping[str, Any]] | None = None,
    ) -> ChatResult:
        """Complete a conversation ``n`` times. Counted as LLM call(s) even when it fails.
        ``tools`` (OpenAI tool schemas) only for a backend that ``supports_tools``."""
        request = self.chat_request(
            messages,
            n=n,
            temperature=temperature,
            max_tokens=max_tokens,
            logprobs=logprobs,
            top_logprobs=top_logprobs,
            stop=stop,
            tools=tools,
        )
        with llm_call_running():
            result, seconds = self._counted(self._chat, request)
            usage = result.usage.timed(seconds)
            record_llm_call(usage)
        return ChatResult(result.completions, usage, result.model)

    def chat_request(
        self,
        messages: str | Sequence[Message],
        *,
        n: int = 1,
        temperature: float = 0.0,
        max_tokens: int = 256,
        logprobs: bool = False,
        top_logprobs: int = 0,
        stop: Sequence[str] | None = None,
        tools: Sequence[Mapping[str, Any]] | None = None,
    ) -> ChatRequest:
        """The validated request of :meth:`chat`'s arguments (a ConfigError names a bad one)."""
        msgs = as_messages(messages)
        if not 1 <= n <= 128:
            raise ConfigError(f"n: {expected('an integer in [1, 128]', n)}")
        if not 0.0 <= temperature <= 5.0:
            raise ConfigError(f"temperature: {expected('a number in [0, 5]', temperature)}")
        if not 1 <= max_tokens <= 1_000_000:
            raise ConfigError(f"max_tokens: {expected('an integer >= 1', max_tokens)}")
        if not 0 <= top_logprobs <= 20:
            raise ConfigError(f"top_logprobs: {expected('an integer in [0, 20]', top_logprobs)}")
        given, text = _tools(tools, self)
        return ChatRequest(
            msgs,
            n,
            temperature,
            max_tokens,
            logprobs or top_logprobs > 0,
            top_logprobs,
            tuple(stop or ()),
            given,
            text,
        )

    def stream_chat(
        self,
        messages: Sequence[Message],
        *,
        temperature: float,
        max_tokens: int,
        tools: Sequence[Mapping[str, Any]] | None,
        on_delta: OnDelta,
    ) -> Completion:
        """One completion, its text handed to ``on_delta`` as it is generated (with whether the
        reply has started a tool call); tool calls come whole, in the completion. An exception
        raised by ``on_delta`` stops the reading and propagates. This default asks :meth:`chat`
        and hands its completion over as one piece; a backend that can stream overrides it."""
        result = self.chat(
            messages, n=1, temperature=temperature, max_tokens=max_tokens, tools=tools
        )
        completion: Completion = result.completions[0]
        on_delta(completion.text, bool(completion.tool_calls))
        return completion

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """One embedding row per text (float32). Counted as one LLM call."""
        items = list(texts)
        if not items or not all(isinstance(t, str) for t in items):
            raise ConfigError(f"texts: {expected('a non-empty sequence of strings', texts)}")
        with llm_call_running():
            (vectors, usage), seconds = self._counted(self._embed, items)
            record_llm_call(usage.timed(seconds))
        if vectors.ndim != 2 or vectors.shape[0] != len(items):
            raise BackendError(
                f"{self.name}: {expected(f'{len(items)} embedding rows', tuple(vectors.shape))}"
            )
        return vectors

    def _counted(self, call: Callable[..., T], *args: Any) -> tuple[T, float]:
        """``call(*args)`` and its seconds; a failure is recorded here (as the requests it
        made)."""
        start = time.perf_counter()
        try:
            return call(*args), time.perf_counter() - start
        except BackendError as exc:
            calls = getattr(exc, "requests", 1)
            record_llm_call(Usage(calls=calls, seconds=time.perf_counter() - start, failed=1))
            raise
        except Exception as exc:  # a backend bug still fails as a backend error, counted
            record_llm_call(Usage(calls=1, seconds=time.perf_counter() - start, failed=1))
            raise BackendError(f"{self.name}: {type(exc).__name__}: {exc}") from exc

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
