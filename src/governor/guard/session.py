"""One guarded conversation: one session, one trajectory, kept in a store between calls.

``respond(messages)`` takes the OpenAI-style messages of the conversation so far. The session's
saved messages must be a prefix of them; the rest are read in order: an assistant message the
client added is committed as an executed action, any other message joins the conversation. Then
the observer proposes through the upstream, judges, regenerates or falls back; the executed reply
is committed and the new state saved with the decision's record, in one write. When the save
fails the step fails closed: the reply is the ``check_failed`` fallback text, the error is
recorded, and the session stays where its last saved decision left it.

``check(candidate)`` judges a candidate against the session's state and makes no LLM call;
``commit(candidate)`` records an action the client executed. ``operate(kind, who=, why=)``
records an operator's act (pause, resume, end) in the session's state and its records: a paused
or ended session answers ``respond`` with the default fallback text, calls no model and leaves
its trajectory as it was (its summary's kind is ``paused`` or ``ended``); ``check`` and
``commit`` still judge. Under a policy with modes (:mod:`.supervision`), ``respond`` first asks
the supervisor; the acting mode's observer then proposes and judges, and a step in which no mode
acts answers with the mode's fallback text and calls no model; the supervisor's state is saved
with the session's, and ``operate`` also takes ``set_mode`` (with ``mode=``) and ``release``,
each in the supervisor's audit trail too. ``check`` judges with the current mode's constraints.
Blocking work runs in a worker thread (``asyncio.to_thread``); calls on one session are
serialised by an ``asyncio.Lock`` (and a thread lock, for the sync variants, which refuse to run
inside a running event loop). With a store that several processes share (``store.shared``), each
call also holds the store's lock on the session and re-reads the session's state under it, so
instances serve a session in turn; the session keeps no state between calls then.
``respond_stream`` is ``respond`` with the upstream streamed through a hold-back buffer
(:mod:`.holdback`): its events come as each checked chunk is released, the session locked until
the step is saved. The work of each call is in :mod:`.session_steps` and
:mod:`.session_respond`; this module adds the API and the locks. Imports the observer, the
operator acts and the guard's messages, release events, state, store, stream policy,
supervision and steps.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import threading
from collections.abc import AsyncIterator, Callable, Coroutine, Mapping, Sequence
from concurrent.futures import Executor
from typing import Any, TypeVar

from governor.errors import ConfigError
from governor.guard.messages import Sampling
from governor.guard.policy_stream import StreamPolicy
from governor.guard.release import ReleaseGate, StreamEnd, StreamEvent
from governor.guard.session_respond import RespondSteps
from governor.guard.session_steps import CheckResult, GuardReply
from governor.guard.state import SessionState
from governor.guard.store import SessionStore, shared_lock
from governor.guard.supervision import GuardSupervision
from governor.observer import Observer
from governor.supervision.operator import ActKind

T = TypeVar("T")

INLINE_MAX_MESSAGES = 64
INLINE_MAX_CHARS = 8192
"""The longest saved history (messages, characters of text) an ``inline`` check runs on the event
loop for: the checks' time grows with the text they read."""


class SyncInLoopError(ConfigError):
    """A sync variant was called inside a running event loop (await the async one instead)."""


