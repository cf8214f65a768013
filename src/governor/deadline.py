"""Running one stage of a step under a deadline, with a cap on the stages left running.

A stage with a time limit runs on a worker thread of a shared pool, in the caller's context (so
its LLM calls are still counted), while the caller waits at most the limit. Workers are reused
from stage to stage; the pool starts one when every worker is busy, and a worker left idle for
:data:`IDLE_S` seconds ends. Python cannot kill a thread: a stage that overruns is abandoned, its
result ignored, and its worker keeps running it until it returns (then serves again). At most
:data:`MAX_ABANDONED` such stages may be running at once; past that, a timed stage is refused at
once with a :class:`~governor.errors.GuardTimeout` (the step falls back, fail closed) instead of
piling up threads; the stage's own code can read its deadline (:func:`stage_deadline`) to stop
early. :func:`abandoned_stages` says how many are still running. At exit the
process waits up to :data:`EXIT_WAIT_S` seconds for them: a thread still inside native code (a
model's forward pass) while the interpreter shuts down aborts the whole process. A forked child
starts with no workers. Imports the error tree and :mod:`governor.on_loop`.
"""

from __future__ import annotations

import atexit
import contextvars
import os
import queue
import threading
import time
from collections.abc import Callable
from typing import Any, Generic, TypeVar, cast

from governor.errors import GuardTimeout
from governor.on_loop import on_loop

T = TypeVar("T")

MAX_ABANDONED = 8
"""The most overrunning stages that may still be running at once."""

IDLE_S = 60.0
"""Seconds an idle worker waits for a stage before it ends."""

EXIT_WAIT_S = 60.0
"""Seconds the exiting process waits for abandoned stages to return."""

_DEADLINE: contextvars.ContextVar[float | None] = contextvars.ContextVar(
    "governor_stage_deadline", default=None
)

_lock = threading.Lock()
_overrunning: set[_Stage[Any]] = set()  # the abandoned stages still running


def stage_deadline() -> float | None:
    """When (:func:`time.monotonic`) the timed stage running in this context stops being waited
    for: the earliest deadline of the enclosing timed stages; None outside any. A blocking call
    inside a stage (a local model's generation) reads it to stop work no one will wait for."""
    return _DEADLINE.get()


def abandoned_stages() -> int:
    """How many stages that overran their deadline are still running."""
    return len(_overrunning)


class _Stage(Generic[T]):
    """One call of a stage: what to run, in which context, and how it ended."""

    def __init__(self, fn: Callable[[], T], what: str) -> None:
        self.fn, self.what = fn, what
        self.context = contextvars.copy_context()
        self.value: T | None = None
        self.error: BaseException | None = None
        self.finished = False
        self.done = threading.Lock()  # held until the stage has finished
        self.done.acquire()

    def run(self) -> None:
        try:
            self.value = self.context.run(self.fn)
        except BaseException as exc:  # re-raised in the caller's thread
            self.error = exc
        with _lock:
            self.finished = True
            _overrunning.discard(self)
        self.done.release()

    def abandon(self) -> bool:
        """Mark the stage abandoned unless it has just finished; whether it was abandoned."""
        with _lock:
            if self.finished:
                return False
            _overrunning.add(self)
            return True


class _Workers:
    """Daemon threads that take stages from one queue; one is started when none is idle.

    ``idle`` counts the workers waiting for a stage that no queued stage is meant for, so a
    stage put on the queue always has a worker waiting for it or starting.
    """

    def __init__(self) -> None:
        self._stages: queue.SimpleQueue[_Stage[Any]] = queue.SimpleQueue()
        self._idle = 0
        self._lock = threading.Lock()

    def submit(self, stage: _Stage[Any]) -> None:
        with self._lock:
            start = self._idle == 0
            if not start:
                self._idle -= 1
        if start:
            threading.Thread(target=self._work, name="governor-stage", daemon=True).start()
        self._stages.put(stage)

    def _work(self) -> None:
        me = threading.current_thread()
        while True:
            try:
                stage = self._stages.get(timeout=IDLE_S)
            except queue.Empty:
                with self._lock:
                    if self._idle > 0:  # no queued stage is meant for this worker: end
                        self._idle -= 1
                        return
                continue
            me.name = f"governor-{stage.what}"
            stage.run()
            del stage
            me.name = "governor-stage"
            with self._lock:
                self._idle += 1


