"""Running one stage of a step under a deadline.

Imports the error tree only.
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from governor.errors import GuardTimeout

T = TypeVar("T")


def call_with_deadline(fn: Callable[[], T], timeout_s: float | None, what: str) -> T:
    """Run ``fn`` and return its result, or raise :class:`GuardTimeout` after ``timeout_s``.

    With a timeout the call runs in a daemon thread carrying this context (so its LLM calls are
    still counted); a call that overruns is abandoned, not killed, and its result is ignored.
    """
    if timeout_s is None:
        return fn()
    if timeout_s <= 0:
        raise GuardTimeout(f"{what}: no time left in the step's budget")
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
        raise GuardTimeout(f"{what}: expected an answer within {timeout_s:.3g} s, found none")
    if "error" in box:
        raise box["error"]
    return box["value"]
