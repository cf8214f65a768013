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
of a call); it holds nothing of a call once that ended.

:func:`finish_on_loop` runs a guard's step so: the step is never cancelled with its caller (a
step cut off between its model call and its save would leave the session behind its own
trajectory), yet runs in the caller's own task. A task of its own would cost each request two
more turns of the loop (its start, and handing its outcome back), and on a busy loop each turn
waits behind every callback ready before it: at 32 requests in flight on two cores, about
10 ms of the median request. The step's hot await, its upstream answer on a kept connection, is
a :class:`Carried` future: a caller cancelled while awaiting one is woken cancelled at once,
and a task of its own takes the step over from that future on. Anything else a step awaits is
awaited by such a task from the start.

Needs the ``greenlet`` package (in the ``[serve]`` extra): :func:`available` says whether it
is installed. Imports only the standard library and greenlet.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import threading
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar, cast

try:
    import greenlet as _greenlet
except ImportError:  # pragma: no cover - the [serve] extra installs it
    _greenlet = None

T = TypeVar("T")

_log = logging.getLogger(__name__)


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


def polled(attempt: Callable[[], bool], deadline: float) -> bool:
    """Whether ``attempt()`` succeeded before ``deadline`` (a ``time.monotonic()`` value): tried
    at once, then again after pauses of 0.5 ms doubling up to 20 ms, each :func:`sleep`-ed
    (awaited on the loop inside :func:`run_on_loop`, slept elsewhere), never past ``deadline``."""
    pause = 0.0005
    while not attempt():
        if time.monotonic() + pause > deadline:
            return False
        sleep(pause)
        pause = min(pause * 2, 0.02)
    return True


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
    runner = _runner(fn, args)
    return await _drive(runner, runner.switch())


async def finish_on_loop(ended: Callable[[], object], fn: Callable[..., T], *args: Any) -> T:
    """``fn(*args)`` as :func:`run_on_loop` runs it, except that the call is never cancelled
    with its caller, and ``ended()`` is called once it has ended, wherever it ended.

    The call is driven from the caller's own task for as long as it awaits only
    :class:`Carried` futures (an upstream answer on a kept connection): no task of its own, so
    the caller wakes in the turn of the loop the answer wakes it in, and the call ends in the
    caller's turn. A caller cancelled meanwhile is cancelled at once, the future is not: a task
    of its own awaits it and drives the call to its end. Anything else the call awaits (a new
    connection, a retry's pause, a worker thread) is awaited by such a task from the start, the
    caller awaiting its outcome (a cancelled caller stops awaiting it, the call goes on)."""
    own = True  # whether this task drives the call (else a task of its own does, and ends it)
    try:
        runner = _runner(fn, args)
        handed = runner.switch()
        while handed is not _END:
            if runner.dead:  # (only a runner discarded mid-call ends so)
                raise RuntimeError("run_on_loop: expected the call to end, found its runner gone")
            if not isinstance(handed, Carried) or handed.carrier is not None or handed.carried:
                # (a Carried future another call carries is awaited through a link: a cancel
                # of its awaiting task would otherwise be taken for that call's caller's)
                own = False
                if isinstance(handed, Carried):
                    handed = _linked(handed)
                return await _elsewhere(runner, handed, ended)
            handed.carrier = (runner, ended)
            try:
                value = await handed
            except BaseException as exc:
                handed.carrier = None
                if handed.carried:  # the caller was cancelled: the call goes on elsewhere
                    own = False
                    raise
                answered = handed.done() and not handed.cancelled()
                if isinstance(exc, asyncio.CancelledError) and answered:
                    own = False  # cancelled as the answer came: finished with that answer
                    _to_end_in_task(runner, handed, ended)
                    raise
                handed = runner.throw(exc)
            else:
                handed.carrier = None
                handed = runner.switch(value)
        return _result(runner)
    finally:
        if own:
            ended()


