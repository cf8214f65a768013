"""One guarded conversation: one session, one trajectory, kept in a store between calls.

``respond(messages)`` takes the OpenAI-style messages of the conversation so far. The session's
saved messages must be a prefix of them (a changed history is refused naming the index, never
quoting a stored message); the rest are read in order, linearly: an assistant message the client
added is committed as an executed action (and listed in the record's ``client_claims`` when
governor did not produce it), any other message joins the conversation. The request the last
step answered, sent again (a retry) or with its Idempotency-Key, gets that step's reply. Then
the observer proposes through the upstream, judges, regenerates or falls back; the executed reply
is committed and the new state saved with the decision's record, in one write. When the save
fails the step fails closed: the reply is the ``check_failed`` fallback text, the error is
recorded, and the session stays where its last saved decision left it.

``check(candidate)`` judges a candidate against the session's state and makes no LLM call;
``commit(candidate)`` records an action the client executed. ``operate(kind, who=, why=)``
records an operator's act (pause, resume, end) in the session's state and its records: a paused
or ended session answers ``respond`` with the default fallback text, calls no model and leaves
its trajectory as it was (its summary's kind is ``paused`` or ``ended``); ``check`` and
``commit`` still judge. Under a policy with modes (:mod:`.mode_observers`), ``respond`` first asks
the supervisor; the acting mode's observer then proposes and judges, and a step in which no mode
acts answers with the mode's fallback text and calls no model; the supervisor's state is saved
with the session's, and ``operate`` also takes ``set_mode`` (with ``mode=``) and ``release``,
each in the supervisor's audit trail too. ``check`` judges with the current mode's constraints.
Blocking work runs in a worker thread; a guard whose every stage is pure or awaits its I/O
(:attr:`GuardSession.on_loop`) runs a small request's step on the caller's event loop instead
(:mod:`governor.on_loop`: the same code, its upstream call awaited there). Calls on one session
are serialised by an ``asyncio.Lock`` (and a thread lock, for the sync variants, which refuse to
run inside a running event loop). With a store that several processes share (``store.shared``), each
call also holds the store's lock on the session and re-reads the session's state under it, so
instances serve a session in turn; the session keeps no state between calls then, only its
messages as last read or written, so that a call reads only the messages added since (the
store's message log: a reset, or a save that rewrites earlier messages, starts a new one and the
next call reads the session whole).
``respond_stream`` is ``respond`` with the upstream streamed through a hold-back buffer
(:mod:`.holdback`): its events come as each checked chunk is released, the session locked until
the step is saved; its reply is committed once delivered (:meth:`GuardSession.delivered`; one
not wholly sent is recorded as such, :meth:`GuardSession.undelivered`).

One class, read top to bottom: the results (:class:`GuardReply`, :class:`CheckResult`), then
:class:`GuardSession`'s state, its async and sync API, the locks that run each call in a worker
thread, and the calls' work under those locks (catch the conversation up, judge, commit, save,
operators' acts, reset; then ``respond``'s: ask the supervisor, step the acting mode's observer,
commit the executed reply, save with the decision's record, failing closed). Streamed, the
observer's upstream goes through a hold-back buffer (:mod:`.holdback`) and the trajectory
commits what the client saw; with ``n > 1`` the admitted choices are answered and none is
committed (:mod:`.choices`). Imports the core types, the observer, the event-loop runner (:mod:`governor.on_loop`), the trace records, the
supervision package (its operator acts) and the guard's choices, hold-back buffer, exchange,
release gate, session state, stores, spec (stream section), summary and mode observers.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import hashlib
import json
import os
import threading
import time
import weakref
from collections.abc import AsyncIterator, Callable, Coroutine, Mapping, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass, replace
from typing import Any, TypeVar

from governor.core import Constraint, Decision, DecisionKind, Trajectory, Verdict
from governor.errors import ConfigError, LimitError, expected
from governor.guard.choices import admitted_choices, choice_observer
from governor.guard.constraints import ToolLTLConstraint
from governor.guard.exchange import (
    Conversation,
    History,
    Message,
    Reply,
    Sampling,
    conversation_from,
    reply_from,
    reply_of,
)
from governor.guard.holdback import executed_streamed, streaming_observer
from governor.guard.mode_observers import GuardSupervision
from governor.guard.release import ReleaseGate, StreamEnd, StreamEvent
from governor.guard.session_state import SessionState, state_from_json, state_to_json
from governor.guard.spec.stream_section import StreamPolicy
from governor.guard.stores import SessionStore, shared_lock
from governor.guard.summary import (
    decision_summary,
    supervision_summary,
    verdicts_summary,
    violation_kinds,
)
from governor.jsontext import digest_text
from governor.observer import LOOP_CHECK_MAX_CHARS, Observer
from governor.on_loop import finish_on_loop
from governor.supervision import SupervisorDecision, SupervisorState
from governor.supervision.operator import ActKind, OperatorAct
from governor.trace.record import decision_record

T = TypeVar("T")

MAX_SESSION_MESSAGES = 100_000
"""The most messages a stored session may hold (a step past it is refused, naming the limit)."""
INLINE_MAX_MESSAGES = 64
INLINE_MAX_CHARS = 8192
"""The longest saved history (messages, characters of text) an ``inline`` check runs on the event
loop for: the checks' time grows with the text they read."""
LOOP_MAX_MESSAGES = 256
LOOP_MAX_CHARS = 32_768
"""The largest request (messages, characters of text) whose step runs on the event loop when the
guard's steps may (:attr:`GuardSession.on_loop`): reading a request is linear in its size, and
a step on the loop holds every other request for its CPU time. A larger one runs on a thread."""


