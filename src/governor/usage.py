"""LLM call accounting: every call made inside a metered scope is counted.

Backends call :func:`record_llm_call` once per model call (failed calls and retries included),
inside :func:`llm_call_running` while it runs; the observer opens a :func:`metered` scope per
stage, so a policy, a constraint or a feedback writer cannot make a hidden call. A stage given up
on at its deadline while a call of it still runs counts that call as made and ``abandoned``
(its tokens unknown when the step ended). Meters are context variables: nested scopes all see a
call, and threads that carry the context (see :mod:`governor.deadline`) keep counting. Imports
nothing of governor.
"""

from __future__ import annotations

import contextvars
import threading
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Usage:
    """LLM calls and tokens; added up per stage, per step, per episode."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    failed: int = 0
    """Calls that ended in an error (refused by an open circuit included)."""
    abandoned: int = 0
    """Calls still running when their stage was given up on (counted in ``calls``; their tokens
    and seconds are not known to the step)."""

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.calls + other.calls,
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            self.seconds + other.seconds,
            self.failed + other.failed,
            self.abandoned + other.abandoned,
        )

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def timed(self, seconds: float) -> Usage:
        """This usage, its ``seconds`` set to ``seconds``."""
        return Usage(
            self.calls,
            self.prompt_tokens,
            self.completion_tokens,
            seconds,
            self.failed,
            self.abandoned,
        )


class UsageMeter:
    """A thread-safe running total of the LLM calls recorded while it is active: inside the
    ``with`` block it opens (see :func:`metered`)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._total = Usage()
        self._running = 0
        self._tokens: list[contextvars.Token[tuple[UsageMeter, ...]]] = []

    def __enter__(self) -> UsageMeter:
        self._tokens.append(_ACTIVE_METERS.set((*_ACTIVE_METERS.get(), self)))
        return self

    def __exit__(self, *exc_info: object) -> None:
        _ACTIVE_METERS.reset(self._tokens.pop())

    def add(self, usage: Usage, finished: bool = False) -> None:
        """Count ``usage``; ``finished``: it is the record of a call counted as running."""
        with self._lock:
            self._total = self._total + usage
            self._running -= finished

    def started(self) -> None:
        """A call began; it runs until its record is added or it ends without one."""
        with self._lock:
            self._running += 1

    def ended(self) -> None:
        """A call that began ended without a record."""
        with self._lock:
            self._running -= 1

    @property
    def total(self) -> Usage:
        return self._total

    def snapshot(self) -> tuple[Usage, int]:
        """The total so far and the calls begun and not recorded yet, read together."""
        with self._lock:
            return self._total, self._running


_ACTIVE_METERS: contextvars.ContextVar[tuple[UsageMeter, ...]] = contextvars.ContextVar(
    "governor_active_meters", default=()
)


def metered() -> UsageMeter:
    """A new meter: ``with metered() as meter`` counts every LLM call made inside the block
    (nested meters all see the call)."""
    return UsageMeter()


_RUNNING: contextvars.ContextVar[list[bool] | None] = contextvars.ContextVar(
    "governor_llm_call_running", default=None
)


class _CallRunning:
    """The block of :func:`llm_call_running`."""

    __slots__ = ("meters", "pending", "token")
    meters: tuple[UsageMeter, ...]
    pending: list[bool]
    token: contextvars.Token[list[bool] | None]

    def __enter__(self) -> None:
        meters = self.meters = _ACTIVE_METERS.get()
        for meter in meters:
            meter.started()
        self.pending = [True]
        self.token = _RUNNING.set(self.pending)

    def __exit__(self, *exc_info: object) -> None:
        _RUNNING.reset(self.token)
        if self.pending[0]:
            for meter in self.meters:
                meter.ended()


def llm_call_running() -> _CallRunning:
    """``with llm_call_running():`` marks one model call as running in every active meter until
    it is recorded by :func:`record_llm_call` inside the block (or the block ends without a
    record)."""
    return _CallRunning()


def record_llm_call(usage: Usage) -> None:
    """Called by every backend once per model call; adds it to all active meters."""
    pending, finishing = _RUNNING.get(), False
    if pending is not None and pending[0]:
        pending[0], finishing = False, True  # this is the running call's record
    for meter in _ACTIVE_METERS.get():
        meter.add(usage, finishing)
