"""A scripted backend: it replays given replies. It is not a model and never says it is one.

Used by tests and offline runs at the boundary where a model would be. Replies are consumed in
order; a reply may be a string, a ``Completion`` (to give its finish reason: ``length`` for a
reply cut off at the token limit), an exception to raise, or a function of the messages.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from threading import Lock

import numpy as np

from governor.backends.base import (
    Backend,
    ChatRequest,
    ChatResult,
    Completion,
    Message,
    word_tokens,
)
from governor.errors import BackendError
from governor.usage import Usage

Reply = str | Completion | BaseException | Callable[[tuple[Message, ...]], str]


class ScriptedBackend(Backend):
    """Answers with ``replies`` in order; raises a BackendError once they run out."""

    def __init__(self, replies: Sequence[Reply], *, name: str = "scripted", embedding_dim: int = 8):
        self.name = name
        self._replies = list(replies)
        self._lock = Lock()
        self.embedding_dim = embedding_dim
        self.requests: list[tuple[Message, ...]] = []  # what it was asked, for assertions

    @property
    def remaining(self) -> int:
        return len(self._replies)

    def _next(self, messages: tuple[Message, ...]) -> str | Completion:
        with self._lock:
            if not self._replies:
                raise BackendError(f"{self.name}: expected another scripted reply, found none left")
            reply = self._replies.pop(0)
        if isinstance(reply, BaseException):
            raise reply
        return reply(messages) if callable(reply) else reply

    def _chat(self, request: ChatRequest) -> ChatResult:
        messages, n = request.messages, request.n
        self.requests.append(messages)
        replies = [self._next(messages) for _ in range(n)]
        done = [r if isinstance(r, Completion) else Completion(r, "stop") for r in replies]
        prompt = sum(word_tokens(m.content) for m in messages)
        spent = sum(word_tokens(c.text) for c in done)
        usage = Usage(calls=1, prompt_tokens=prompt, completion_tokens=spent)
        return ChatResult(tuple(done), usage, self.name)

    def _embed(self, texts: list[str]) -> tuple[np.ndarray, Usage]:
        """Deterministic pseudo-embeddings from a hash of each text (for plumbing tests only)."""
        rows = [_rng(t).standard_normal(self.embedding_dim) for t in texts]
        return np.asarray(rows, dtype=np.float32), Usage(
            calls=1, prompt_tokens=sum(map(word_tokens, texts))
        )


def _rng(text: str) -> np.random.Generator:
    return np.random.default_rng(int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big"))
