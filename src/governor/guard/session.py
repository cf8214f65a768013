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
``commit`` still judge. Blocking work runs in a worker
thread (``asyncio.to_thread``); calls on one session are serialised by an ``asyncio.Lock`` (and a
thread lock, for the sync variants, which refuse to run inside a running event loop). With a store
that several processes share (``store.shared``), each call also holds the store's lock on the
session and re-reads the session's state under it, so instances serve a session in turn; the
session keeps no state between calls then. Imports the
core types, the observer, the trace records and the guard's messages, state, store and summary.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import json
import threading
import time
from collections.abc import Callable, Coroutine, Mapping, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass, replace
from typing import Any, TypeVar

from governor.core import Decision, DecisionKind, Trajectory, Verdict
from governor.errors import ConfigError, expected
from governor.guard.messages import (
    Conversation,
    Message,
    Reply,
    Sampling,
    conversation_from,
    reply_from,
    reply_of,
)
from governor.guard.state import SessionState, state_from_json, state_to_json
from governor.guard.store import SessionStore, shared_lock
from governor.guard.summary import decision_summary, verdicts_summary
from governor.observer import Observer
from governor.supervision.operator import ActKind, OperatorAct
from governor.trace.record import decision_record

T = TypeVar("T")


class SyncInLoopError(ConfigError):
    """A sync variant was called inside a running event loop (await the async one instead)."""