class SyncInLoopError(ConfigError):
    """A sync variant was called inside a running event loop (await the async one instead)."""


@dataclass(frozen=True)
class GuardReply:
    """The guard's answer: the reply (text or tool calls), the decision, its JSON summary."""

    reply: Reply
    decision: Decision
    summary: Mapping[str, Any]
    choices: tuple[Reply, ...] = ()
    """With ``n > 1``: the admitted replies to choose from, ``reply`` first (none committed:
    :mod:`.choices`); empty otherwise."""

    @property
    def message(self) -> dict[str, Any]:
        """The reply as an OpenAI assistant message."""
        return self.reply.to_dict()


@dataclass(frozen=True)
class CheckResult:
    """The verdicts on one candidate, and their JSON summary."""

    admissible: bool
    verdicts: tuple[Verdict, ...]
    summary: Mapping[str, Any]


def _key(m: Message) -> tuple[Any, ...]:
    calls = tuple((c.id, c.name, json.dumps(c.args(), sort_keys=True)) for c in m.tool_calls)
    return (m.role, m.content or "", calls, m.tool_call_id)


class GuardSession:
    """One guarded conversation (see the module doc). Get one from
    :meth:`governor.guard.Guard.session`."""

    def __init__(
        self,
        session_id: str,
        observer: Observer,
        store: SessionStore,
        texts: Mapping[str, str],
        executor: Executor | None = None,
        supervision: GuardSupervision | None = None,
        stream: StreamPolicy | None = None,
        *,
        name: str | None = None,
        max_messages: int = MAX_SESSION_MESSAGES,
        on_loop: bool = False,
        kinds: Mapping[str, str] | None = None,
    ) -> None:
        self.id = session_id
        self.on_loop = on_loop
        """Whether a call with a small request runs on the caller's event loop (:meth:`_run`)."""
        self.name = session_id if name is None else name
        """What the client calls the session (its stored id without the owner's prefix)."""
        self.max_messages = max_messages
        self.supervision = supervision
        self.stream = stream or StreamPolicy()
        self.observer = observer
        self.store = store
        self.texts = dict(texts)
        self._state: SessionState | None = None
        self._first_loop: tuple[weakref.ref[asyncio.AbstractEventLoop], asyncio.Lock] | None = None
        self._locks: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] | None = (
            None
        )
        """The calls waiting on each event loop (an asyncio lock serves one loop only; the sync
        API runs each call on a loop of its own): across loops, the thread lock serialises. The
        first loop's lock is kept apart (a served session sees the service's loop only), the
        others' in ``_locks``, made when a second loop calls."""
        self._locks_lock = threading.Lock()
        self._thread_lock = threading.Lock()
        self._executor = executor  # None: asyncio's default pool
        self.kinds = violation_kinds(observer.constraints) if kinds is None else kinds
        """Each constraint's kind of violation, for the summaries (:mod:`.summary`): ``kinds``
        when given (its guard's, computed once for all its sessions)."""
        self._pending: tuple[Trajectory, int, Mapping[str, Any], Any, Reply] | None = None
        """A streamed step's reply not yet wholly sent: committed by :meth:`delivered`."""
        self._undelivered: Reply | None = None
        """The last streamed reply that was not wholly sent (governor's own, not a claim)."""
        self._follows: GuardSession | None = None
        """The same session under the guard this one's replaced (a reloaded policy): its step
        still running is waited for before this session first reads its state."""
        self._log: tuple[str | None, tuple[Message, ...]] | None = None
        """With a store that keeps messages apart: the session's message log as last read or
        written, its id and its messages; a read from a shared store gives only the messages
        after them while the log is the same (a save that rewrites earlier messages, a reset,
        starts a new log)."""

    def follows(self, before: GuardSession | None) -> None:
        """Wait for ``before`` (this session under a replaced guard) to finish the step it is
        running before this session's first call reads the state (see :meth:`_locked`)."""
        self._follows = before

    @property
    def state(self) -> SessionState:
        """The session's state after its last saved decision (read from the store once; from a
        shared store, again at the start of each call)."""
        if self._state is None:
            log = self._log
            if log is not None and log[0] is not None:  # read only the messages after ours
                saved = self.store.load(self.id, since=(log[0], len(log[1])))  # type: ignore[call-arg]
            else:
                saved = self.store.load(self.id)
            constraints = self.observer.constraints
            where = f"session {self.id}"
            if saved is None:
                state = SessionState(memory={c.name: c.initial_state(None) for c in constraints})
            else:
                held = 0 if log is None else int(saved.get("messages_from") or 0)
                prefix = () if log is None else log[1][:held]
                state = state_from_json(saved, constraints, where, prefix)
            if getattr(self.store, "appends_messages", False):
                self._log = None if saved is None else (saved.get("log"), state.messages)
            if self.supervision is not None:
                sup = self.supervision.restored(state.supervisor, where)
                state = replace(state, supervisor=sup)
            self._state = state
            if state.changed:  # read under a changed policy: in the audit trail, once
                record = {"type": "policy_change", "episode": self.id, "t": state.t}
                self._write(replace(state, changed=None), {**record, **state.changed})
        return self._state

    # ------------------------------------------------------------------ async API

    async def respond(
        self,
        messages: Sequence[Any],
        *,
        tools: Sequence[Any] | None = None,
        sampling: Sampling | None = None,
        idempotency_key: str | None = None,
        user: str | None = None,
    ) -> GuardReply:
        """The guarded reply to the conversation ``messages`` (see the module doc); ``sampling``
        carries the request's own temperature and ``max_tokens``; ``user`` (the end user's id,
        as the client names them) goes into the decision record. The request the last step
        answered, sent again (a retry; or one with the last step's ``idempotency_key``), is
        answered with that step's reply: no model is called, nothing is committed again."""
        return await self._run(
            self._respond,
            messages,
            tools,
            sampling or Sampling(),
            None,
            idempotency_key,
            user,
            on_loop=self.on_loop and _small(messages),
        )

    async def respond_stream(
        self,
        messages: Sequence[Any],
        *,
        tools: Sequence[Any] | None = None,
        sampling: Sampling | None = None,
        idempotency_key: str | None = None,
        deliver: bool = True,
        user: str | None = None,
    ) -> AsyncIterator[StreamEvent]:
        """:meth:`respond` with the upstream streamed through a hold-back buffer
        (:mod:`.holdback`): the events of the reply as they are released (text, then tool calls
        in one piece, :mod:`.release`), ending with a :class:`StreamEnd` that
        holds the reply as the client saw it and its summary. The session stays locked until the
        step is saved, even when the caller stops reading. The reply is committed only once it
        was delivered: with ``deliver`` (the default), when the caller reads on past the
        :class:`StreamEnd`; without, when the caller says so (:meth:`delivered`, or
        :meth:`undelivered` when it could not be sent whole)."""
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[StreamEvent | BaseException | None] = asyncio.Queue()

        def emit(event: StreamEvent) -> None:
            loop.call_soon_threadsafe(queue.put_nowait, event)

        def ended(done: asyncio.Future[None]) -> None:
            queue.put_nowait(None if done.cancelled() else done.exception())

        async with self._loop_lock():
            gate = ReleaseGate(emit)
            work = functools.partial(
                self._respond_streaming,
                messages,
                tools,
                sampling or Sampling(),
                gate,
                idempotency_key,
                user,
            )
            call = functools.partial(contextvars.copy_context().run, self._locked, work)
            loop.run_in_executor(self._executor, call).add_done_callback(ended)
            finished = False
            while (event := await queue.get()) is not None:
                if isinstance(event, BaseException):
                    raise event
                yield event
                if isinstance(event, StreamEnd):
                    finished = True
                    break
        if finished and deliver:
            await self.delivered()

    async def check(
        self,
        candidate: Any,
        *,
        messages: Sequence[Any] | None = None,
        tools: Sequence[Any] | None = None,
        inline: bool = False,
    ) -> CheckResult:
        """The verdicts on ``candidate`` (text, a Reply or an assistant message); no LLM call.
        ``tools``: the tool schemas offered to the agent that proposed it (none: the policy's
        ``tools.offered`` alone decides which calls are offered). ``inline``: judge on the calling event loop, without a worker thread, when that needs no
        store access (the state is loaded, the store is not shared, no sync call holds the
        session, a short saved history: :data:`INLINE_MAX_MESSAGES`, :data:`INLINE_MAX_CHARS`):
        for small requests, whose checks take about a millisecond of CPU or less."""
        if inline:
            async with self._loop_lock():
                if self._inline_ready() and self._thread_lock.acquire(blocking=False):
                    try:
                        return self._check(candidate, messages, tools)
                    finally:
                        self._thread_lock.release()
        return await self._run(self._check, candidate, messages, tools)

    async def commit(
        self,
        candidate: Any,
        *,
        messages: Sequence[Any] | None = None,
        tools: Sequence[Any] | None = None,
    ) -> CheckResult:
        """Record ``candidate`` as executed (e.g. the client ran the tool); its verdicts
        (``tools`` as for :meth:`check`)."""
        small = self.on_loop and _small(messages or ()) and _small((candidate,))
        return await self._run(self._commit_executed, candidate, messages, tools, on_loop=small)

    async def operate(
        self, kind: ActKind | str, *, who: str, why: str, mode: str | None = None
    ) -> SessionState:
        """Record an operator's act (``pause``, ``resume``, ``end``; with modes also
        ``set_mode`` to ``mode`` and ``release``) with who and why; the session's state after it.
        An act on an ended session, one naming an unknown mode, or one that needs modes when the
        policy has none, is refused with a ConfigError."""
        return await self._run(self._operate, ActKind(kind), who, why, mode)

    async def delivered(self) -> None:
        """The streamed reply of the last step was wholly sent: commit it (a step whose reply is
        still pending is committed only now; the session moved on in between: nothing)."""
        await self._run(self._deliver, True)

    async def undelivered(self) -> None:
        """The streamed reply of the last step was not wholly sent (the client went away): it is
        not committed, and the session's records say so; the client's next history decides
        (the reply in it: committed then, as governor's own; not in it: as if never said)."""
        await self._run(self._deliver, False)

    async def reset(self) -> bool:
        """Forget this session's trajectory: its saved state becomes a new session's (no messages,
        every rule at its start) and a ``{"type": "reset"}`` record follows its decision records,
        which stay. Waits for the call in flight, like any other call. False, and nothing
        written, when the store holds no such session."""
        return await self._run(self._reset)

    async def new(self) -> bool:
        """Whether nothing of this session was saved yet: :meth:`is_new`, after the call in
        flight, like any other call (no thread is held while it waits)."""
        return await self._run(self._is_new)

    def _is_new(self) -> bool:
        state = self.state
        return state.t == 0 and not state.messages and not state.acts

    def is_new(self) -> bool:
        """Whether nothing of this session was saved yet (blocking: it may read the store)."""
        with self._thread_lock:
            new = self._is_new()
            if getattr(self.store, "shared", False):
                self._state = None  # re-read under the store's lock by the call that follows
            return new

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

    def check_sync(
        self,
        candidate: Any,
        *,
        messages: Sequence[Any] | None = None,
        tools: Sequence[Any] | None = None,
    ) -> CheckResult:
        return _sync("check", lambda: self.check(candidate, messages=messages, tools=tools))

    def commit_sync(
        self,
        candidate: Any,
        *,
        messages: Sequence[Any] | None = None,
        tools: Sequence[Any] | None = None,
    ) -> CheckResult:
        return _sync("commit", lambda: self.commit(candidate, messages=messages, tools=tools))

    # ------------------------------------------------------------------ the worker thread

    def _loop_lock(self) -> asyncio.Lock:
        """The running event loop's lock on this session's calls."""
        loop = asyncio.get_running_loop()
        with self._locks_lock:
            first, others = self._first_loop, self._locks
            if first is not None and first[0]() is loop:
                return first[1]
            lock = None if others is None else others.get(loop)
            if lock is None:
                lock = asyncio.Lock()
                if first is None:
                    self._first_loop = (weakref.ref(loop), lock)
                else:  # (a loop is kept in one place only: the first, or here)
                    if others is None:
                        others = self._locks = weakref.WeakKeyDictionary()
                    others[loop] = lock
            return lock

    def _inline_ready(self) -> bool:
        state = self._state
        return (
            state is not None
            and self._follows is None
            and len(state.messages) <= INLINE_MAX_MESSAGES
            and sum(len(m.content or "") for m in state.messages) <= INLINE_MAX_CHARS
            and not getattr(self.store, "shared", False)  # (a protocol isinstance is slower)
        )

    async def _run(self, fn: Callable[..., T], *args: Any, on_loop: bool = False) -> T:
        """``fn(*args)`` under the session's locks: on a worker thread; with ``on_loop`` (a step
        of a guard whose stages may all run there, :func:`~governor.guard.facade.steps_on_loop`)
        on this event loop (:mod:`governor.on_loop`) when no other thread holds the session.
        A call on the loop finishes even when its caller is cancelled, as one on a thread does."""
        async with self._loop_lock():
            if on_loop and self._follows is None and self._thread_lock.acquire(blocking=False):
                # (the thread lock is released as the step ends, where it ends)
                return await finish_on_loop(self._thread_lock.release, self._holding, fn, *args)
            call = functools.partial(contextvars.copy_context().run, self._locked, fn, *args)
            return await asyncio.get_running_loop().run_in_executor(self._executor, call)

    def _locked(self, fn: Callable[..., T], *args: Any) -> T:
        with self._thread_lock:
            return self._holding(fn, *args)

    def _holding(self, fn: Callable[..., T], *args: Any) -> T:
        """``fn(*args)`` with the thread lock held: after the replaced guard's step, under the
        store's lock on the session when the store is shared."""
        before, self._follows = self._follows, None
        if before is not None:
            with before._thread_lock:  # its running step has saved: read what it saved
                self._state = None
        lock = shared_lock(self.store, self.id)
        if lock is None:
            return fn(*args)
        self._state = None  # another instance may have moved the session on: re-read it
        try:
            with lock:
                return fn(*args)
        finally:
            self._state = None

    # ------------------------------------------------------------------ the calls' work

    def _operate(self, kind: ActKind, who: str, why: str, mode: str | None) -> SessionState:
        state = self.state
        if self.supervision is None and kind not in (ActKind.PAUSE, ActKind.RESUME, ActKind.END):
            wanted = "pause, resume or end (this guard's policy has no modes)"
            raise ConfigError(f"operator act: {expected(wanted, kind.value)}")
        if state.ended:
            raise ConfigError(f"operator act {kind}: {expected('an open session', 'an ended one')}")
        act = OperatorAct(kind, who, why, time.time(), mode, state.t)
        sup = state.supervisor
        if self.supervision is not None and sup is not None:
            sup = self.supervision.supervisor.operate(
                sup, kind, who=who, why=why, mode=mode, at=act.at
            )
        after = replace(state, acts=(*state.acts, act), supervisor=sup)
        record = {"type": "operator", "episode": self.id, "t": state.t, "act": act.to_json()}
        self._write(after, record)
        return after

    def _deliver(self, sent: bool) -> None:
        pending, self._pending = self._pending, None
        if pending is None:
            return
        after, t, last, sup, reply = pending
        state = self.state
        if state.t != t - 1 or len(state.messages) != len(after.observation.messages) - 1:
            return  # another request on the session came first: its history decided
        if sent:
            record = {"type": "delivered", "episode": self.id, "t": t}
            self._save(after, t, record, sup, last)
        else:
            self._undelivered = reply
            record = {"type": "not_delivered", "episode": self.id, "t": t}
            self._write(state, {**record, "reply": reply.to_dict()})

    def _replayed(
        self, given: tuple[Message, ...], request: str, key: str | None, start: float
    ) -> GuardReply | None:
        """The last step's answer when ``given`` is the request it answered (a retry), or when
        ``key`` is its Idempotency-Key; None otherwise. A known key with another request is an
        error (the key names one request)."""
        last, known = self.state.last, self.state.messages
        if last is None:
            return None
        n = int(last.get("n", -1))
        same = (
            len(given) == n < len(known)
            and last.get("fp") == request
            and all(
                g is m or g == m or _key(g) == _key(m) for g, m in zip(given, known, strict=False)
            )
        )
        if key is not None and last.get("key") == key:
            if not same:
                raise ConfigError(
                    "Idempotency-Key: expected the request it was first sent with, found another"
                    " one (a key names one request)"
                )
        elif key is not None or not same:
            return None
        reply = reply_from(last["reply"])
        t = int(last["t"])
        reason = f"the request of step {t} sent again: its committed reply, nothing run again"
        decision = Decision(DecisionKind(last["kind"]), reply, reason=reason)
        seconds = time.perf_counter() - start
        summary = decision_summary(decision, reply, session=self.name, t=t, seconds=seconds)
        return GuardReply(reply, decision, {**summary, "replayed": True})

    def _reset(self) -> bool:
        if self.store.load(self.id) is None:
            return False
        constraints = self.observer.constraints
        old = self.state
        sup = old.supervisor
        fresh = SessionState(
            memory={c.name: c.initial_state(None) for c in constraints},
            acts=old.acts,
            supervisor=None
            if self.supervision is None or sup is None
            else self.supervision.restart(sup),
        )
        record = {"type": "reset", "episode": self.id, "t": 0}
        self._write(fresh, record)
        self._state = None  # read again from the store on the next call
        return True

    def _catch_up(
        self,
        messages: Sequence[Any] | None,
        tools: Sequence[Any] | None,
        sampling: Sampling | None = None,
    ) -> tuple[Trajectory, int, list[int]]:
        """The trajectory after the messages the client sent (None: the session's own), each
        assistant message it added committed as executed, and the indices of those assistant
        messages governor did not produce (the client's claim: its decision record says so).
        Linear in what was sent: the saved messages are compared one by one, the new ones
        replayed at once (:meth:`_replay_memory`)."""
        state = self.state
        known = state.messages
        given = known if messages is None else conversation_from(messages)
        if len(given) >= self.max_messages:
            raise LimitError(
                f"session: expected fewer than {self.max_messages} messages in a session"
                f" (max_session_messages), found {len(given)} before the reply",
                "max_session_messages",
                self.max_messages,
            )
        if given is not known:
            for i, m in enumerate(known):
                if i >= len(given):
                    raise ConfigError(
                        f"messages: expected the session's {len(known)} messages first, found"
                        f" {len(given)} (a session's history cannot change)"
                    )
                g = given[i]
                if g is not m and g != m and _key(g) != _key(m):
                    raise ConfigError(
                        f"messages[{i}]: expected the session's message {i} unchanged, found a"
                        " different one (a session's history cannot change)"
                    )
        tooled, sampled = tuple(tools or ()), sampling or Sampling()
        at = [i for i in range(len(known), len(given)) if given[i].role == "assistant"]
        claims = [
            i for i in at if not (i == len(known) and self._undelivered == reply_of(given[i]))
        ]
        self._undelivered = None
        if not at:
            conv = Conversation(given if len(given) > len(known) else known, tooled, sampled)
            return Trajectory(conv, memory=state.memory, feedback=state.feedback), state.t, claims
        memory = self._replay_memory(state.memory, given, at, tooled, sampled)
        traj = Trajectory(Conversation(given, tooled, sampled), memory=memory)
        return traj, state.t + len(at), claims

    def _replay_memory(
        self,
        memory: Mapping[str, Any],
        given: tuple[Message, ...],
        at: Sequence[int],
        tools: tuple[Any, ...] = (),
        sampling: Sampling | None = None,
    ) -> dict[str, Any]:
        """The constraints' memory after the assistant messages of ``given`` at the indices
        ``at`` were executed in turn (what the observer's commit of each gives): each LTL rule
        replays them at once (:meth:`ToolLTLConstraint.replay`), a constraint that keeps no state
        keeps it; a policy with any other kind of constraint commits message by message, over
        views of the history. Linear in the messages replayed."""
        constraints = self.observer.constraints
        if all(_replays(c) for c in constraints):
            out = dict(memory)
            for c in constraints:
                if isinstance(c, ToolLTLConstraint):
                    out[c.name] = c.replay(memory.get(c.name), given, at)
                else:
                    out[c.name] = memory.get(c.name)
            return out
        sampled = sampling or Sampling()
        traj = Trajectory(Conversation(History(given, at[0]), tools, sampled), memory=memory)
        for i in at:
            seen = Conversation(History(given, i), tools, sampled)
            before = Trajectory(seen, memory=traj.memory)
            after = Conversation(History(given, i + 1), tools, sampled)
            traj = self._advance(before, reply_of(given[i]), "executed by the client", after)
        return dict(traj.memory)

    def _advance(
        self, traj: Trajectory, reply: Reply, reason: str, after: Conversation | None = None
    ) -> Trajectory:
        decision = Decision(DecisionKind.EXECUTE, reply, reason=reason)
        if after is None:
            after = traj.observation.then(reply.message())
        return self.observer.commit(traj, decision, after)

    def _save(
        self,
        traj: Trajectory,
        t: int,
        record: Mapping[str, Any],
        supervisor: SupervisorState | None = None,
        last: Mapping[str, Any] | None = None,
    ) -> None:
        """Save the session at ``traj`` after ``t`` executed actions with ``record``; ``last``
        is the step a retry is answered with (None: no retry can be answered now)."""
        conv = traj.observation
        sup = supervisor or self.state.supervisor
        state = SessionState(
            tuple(conv.messages), dict(traj.memory), traj.feedback, t, self.state.acts, sup, last
        )
        self._write(state, record)

    def _write(self, state: SessionState, record: Mapping[str, Any]) -> None:
        """Save ``state`` with ``record``, in one write. A store that keeps messages apart
        (``appends_messages``) is given only those new since its last save (after a reset: none,
        from index 0), so a step's write does not grow with the session."""
        constraints = self.observer.constraints
        if not getattr(self.store, "appends_messages", False):
            self.store.save(self.id, state_to_json(state, constraints), record)
        else:
            before = self._state.messages if self._state is not None else ()
            start = min(len(before), len(state.messages))
            new = [m.to_dict() for m in state.messages[start:]]
            data = state_to_json(state, constraints, with_messages=False)
            log = None if self._log is None else self._log[0]
            if log is None or start < len(before):  # earlier messages rewritten: a new log
                log = os.urandom(16).hex()  # 128 random bits (uuid4 costs more for fewer)
            data["log"] = log
            self.store.save(self.id, data, record, messages=(start, new))  # type: ignore[call-arg]
            self._log = (log, state.messages)
        self._state = state

    def _judge(self) -> Observer:
        """The observer whose constraints judge a candidate now (with modes: the current one's)."""
        sup = self.state.supervisor
        if self.supervision is None or sup is None:
            return self.observer
        return self.supervision.observer_for(sup)

    def _check(
        self, candidate: Any, messages: Sequence[Any] | None, tools: Sequence[Any] | None = None
    ) -> CheckResult:
        reply = reply_from(candidate)
        traj, _, _ = self._catch_up(messages, tools)
        verdicts = self._judge().verdicts(traj, reply)
        summary = {"session": self.name, **verdicts_summary(verdicts)}
        return CheckResult(all(v.admissible for v in verdicts), verdicts, summary)

    def _commit_executed(
        self, candidate: Any, messages: Sequence[Any] | None, tools: Sequence[Any] | None = None
    ) -> CheckResult:
        reply = reply_from(candidate)
        traj, t, claims = self._catch_up(messages, tools)
        verdicts = self._judge().verdicts(traj, reply)
        after = self._advance(traj, reply, "executed by the client")
        summary = {"session": self.name, "t": t + 1, **verdicts_summary(verdicts)}
        record = {
            "type": "commit",
            "episode": self.id,
            "t": t + 1,
            "action": reply.to_dict(),
            **summary,
        }
        if claims:
            record["client_claims"] = claims
        self._save(after, t + 1, record)
        return CheckResult(all(v.admissible for v in verdicts), verdicts, summary)

    # ------------------------------------------------------------------ respond's work

    def _respond_streaming(
        self,
        messages: Sequence[Any],
        tools: Sequence[Any] | None,
        sampling: Sampling,
        gate: ReleaseGate,
        key: str | None = None,
        user: str | None = None,
    ) -> None:
        """:meth:`_respond` with the upstream streamed through ``gate``; the rest of the reply and
        the end are sent once the step is saved."""
        answer = self._respond(messages, tools, sampling, gate, key, user)
        gate.finish(answer.reply, answer.decision, answer.summary)

    def _respond(
        self,
        messages: Sequence[Any],
        tools: Sequence[Any] | None,
        sampling: Sampling,
        gate: ReleaseGate | None = None,
        key: str | None = None,
        user: str | None = None,
    ) -> GuardReply:
        start = time.perf_counter()
        state = self.state
        if state.acts and (state.paused or state.ended):  # (no act: neither)
            return self._held(start)
        given = conversation_from(messages)
        request = _fingerprint(tools, sampling)
        again = self._replayed(given, request, key, start)
        if again is not None:
            return again
        traj, t, claims = self._catch_up(given, tools, sampling)
        caught_up = t
        seen = (lambda reply: reply) if gate is None else gate.seen
        texts, sup = self.texts, self._supervise(traj)
        choices: tuple[Reply, ...] = ()
        if sup is not None and not sup.acts:  # the supervisor waits: no model is called
            assert self.supervision is not None
            decision, reply = sup.as_decision(), Reply(self.supervision.text_for(sup))
            after = replace(traj, observation=traj.observation.then(reply.message()))
        else:
            observer = self.observer
            if sup is not None and sup.mode is not None and self.supervision is not None:
                observer = self.supervision.observer(sup.mode)
                texts = dict(self.supervision.texts_for(sup.mode))
            if gate is not None:
                observer = streaming_observer(observer, gate, self.stream.chunk_tokens)
            decision = choice_observer(observer, sampling.n).step(traj)
            if gate is not None:
                gate.close()
            choices = admitted_choices(decision, sampling.n) if sampling.n > 1 else ()
            if choices:  # none committed: the one the client goes on with comes back to it
                reply, after = choices[0], replace(traj, feedback=decision.feedback or None)
            elif decision.executed and isinstance(decision.action, Reply):
                reply = seen(decision.action)
                after, t = self._advance(traj, reply, decision.reason), t + 1
                if decision.feedback:  # (the commit of an executed reply keeps none)
                    after = replace(after, feedback=decision.feedback)
            else:  # nothing admissible was executed: say the default text, commit nothing
                reply = seen(Reply(texts["default"]))
                after = replace(traj, observation=traj.observation.then(reply.message()))
        said = reply.to_dict()  # (read only: the record copies it, the saved state keeps it)
        extra: dict[str, Any] = {"reply": said}
        if user is not None:
            extra["user"] = user
        if claims:
            extra["client_claims"] = claims
        if choices:
            extra["choices"] = [c.to_dict() for c in choices]
        if gate is not None:
            extra["stream"] = gate.summary(decision, executed_streamed(decision))
        if sup is not None and self.supervision is not None:
            extra.update(self.supervision.record(sup, decision if sup.acts else None))
        record = decision_record(decision, episode=self.id, t=t, extra=extra)
        last = {"n": len(given), "fp": request, "key": key, "reply": said}
        last |= {"kind": decision.kind.value, "t": t}
        try:
            if gate is not None and t > caught_up:  # streamed: committed once delivered
                record["extra"] = {**record.get("extra", {}), "delivery": "pending"}
                self._save(traj, t - 1, record, None if sup is None else sup.state)
                self._pending = (after, t, last, None if sup is None else sup.state, reply)
            else:
                self._save(after, t, record, None if sup is None else sup.state, last)
        except Exception as exc:
            reply, choices = seen(Reply(texts["check_failed"])), ()
            decision = replace(
                decision,
                kind=DecisionKind.FALLBACK,
                action=reply,
                reason=f"{decision.reason}; the session store failed, so the step fails closed",
                errors=(*decision.errors, f"store: {type(exc).__name__}: {exc}"),
            )
        seconds = time.perf_counter() - start
        summary = decision_summary(
            decision, reply, session=self.name, t=t, seconds=seconds, kinds=self.kinds
        )
        if sup is not None:
            summary["supervision"] = supervision_summary(sup, decision if sup.acts else None)
        if gate is not None:
            summary["stream"] = gate.summary(decision, executed_streamed(decision))
        if choices:
            summary.update(choices=len(choices), committed=False)
        return GuardReply(reply, decision, summary, choices)

    def _supervise(self, traj: Trajectory) -> SupervisorDecision | None:
        """The supervisor's step on the messages new since the last saved state (None: no
        supervision)."""
        state = self.state
        if self.supervision is None or state.supervisor is None:
            return None
        new = traj.observation.messages[len(state.messages) :]
        return self.supervision.step(state.supervisor, new)

    def _held(self, start: float) -> GuardReply:
        """A paused or ended session's answer: the default text; no model, no state change."""
        how = "ended" if self.state.ended else "paused"
        reason = f"the session is {how} by an operator; the upstream was not called"
        reply = Reply(self.texts["default"])
        decision = Decision(DecisionKind.DEFER, None, reason=reason)
        seconds = time.perf_counter() - start
        summary = decision_summary(
            decision, reply, session=self.name, t=self.state.t, seconds=seconds
        )
        sup = self.state.supervisor
        if self.supervision is not None and sup is not None:  # what the supervisor says (unsaved)
            summary["supervision"] = supervision_summary(self.supervision.step(sup, ()), None)
        return GuardReply(reply, decision, {**summary, "kind": how, how: True})