class GuardSession(RespondSteps):
    """See the module doc. Get one from :meth:`governor.guard.Guard.session`."""

    def __init__(
        self,
        session_id: str,
        observer: Observer,
        store: SessionStore,
        texts: Mapping[str, str],
        executor: Executor | None = None,
        supervision: GuardSupervision | None = None,
        stream: StreamPolicy | None = None,
    ) -> None:
        self.id = session_id
        self.supervision = supervision
        self.stream = stream or StreamPolicy()
        self.observer = observer
        self.store = store
        self.texts = dict(texts)
        self._state: SessionState | None = None
        self._lock = asyncio.Lock()
        self._thread_lock = threading.Lock()
        self._executor = executor  # None: asyncio's default pool

    # ------------------------------------------------------------------ async API

    async def respond(
        self,
        messages: Sequence[Any],
        *,
        tools: Sequence[Any] | None = None,
        sampling: Sampling | None = None,
    ) -> GuardReply:
        """The guarded reply to the conversation ``messages`` (see the module doc); ``sampling``
        carries the request's own temperature and ``max_tokens``."""
        return await self._run(self._respond, messages, tools, sampling or Sampling())

    async def respond_stream(
        self,
        messages: Sequence[Any],
        *,
        tools: Sequence[Any] | None = None,
        sampling: Sampling | None = None,
    ) -> AsyncIterator[StreamEvent]:
        """:meth:`respond` with the upstream streamed through a hold-back buffer
        (:mod:`.holdback`): the events of the reply as they are released (text, then tool calls
        in one piece, :mod:`.release`), ending with a :class:`StreamEnd` that
        holds the reply as the client saw it and its summary. The session stays locked until the
        step is saved, even when the caller stops reading."""
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[StreamEvent | BaseException | None] = asyncio.Queue()

        def emit(event: StreamEvent) -> None:
            loop.call_soon_threadsafe(queue.put_nowait, event)

        def ended(done: asyncio.Future[None]) -> None:
            queue.put_nowait(None if done.cancelled() else done.exception())

        async with self._lock:
            gate = ReleaseGate(emit)
            work = functools.partial(
                self._respond_streaming, messages, tools, sampling or Sampling(), gate
            )
            call = functools.partial(contextvars.copy_context().run, self._locked, work)
            loop.run_in_executor(self._executor, call).add_done_callback(ended)
            while (event := await queue.get()) is not None:
                if isinstance(event, BaseException):
                    raise event
                yield event
                if isinstance(event, StreamEnd):
                    return

    async def check(
        self, candidate: Any, *, messages: Sequence[Any] | None = None, inline: bool = False
    ) -> CheckResult:
        """The verdicts on ``candidate`` (text, a Reply or an assistant message); no LLM call.
        ``inline``: judge on the calling event loop, without a worker thread, when that needs no
        store access (the state is loaded, the store is not shared, no sync call holds the
        session, a short saved history: :data:`INLINE_MAX_MESSAGES`, :data:`INLINE_MAX_CHARS`):
        for small requests, whose checks take about a millisecond of CPU or less."""
        if inline:
            async with self._lock:
                if self._inline_ready() and self._thread_lock.acquire(blocking=False):
                    try:
                        return self._check(candidate, messages)
                    finally:
                        self._thread_lock.release()
        return await self._run(self._check, candidate, messages)

    async def commit(self, candidate: Any, *, messages: Sequence[Any] | None = None) -> CheckResult:
        """Record ``candidate`` as executed (e.g. the client ran the tool); its verdicts."""
        return await self._run(self._commit_executed, candidate, messages)

    async def operate(
        self, kind: ActKind | str, *, who: str, why: str, mode: str | None = None
    ) -> SessionState:
        """Record an operator's act (``pause``, ``resume``, ``end``; with modes also
        ``set_mode`` to ``mode`` and ``release``) with who and why; the session's state after it.
        An act on an ended session, one naming an unknown mode, or one that needs modes when the
        policy has none, is refused with a ConfigError."""
        return await self._run(self._operate, ActKind(kind), who, why, mode)

    async def reset(self) -> bool:
        """Forget this session's trajectory: its saved state becomes a new session's (no messages,
        every rule at its start) and a ``{"type": "reset"}`` record follows its decision records,
        which stay. Waits for the call in flight, like any other call. False, and nothing
        written, when the store holds no such session."""
        return await self._run(self._reset)

    # ------------------------------------------------------------------ sync API

    def respond_sync(
        self,
        messages: Sequence[Any],
        *,
        tools: Sequence[Any] | None = None,
        sampling: Sampling | None = None,
    ) -> GuardReply:
        return _sync("respond", lambda: self.respond(messages, tools=tools, sampling=sampling))

    def operate_sync(
        self, kind: ActKind | str, *, who: str, why: str, mode: str | None = None
    ) -> SessionState:
        return _sync("operate", lambda: self.operate(kind, who=who, why=why, mode=mode))

    def check_sync(self, candidate: Any, *, messages: Sequence[Any] | None = None) -> CheckResult:
        return _sync("check", lambda: self.check(candidate, messages=messages))

    def commit_sync(self, candidate: Any, *, messages: Sequence[Any] | None = None) -> CheckResult:
        return _sync("commit", lambda: self.commit(candidate, messages=messages))

    # ------------------------------------------------------------------ the worker thread

    def _inline_ready(self) -> bool:
        state = self._state
        return (
            state is not None
            and len(state.messages) <= INLINE_MAX_MESSAGES
            and sum(len(m.content or "") for m in state.messages) <= INLINE_MAX_CHARS
            and not getattr(self.store, "shared", False)  # (a protocol isinstance is slower)
        )

    async def _run(self, fn: Callable[..., T], *args: Any) -> T:
        async with self._lock:
            call = functools.partial(contextvars.copy_context().run, self._locked, fn, *args)
            return await asyncio.get_running_loop().run_in_executor(self._executor, call)

    def _locked(self, fn: Callable[..., T], *args: Any) -> T:
        with self._thread_lock:
            lock = shared_lock(self.store, self.id)
            if lock is None:
                return fn(*args)
            self._state = None  # another instance may have moved the session on: re-read it
            try:
                with lock:
                    return fn(*args)
            finally:
                self._state = None


def _sync(name: str, make: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Run the coroutine ``make()`` builds, outside any running event loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(make())
    raise SyncInLoopError(
        f"{name}_sync: expected to be called outside a running event loop, found one running;"
        f" use `await session.{name}(...)` there"
    )