class Carried(asyncio.Future[Any]):
    """A future that code run by :func:`finish_on_loop` may hand to :func:`await_here` and be
    awaited from its caller's own task: when that task is cancelled, this future is not (the
    task is woken cancelled at once); a task of its own takes the call over, awaits this future
    and drives the call to its end. Anywhere else, an ordinary future."""

    __slots__ = ("_wakeup", "carried", "carrier")

    def __init__(self, *, loop: asyncio.AbstractEventLoop | None = None) -> None:
        super().__init__(loop=loop)
        self.carrier: tuple[_OnLoop, Callable[[], object]] | None = None
        """The call awaiting this future from its caller's task, and its ``ended``."""
        self.carried = False
        """Whether a task of its own took the call over from a cancelled caller."""
        self._wakeup: tuple[Callable[..., Any], contextvars.Context | None] | None = None

    def add_done_callback(
        self, fn: Callable[..., Any], *, context: contextvars.Context | None = None
    ) -> None:
        if self.carrier is not None and self._wakeup is None:
            self._wakeup = (fn, context)  # the awaiting task's: the first added while awaited
        super().add_done_callback(fn, context=context)

    def cancel(self, msg: Any = None) -> bool:
        """Called by the awaiting task's ``cancel()``: this future goes on, awaited by a task of
        its own that finishes the call, and the caller is woken cancelled in the next turn."""
        if self.carried:
            return True  # (cancelled again before it woke: it is woken once, cancelled)
        carrier, wakeup = self.carrier, self._wakeup
        loop = self.get_loop()
        if carrier is None or wakeup is None or self.done() or not loop.is_running():
            # (a loop not running is ending, as asyncio.run cancels what is left: no task of its
            # own could finish the call, which is cancelled where it awaits, in its caller's task)
            return super().cancel(msg)
        self.carried = True
        self.carrier = self._wakeup = None
        fn, context = wakeup
        self.remove_done_callback(fn)
        runner, ended = carrier
        _to_end_in_task(runner, _linked(self), ended)
        woken = loop.create_future()
        woken.cancel(msg)
        loop.call_soon(fn, woken, context=context)
        return True


_TO_END: set[asyncio.Task[Any]] = set()
"""Tasks finishing calls whose callers stopped awaiting them (kept referenced until they end)."""


def _runner(fn: Callable[..., Any], args: tuple[Any, ...]) -> _OnLoop:
    """A runner set to call ``fn(*args)`` in a copy of the current context, driven from here."""
    if _greenlet is None:
        raise RuntimeError("run_on_loop: expected the greenlet package ([serve] extra), found none")
    idle: list[_OnLoop] | None = getattr(_idle, "runners", None)
    if idle is None:
        idle = _idle.runners = []
    runner = idle.pop() if idle else _OnLoop()
    runner.parent = _greenlet.getcurrent()
    runner.gr_context = contextvars.copy_context()
    runner.call = (fn, args)
    return runner


async def _drive(runner: _OnLoop, handed: Any) -> Any:
    """Await what the runner hands until its call ends; its outcome."""
    while handed is not _END:
        if runner.dead:  # (only a runner discarded mid-call ends so)
            raise RuntimeError("run_on_loop: expected the call to end, found its runner gone")
        try:
            value = await handed
        except BaseException as exc:  # into the code that awaited it (it may handle it)
            handed = runner.throw(exc)
        else:
            handed = runner.switch(value)
    return _result(runner)


def _result(runner: _OnLoop) -> Any:
    """The outcome of the runner's ended call (the runner kept for the next call)."""
    assert runner.ended is not None
    value, error = runner.ended
    runner.ended = runner.gr_context = None  # (the call's context variables are not kept)
    idle: list[_OnLoop] = _idle.runners
    if len(idle) < IDLE_RUNNERS:
        idle.append(runner)
    if error is not None:
        raise error
    return value


async def _elsewhere(runner: _OnLoop, handed: Any, ended: Callable[[], object]) -> Any:
    """The outcome of the call, driven by a task of its own from ``handed`` on (a cancelled
    caller stops waiting for it; the call goes on)."""
    answer: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
    _to_end_in_task(runner, handed, ended, answer)
    return await answer


def _to_end_in_task(
    runner: _OnLoop,
    handed: Any,
    ended: Callable[[], object],
    answer: asyncio.Future[Any] | None = None,
) -> None:
    task = asyncio.get_running_loop().create_task(_to_end(runner, handed, ended, answer))
    _TO_END.add(task)
    task.add_done_callback(_TO_END.discard)


async def _to_end(
    runner: _OnLoop, handed: Any, ended: Callable[[], object], answer: asyncio.Future[Any] | None
) -> None:
    """Drive the call to its end; its outcome to ``answer`` while someone awaits it."""
    try:
        value = await _drive(runner, handed)
    except BaseException as exc:
        raised = False  # whether the caller, still awaiting, has it raised
        if answer is not None and not answer.done():
            if isinstance(exc, asyncio.CancelledError):
                answer.cancel()
            else:
                answer.set_exception(exc)
                raised = True
        elif isinstance(exc, Exception):
            _log.error("a call on the loop failed after its caller left", exc_info=exc)
        if not isinstance(exc, Exception) and not raised:
            raise  # the task itself was cancelled, or the process ends with no caller to tell
    else:
        if answer is not None and not answer.done():
            answer.set_result(value)
    finally:
        ended()


def _linked(future: asyncio.Future[Any]) -> asyncio.Future[Any]:
    """A new future with ``future``'s outcome once it has one (cancelling it leaves ``future``)."""
    link: asyncio.Future[Any] = future.get_loop().create_future()

    def settle(done: asyncio.Future[Any]) -> None:
        if link.done():
            return
        if done.cancelled():
            link.cancel()
        elif (exc := done.exception()) is not None:
            link.set_exception(exc)
        else:
            link.set_result(done.result())

    future.add_done_callback(settle)
    return link