def _small(messages: Any) -> bool:
    """Whether a request's messages (or candidate) are small enough for the event loop
    (:data:`LOOP_MAX_MESSAGES`, :data:`LOOP_MAX_CHARS` in all, no message's text over the
    observer's ``LOOP_CHECK_MAX_CHARS``; content other than text: not small)."""
    if isinstance(messages, str):
        return len(messages) <= LOOP_CHECK_MAX_CHARS
    if not isinstance(messages, Sequence) or len(messages) > LOOP_MAX_MESSAGES:
        return False
    total = 0
    for m in messages:
        if isinstance(m, str):
            content: Any = m
            calls: Any = None
        elif isinstance(m, Mapping):
            content, calls = m.get("content"), m.get("tool_calls")
        else:
            content, calls = getattr(m, "content", None), getattr(m, "tool_calls", None)
        if isinstance(content, str):
            if len(content) > LOOP_CHECK_MAX_CHARS:  # one long turn: the checks read it whole
                return False
            total += len(content)
        elif content is not None:
            return False
        if calls:  # their arguments are text the step reads as well
            size = _arguments_size(calls)
            if size is None:
                return False
            total += size
        if total > LOOP_MAX_CHARS:
            return False
    return True


def _arguments_size(calls: Any) -> int | None:
    """The characters of the tool calls ``calls``' arguments (OpenAI-style mappings or
    :class:`~governor.backends.messages.ToolCall`); None when they are not of that shape or
    more than :data:`LOOP_MAX_MESSAGES`."""
    if not isinstance(calls, Sequence) or isinstance(calls, str) or len(calls) > LOOP_MAX_MESSAGES:
        return None
    total = 0
    for call in calls:
        if isinstance(call, Mapping):
            fn = call.get("function")
            arguments = fn.get("arguments") if isinstance(fn, Mapping) else None
        else:
            arguments = getattr(call, "arguments", None)
        if isinstance(arguments, str):
            total += len(arguments)
        elif arguments is not None:
            return None
    return total


def _replays(c: Constraint) -> bool:
    """Whether ``c``'s memory after a replayed history is computed at once: an LTL rule's
    (:meth:`ToolLTLConstraint.replay`), or a constraint's that keeps none (the base commit)."""
    return isinstance(c, ToolLTLConstraint) or type(c).commit is Constraint.commit


def _fingerprint(tools: Sequence[Any] | None, sampling: Sampling) -> str:
    """What a request asks for besides its messages (its tools and sampling), as a digest."""
    asked = [list(tools or ()), sampling.temperature, sampling.max_tokens, sampling.n]
    return hashlib.sha256(digest_text(asked)).hexdigest()


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