_workers = _Workers()


def _after_fork() -> None:
    """A forked child has none of the parent's threads: start with no workers and none abandoned."""
    global _workers, _lock, _overrunning
    _workers, _lock, _overrunning = _Workers(), threading.Lock(), set()


os.register_at_fork(after_in_child=_after_fork)


def wait_for_abandoned(limit_s: float = EXIT_WAIT_S) -> int:
    """Wait up to ``limit_s`` seconds for the abandoned stages to return; how many still run."""
    end = time.monotonic() + limit_s
    with _lock:
        running = list(_overrunning)
    for stage in running:
        if stage.done.acquire(timeout=max(0.0, end - time.monotonic())):
            stage.done.release()
    return abandoned_stages()


atexit.register(wait_for_abandoned)


def _ends(timeout_s: float) -> tuple[float, float]:
    """A stage's own end ``timeout_s`` from now, and the deadline it runs under (the earlier of
    that and the enclosing stages')."""
    end, outer = time.monotonic() + timeout_s, _DEADLINE.get()
    return end, end if outer is None else min(outer, end)


def _ended_at_deadline(what: str, timeout_s: float, exc: BaseException) -> GuardTimeout:
    """The overrun of a stage that failed because its time ran out (``exc``: how it failed)."""
    return GuardTimeout(
        f"{what}: expected an answer within {timeout_s:.3g} s, found none (it ended at"
        f" the deadline: {type(exc).__name__}: {exc})"
    )


def _in_place(fn: Callable[[], T], timeout_s: float, what: str) -> T:
    """``fn`` run here under its deadline (on the event loop: see :func:`call_with_deadline`)."""
    end, deadline = _ends(timeout_s)
    token = _DEADLINE.set(deadline)
    try:
        value = fn()
    except Exception as exc:
        if time.monotonic() >= end:  # it failed because its time ran out: an overrun
            raise _ended_at_deadline(what, timeout_s, exc) from exc
        raise
    finally:
        _DEADLINE.reset(token)
    late = time.monotonic() - end
    if late > 0:
        raise GuardTimeout(
            f"{what}: expected an answer within {timeout_s:.3g} s, found one {late:.3g} s late"
        )
    return value


def call_with_deadline(fn: Callable[[], T], timeout_s: float | None, what: str) -> T:
    """Run ``fn`` and return its result, or raise :class:`GuardTimeout` after ``timeout_s``.

    ``None`` runs ``fn`` in this thread with no limit (an explicit choice). Exceptions of ``fn``,
    interrupts included, are raised here. Code running on the event loop
    (:func:`~governor.on_loop.on_loop`) runs ``fn`` in place, with its deadline set: what it
    awaits is bounded by the deadline itself, and a stage that ends past the deadline is a
    :class:`GuardTimeout` as if abandoned at it.
    """
    if timeout_s is None:
        return fn()
    if timeout_s <= 0:
        raise GuardTimeout(f"{what}: no time left in the step's budget")
    if on_loop():
        return _in_place(fn, timeout_s, what)
    running = abandoned_stages()
    if running >= MAX_ABANDONED:
        raise GuardTimeout(
            f"{what}: not started: {running} earlier stages that overran are still running"
            f" (at most {MAX_ABANDONED})"
        )
    stage = _Stage(fn, what)
    end, deadline = _ends(timeout_s)
    stage.context.run(_DEADLINE.set, deadline)
    _workers.submit(stage)
    if not stage.done.acquire(timeout=timeout_s) and stage.abandon():
        raise GuardTimeout(
            f"{what}: expected an answer within {timeout_s:.3g} s, found none (abandoned;"
            f" {abandoned_stages()} overrunning stage(s) still running)"
        )
    if stage.error is not None:
        if time.monotonic() >= end:  # it failed because its time ran out: an overrun too
            raise _ended_at_deadline(what, timeout_s, stage.error) from stage.error
        raise stage.error
    return cast(T, stage.value)
