"""LLM call accounting: every call made inside a metered scope is counted.

Backends call :func:`record_llm_call` once per model call (failed calls and retries included);
the observer opens a :func:`metered` scope per stage, so a policy, a constraint or a feedback
writer cannot make a hidden call. Meters are context variables: nested scopes all see a call,
and threads that carry the context (see :mod:`governor.deadline`) keep counting. Imports nothing
of governor.
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass


@dataclass(frozen=True)
class Usage:
    """LLM calls and tokens; added up per stage, per step, per episode."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    failed: int = 0
    """Calls that ended in an error (refused by an open circuit included)."""

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.calls + other.calls,
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            self.seconds + other.seconds,
            self.failed + other.failed,
        )

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


class UsageMeter:
    """A thread-safe running total of the LLM calls recorded while it is active."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._total = Usage()

    def add(self, usage: Usage) -> None:
        with self._lock:
            self._total = self._total + usage

    @property
    def total(self) -> Usage:
        return self._total


_ACTIVE_METERS: contextvars.ContextVar[tuple[UsageMeter, ...]] = contextvars.ContextVar(
    "governor_active_meters", default=()
)


@contextmanager
def metered() -> Iterator[UsageMeter]:
    """Count every LLM call made inside the block (nested meters all see the call)."""
    meter = UsageMeter()
    token = _ACTIVE_METERS.set((*_ACTIVE_METERS.get(), meter))
    try:
        yield meter
    finally:
        _ACTIVE_METERS.reset(token)


def record_llm_call(usage: Usage) -> None:
    """Called by every backend once per model call; adds it to all active meters."""
    for meter in _ACTIVE_METERS.get():
        meter.add(usage)
