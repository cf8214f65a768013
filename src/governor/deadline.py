"""Running one stage of a step under a deadline, with a cap on the stages left running.

A stage with a time limit runs in a daemon thread that carries the caller's context (so its LLM
calls are still counted). Python cannot kill a thread: a stage that overruns is abandoned, its
result ignored, and it keeps running until it returns. At most :data:`MAX_ABANDONED` such threads
may be alive at once; past that, a timed stage is refused at once with a
:class:`~governor.errors.GuardTimeout` (the step falls back, fail closed) instead of piling up
threads. :func:`abandoned_stages` says how many are still running. Imports the error tree only.
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from governor.errors import GuardTimeout

T = TypeVar("T")

MAX_ABANDONED = 8
"""The most overrunning stage threads that may still be running at once."""

_abandoned: set[threading.Thread] = set()
_lock = threading.Lock()


def abandoned_stages() -> int:
    """How many stage threads that overran their deadline are still running."""
    with _lock:
        for thread in [t for t in _abandoned if not t.is_alive()]:
            _abandoned.discard(thread)
        return len(_abandoned)


def call_with_deadline(fn: Callable[[], T], timeout_s: float | None, what: str) -> T:
    """Run ``fn`` and return its result, or raise :class:`GuardTimeout` after ``timeout_s``.

    ``None`` runs ``fn`` in this thread with no limit (an explicit choice). Exceptions of ``fn``,
    interrupts included, are raised here.
    """
    if timeout_s is None:
        return fn()
    if timeout_s <= 0:
        raise GuardTimeout(f"{what}: no time left in the step's budget")
    running = abandoned_stages()
    if running >= MAX_ABANDONED:
        raise GuardTimeout(
            f"{what}: not started: {running} earlier stages that overran are still running"
            f" (at most {MAX_ABANDONED})"
        )
    box: dict[str, Any] = {}
    ctx = contextvars.copy_context()

    def run() -> None:
        try:
            box["value"] = ctx.run(fn)
        except BaseException as exc:  # re-raised in the caller's thread
            box["error"] = exc

    worker = threading.Thread(target=run, name=f"governor-{what}", daemon=True)
    worker.start()
    worker.join(timeout_s)
    if worker.is_alive():
        with _lock:
            _abandoned.add(worker)
        raise GuardTimeout(
            f"{what}: expected an answer within {timeout_s:.3g} s, found none (abandoned;"
            f" {abandoned_stages()} overrunning stage(s) still running)"
        )
    if "error" in box:
        raise box["error"]
    return box["value"]
