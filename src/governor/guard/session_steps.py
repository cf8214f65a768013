"""The work of a guarded session's calls, run in a worker thread under the session's locks.

:class:`SessionSteps` holds what :class:`~governor.guard.session.GuardSession` does once a call
holds its locks (see that module's doc for the behaviour): read the state, catch the
conversation up, commit and save (failing closed is the caller's), judge and commit candidates,
record operators' acts, reset; ``respond``'s own work is in :mod:`.session_respond`. Imports the
core types, the observer, the supervision package and the guard's messages, state, store,
summary, stream policy and supervision.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

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
from governor.guard.policy_stream import StreamPolicy
from governor.guard.state import SessionState, state_from_json, state_to_json
from governor.guard.store import SessionStore
from governor.guard.summary import verdicts_summary
from governor.guard.supervision import GuardSupervision
from governor.observer import Observer
from governor.supervision import SupervisorState
from governor.supervision.operator import ActKind, OperatorAct


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


class SessionSteps:
    """The calls' work; :class:`~governor.guard.session.GuardSession` adds the API and locks."""

    id: str
    supervision: GuardSupervision | None
    observer: Observer
    store: SessionStore
    texts: dict[str, str]
    stream: StreamPolicy
    _state: SessionState | None

    @property
    def state(self) -> SessionState:
        """The session's state after its last saved decision (read from the store once; from a
        shared store, again at the start of each call)."""
        if self._state is None:
            saved = self.store.load(self.id)
            constraints = self.observer.constraints
            where = f"session {self.id}"
            state = (
                SessionState(memory={c.name: c.initial_state(None) for c in constraints})
                if saved is None
                else state_from_json(saved, constraints, where)
            )
            if self.supervision is not None:
                sup = self.supervision.restored(state.supervisor, where)
                state = replace(state, supervisor=sup)
            self._state = state
        return self._state

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
        self.store.save(self.id, state_to_json(after, self.observer.constraints), record)
        self._state = after
        return after

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

    def _save(
        self,
        traj: Trajectory,
        t: int,
        record: Mapping[str, Any],
        supervisor: SupervisorState | None = None,
    ) -> None:
        conv = traj.observation
        sup = supervisor or self.state.supervisor
        state = SessionState(
            conv.messages, dict(traj.memory), traj.feedback, t, self.state.acts, sup
        )
        self.store.save(self.id, state_to_json(state, self.observer.constraints), record)
        self._state = state

    def _judge(self) -> Observer:
        """The observer whose constraints judge a candidate now (with modes: the current one's)."""
        sup = self.state.supervisor
        if self.supervision is None or sup is None:
            return self.observer
        return self.supervision.observer_for(sup)

    def _check(self, candidate: Any, messages: Sequence[Any] | None) -> CheckResult:
        reply = reply_from(candidate)
        traj, _ = self._catch_up(messages, None)
        verdicts = self._judge().verdicts(traj, reply)
        summary = {"session": self.id, **verdicts_summary(verdicts)}
        return CheckResult(all(v.admissible for v in verdicts), verdicts, summary)

    def _commit_executed(self, candidate: Any, messages: Sequence[Any] | None) -> CheckResult:
        reply = reply_from(candidate)
        traj, t = self._catch_up(messages, None)
        verdicts = self._judge().verdicts(traj, reply)
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
