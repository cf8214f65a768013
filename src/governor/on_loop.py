"""Running the guard's synchronous code on the event loop's thread, its I/O awaited there.

The guard's runtime is synchronous: a step proposes, judges, commits and saves in one call
stack. A service that runs each step on a worker thread pays, per request, for the hand-offs
between threads and for the threads' contention for the interpreter lock (on a 2-core machine,
about as much CPU as the step's own work). :func:`run_on_loop` runs such a call in a greenlet
on the loop's thread instead: the code runs unchanged until it reaches I/O written to be
awaited (:func:`await_here`: the plain-http upstream client, a retry's back-off), where the
greenlet hands the awaitable to the event loop and is resumed with its result (or its
exception), so other requests go on meanwhile. Code that may block any other way (a model run
in-process, a network store, an embedding model) must not run so: the guard decides per
policy whether every stage of its step is fit (:func:`governor.guard.facade.Guard` ``on_loop``),
and runs it on its worker threads otherwise. The greenlet runs in a copy of the caller's
context, so context variables (LLM-call counting, a stage's deadline) work as on a thread. A
greenlet whose call ended serves the next one (a new greenlet costs several times the switches
of a call); it holds nothing of a call once that ended. Needs the ``greenlet`` package (in the ``[serve]`` extra): :func:`available` says whether it is
installed. Imports only the standard library and greenlet.
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar, cast

try:
    import greenlet as _greenlet
except ImportError:  # pragma: no cover - the [serve] extra installs it
    _greenlet = None

T = TypeVar("T")


def available() -> bool:
    """Whether code can run on the loop (the ``greenlet`` package is installed)."""
    return _greenlet is not None


IDLE_RUNNERS = 256
"""The most runners each thread keeps waiting for a call once theirs ended (a new greenlet costs
several times the switches of a call)."""

_END = object()
"""What a runner hands its driver when its call has ended (the end is in its ``ended``)."""

_idle = threading.local()
"""Each thread's runners waiting for a call (a greenlet switches within its own thread only)."""

if _greenlet is not None:

    class _OnLoop(_greenlet.greenlet):
        """A greenlet :func:`run_on_loop` drives: its ``parent`` awaits what it hands over. It
        runs the calls it is given (``call``) one after another, each in a context of its own,
        and hands :data:`_END` when one has ended, its value or exception in ``ended``; between
        calls it holds nothing of them."""

        def __init__(self) -> None:
            super().__init__(self._serve)
            self.call: tuple[Callable[..., Any], tuple[Any, ...]] | None = None
            self.ended: tuple[Any, BaseException | None] | None = None

        def _serve(self) -> None:
            while True:
                assert self.call is not None
                fn, args = self.call
                self.call = None
                try:
                    self.ended = (fn(*args), None)
                except _greenlet.GreenletExit:  # the runner itself is being discarded
                    raise
                except BaseException as exc:  # raised by the driver, to run_on_loop's caller
                    self.ended = (None, exc)
                del fn, args
                self.parent.switch(_END)


def on_loop() -> bool:
    """Whether the calling code runs in :func:`run_on_loop` (so may :func:`await_here`)."""
    return _greenlet is not None and isinstance(_greenlet.getcurrent(), _OnLoop)


def await_here(awaitable: Awaitable[T]) -> T:
    """The result of ``awaitable``, awaited by the event loop that drives this code: the calling
    code is suspended meanwhile, other tasks run. Only inside :func:`run_on_loop`
    (:func:`on_loop`); a RuntimeError elsewhere."""
    current = None if _greenlet is None else _greenlet.getcurrent()
    if not isinstance(current, _OnLoop):
        if hasattr(awaitable, "close"):  # a coroutine never awaited: no warning about it
            awaitable.close()
        raise RuntimeError("await_here: expected to run inside run_on_loop, found another caller")
    return cast(T, current.parent.switch(awaitable))


def sleep(seconds: float) -> None:
    """Pause the calling code: awaited on the loop (other tasks run meanwhile) inside
    :func:`run_on_loop`, slept elsewhere."""
    if on_loop():
        await_here(asyncio.sleep(seconds))
    else:
        time.sleep(seconds)


def blocking(fn: Callable[..., T], *args: Any) -> T:
    """``fn(*args)``, which may wait: on a worker thread, awaited, inside :func:`run_on_loop`
    (the loop goes on meanwhile), in a copy of the calling code's context (its stage deadline,
    its call counting); called in place elsewhere."""
    if on_loop():
        # copied here: asyncio.to_thread would copy the context of the task awaiting it (the
        # caller of run_on_loop), not the one this code runs in
        context = contextvars.copy_context()
        return await_here(asyncio.to_thread(context.run, fn, *args))
    return fn(*args)


async def run_on_loop(fn: Callable[..., T], *args: Any) -> T:
    """``fn(*args)`` run on this event loop's thread, in a copy of the current context; what it
    hands to :func:`await_here` is awaited here. An exception of ``fn`` is raised here; one of
    an awaited awaitable (a cancellation included) is raised inside ``fn`` where it awaited."""
    if _greenlet is None:
        raise RuntimeError("run_on_loop: expected the greenlet package ([serve] extra), found none")
    idle: list[_OnLoop] | None = getattr(_idle, "runners", None)
    if idle is None:
        idle = _idle.runners = []
    runner = idle.pop() if idle else _OnLoop()
    runner.parent = _greenlet.getcurrent()
    runner.gr_context = contextvars.copy_context()
    runner.call = (fn, args)
    handed = runner.switch()
    while handed is not _END:
        if runner.dead:  # (only a runner discarded mid-call ends so)
            raise RuntimeError("run_on_loop: expected the call to end, found its runner gone")
        try:
            value = await handed
        except BaseException as exc:  # into the code that awaited it (it may handle it)
            handed = runner.throw(exc)
        else:
            handed = runner.switch(value)
    assert runner.ended is not None
    value, error = runner.ended
    runner.ended = runner.gr_context = None  # (the call's context variables are not kept)
    if len(idle) < IDLE_RUNNERS:
        idle.append(runner)
    if error is not None:
        raise error
    return cast(T, value)