@dataclass(frozen=True)
class GuardReply:
    """The guard's answer: the reply (text or tool calls), the decision, its JSON summary."""

    reply: Reply
    decision: Decision
    summary: Mapping[str, Any]

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
    """See the module doc. Get one from :meth:`governor.guard.Guard.session`."""

    def __init__(
        self,
        session_id: str,
        observer: Observer,
        store: SessionStore,
        texts: Mapping[str, str],
        executor: Executor | None = None,
    ) -> None:
        self.id = session_id
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

    async def check(self, candidate: Any, *, messages: Sequence[Any] | None = None) -> CheckResult:
        """The verdicts on ``candidate`` (text, a Reply or an assistant message); no LLM call."""
        return await self._run(self._check, candidate, messages)

    async def commit(self, candidate: Any, *, messages: Sequence[Any] | None = None) -> CheckResult:
        """Record ``candidate`` as executed (e.g. the client ran the tool); its verdicts."""
        return await self._run(self._commit_executed, candidate, messages)

    async def operate(self, kind: ActKind | str, *, who: str, why: str) -> SessionState:
        """Record an operator's act (``pause``, ``resume`` or ``end``) with who and why; the
        session's state after it. An act on an ended session, or one that needs modes
        (``set_mode``, ``release``: this guard has none), is refused with a ConfigError."""
        return await self._run(self._operate, ActKind(kind), who, why)

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

    def operate_sync(self, kind: ActKind | str, *, who: str, why: str) -> SessionState:
        return _sync("operate", lambda: self.operate(kind, who=who, why=why))

    def check_sync(self, candidate: Any, *, messages: Sequence[Any] | None = None) -> CheckResult:
        return _sync("check", lambda: self.check(candidate, messages=messages))

    def commit_sync(self, candidate: Any, *, messages: Sequence[Any] | None = None) -> CheckResult:
        return _sync("commit", lambda: self.commit(candidate, messages=messages))

    @property
    def state(self) -> SessionState:
        """The session's state after its last saved decision (read from the store once; from a
        shared store, again at the start of each call)."""
        if self._state is None:
            saved = self.store.load(self.id)
            constraints = self.observer.constraints
            where = f"session {self.id}"
            self._state = (
                SessionState(memory={c.name: c.initial_state(None) for c in constraints})
                if saved is None
                else state_from_json(saved, constraints, where)
            )
        return self._state

    # ------------------------------------------------------------------ work (worker thread)

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

    def _operate(self, kind: ActKind, who: str, why: str) -> SessionState:
        state = self.state
        if kind not in (ActKind.PAUSE, ActKind.RESUME, ActKind.END):
            wanted = "pause, resume or end (this guard's policy has no modes)"
            raise ConfigError(f"operator act: {expected(wanted, kind.value)}")
        if state.ended:
            raise ConfigError(f"operator act {kind}: {expected('an open session', 'an ended one')}")
        act = OperatorAct(kind, who, why, time.time(), None, state.t)
        after = replace(state, acts=(*state.acts, act))
        record = {"type": "operator", "episode": self.id, "t": state.t, "act": act.to_json()}
        self.store.save(self.id, state_to_json(after, self.observer.constraints), record)
        self._state = after
        return after

    def _reset(self) -> bool:
        if self.store.load(self.id) is None:
            return False
        constraints = self.observer.constraints
        fresh = SessionState(
            memory={c.name: c.initial_state(None) for c in constraints}, acts=self.state.acts
        )
        record = {"type": "reset", "episode": self.id, "t": 0}
        self.store.save(self.id, state_to_json(fresh, constraints), record)
        self._state = None  # read again from the store on the next call
        return True

    def _catch_up(
        self,
        messages: Sequence[Any] | None,
        tools: Sequence[Any] | None,
        sampling: Sampling | None = None,
    ) -> tuple[Trajectory, int]:
        state = self.state
        known = state.messages
        given = known if messages is None else conversation_from(messages)
        for i, m in enumerate(known):
            if i >= len(given) or _key(given[i]) != _key(m):
                found = "nothing" if i >= len(given) else repr(given[i].to_dict())[:200]
                raise ConfigError(
                    f"session {self.id}: messages[{i}]: expected the session's message"
                    f" {m.to_dict()!r:.200}, found {found} (a session's history cannot change)"
                )
        conv = Conversation(known, tuple(tools or ()), sampling or Sampling())
        traj = Trajectory(conv, memory=state.memory, feedback=state.feedback)
        t = state.t
        for m in given[len(known) :]:
            if m.role == "assistant":
                traj, t = self._advance(traj, reply_of(m), "executed by the client"), t + 1
            else:
                traj = replace(traj, observation=traj.observation.then(m))
        return traj, t

    def _advance(self, traj: Trajectory, reply: Reply, reason: str) -> Trajectory:
        decision = Decision(DecisionKind.EXECUTE, reply, reason=reason)
        return self.observer.commit(traj, decision, traj.observation.then(reply.message()))

    def _save(self, traj: Trajectory, t: int, record: Mapping[str, Any]) -> None:
        conv = traj.observation
        state = SessionState(conv.messages, dict(traj.memory), traj.feedback, t, self.state.acts)
        self.store.save(self.id, state_to_json(state, self.observer.constraints), record)
        self._state = state

    def _respond(
        self, messages: Sequence[Any], tools: Sequence[Any] | None, sampling: Sampling
    ) -> GuardReply:
        start = time.perf_counter()
        if self.state.paused or self.state.ended:
            return self._held(start)
        traj, t = self._catch_up(messages, tools, sampling)
        decision = self.observer.step(traj)
        if decision.executed and isinstance(decision.action, Reply):
            reply = decision.action
            after, t = self._advance(traj, reply, decision.reason), t + 1
            after = replace(after, feedback=decision.feedback if decision.feedback else None)
        else:  # nothing admissible was executed: say the default text, commit nothing
            reply = Reply(self.texts["default"])
            after = replace(traj, observation=traj.observation.then(reply.message()))
        record = decision_record(decision, episode=self.id, t=t, extra={"reply": reply.to_dict()})
        try:
            self._save(after, t, record)
        except Exception as exc:
            reply = Reply(self.texts["check_failed"])
            decision = replace(
                decision,
                kind=DecisionKind.FALLBACK,
                action=reply,
                reason=f"{decision.reason}; the session store failed, so the step fails closed",
                errors=(*decision.errors, f"store: {type(exc).__name__}: {exc}"),
            )
        seconds = time.perf_counter() - start
        summary = decision_summary(decision, reply, session=self.id, t=t, seconds=seconds)
        return GuardReply(reply, decision, summary)

    def _held(self, start: float) -> GuardReply:
        """A paused or ended session's answer: the default text; no model, no state change."""
        how = "ended" if self.state.ended else "paused"
        reason = f"the session is {how} by an operator; the upstream was not called"
        reply = Reply(self.texts["default"])
        decision = Decision(DecisionKind.DEFER, None, reason=reason)
        seconds = time.perf_counter() - start
        summary = decision_summary(
            decision, reply, session=self.id, t=self.state.t, seconds=seconds
        )
        return GuardReply(reply, decision, {**summary, "kind": how, how: True})

    def _check(self, candidate: Any, messages: Sequence[Any] | None) -> CheckResult:
        reply = reply_from(candidate)
        traj, _ = self._catch_up(messages, None)
        verdicts = self.observer.verdicts(traj, reply)
        summary = {"session": self.id, **verdicts_summary(verdicts)}
        return CheckResult(all(v.admissible for v in verdicts), verdicts, summary)

    def _commit_executed(self, candidate: Any, messages: Sequence[Any] | None) -> CheckResult:
        reply = reply_from(candidate)
        traj, t = self._catch_up(messages, None)
        verdicts = self.observer.verdicts(traj, reply)
        after = self._advance(traj, reply, "executed by the client")
        summary = {"session": self.id, "t": t + 1, **verdicts_summary(verdicts)}
        record = {
            "type": "commit",
            "episode": self.id,
            "t": t + 1,
            "action": reply.to_dict(),
            **summary,
        }
        self._save(after, t + 1, record)
        return CheckResult(all(v.admissible for v in verdicts), verdicts, summary)


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
