"""A supervised conversation, one step at a time: the supervisor above, the chosen mode's observer
below, both in the same trace.

Each :meth:`SupervisedSession.turn` takes one step's observation (the user's turn in
``user_text`` and whatever the classifiers read), asks the supervisor for a decision and, when a
mode acts, lets that mode's observer decide the reply on the activity trajectory (the dialogue,
as in :class:`~governor.conversation.chat.ChatSession`). A new interaction or an override that
ends the line starts the activity afresh; a mode switch otherwise keeps the dialogue and gives
the new mode's constraints their initial state. Decisions go to the trace at two levels: the
supervisor's (``extra.level == "oversight"``, a wait or disengage included) and the mode's
(``extra.level == "activity"``), so a wrong mode and bad behaviour inside a mode stay apart.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from governor.core import Decision, Trajectory
from governor.observer import Observer
from governor.runner import DecisionSink
from governor.supervision.decision import SupervisorDecision, Violation, activity_violations
from governor.supervision.gating import user_text
from governor.supervision.operator import ActKind
from governor.supervision.state import SupervisorState
from governor.supervision.supervisor import Supervisor


@dataclass(frozen=True)
class SupervisedTurn:
    """One step: the supervisor's decision, the mode's decision and reply (None: nothing said)."""

    supervision: SupervisorDecision
    activity: Decision | None
    reply: Any | None

    @property
    def mode(self) -> str | None:
        return self.supervision.mode

    def violations(self) -> tuple[Violation, ...]:
        """Oversight-level violations first, then activity-level ones."""
        below = () if self.activity is None else activity_violations(self.activity, self.mode)
        return (*self.supervision.violations(), *below)


class SupervisedSession:
    """Keeps the supervisor's state and the activity trajectory between steps."""

    def __init__(
        self,
        supervisor: Supervisor,
        *,
        state: SupervisorState | None = None,
        trace: DecisionSink | None = None,
        episode: str | None = None,
    ) -> None:
        self.supervisor = supervisor
        self.state = state or supervisor.start()
        self.trace = trace
        self.episode = episode or uuid.uuid4().hex[:12]
        self.traj: Trajectory | None = None
        self._pending: tuple[Observer, Decision] | None = None
        self.turns: list[SupervisedTurn] = []

    def operate(self, kind: ActKind | str, *, who: str, why: str, mode: str | None = None) -> None:
        """An operator's act (pause, resume, set_mode, release, end), audited in the state."""
        self.state = self.supervisor.operate(self.state, kind, who=who, why=why, mode=mode)

    def turn(self, observation: Mapping[str, Any]) -> SupervisedTurn:
        """The supervised step for ``observation``."""
        said = user_text(observation)
        traj = self._advance(said)
        sup = self.supervisor.step(self.state, observation)
        self.state = sup.state
        activity: Decision | None = None
        reply = None
        if sup.acts:
            assert sup.mode is not None
            observer = self.supervisor.graph[sup.mode].observer
            if sup.ends_line or traj is None:
                traj = observer.start(said)
            else:
                traj = _with_slots(traj, observer)
            activity = observer.step(traj)
            self._pending = (observer, activity)
            reply = activity.action if activity.executed else None
        elif sup.kind.value in ("disengage", "end"):
            traj = None
        self.traj = traj
        result = SupervisedTurn(sup, activity, reply)
        self.turns.append(result)
        self._record(result, said)
        return result

    def _advance(self, said: str) -> Trajectory | None:
        """The activity trajectory with the user's new turn (committing the last reply)."""
        pending, self._pending = self._pending, None
        if self.traj is None:
            return None
        if pending is not None and pending[1].executed:
            observer, decision = pending
            return observer.commit(self.traj, decision, said)
        return replace(self.traj, observation=said)

    def _record(self, turn: SupervisedTurn, said: str) -> None:
        if self.trace is None:
            return
        t = turn.supervision.state.t
        extra = {**turn.supervision.record(), "user": said}
        self.trace.record(turn.supervision.as_decision(), episode=self.episode, t=t, extra=extra)
        if turn.activity is not None:
            below = {
                "level": "activity",
                "mode": turn.mode,
                "violations": [
                    dataclasses.asdict(v) for v in activity_violations(turn.activity, turn.mode)
                ],
            }
            self.trace.record(turn.activity, episode=self.episode, t=t, extra=below)

    def summary(self) -> dict[str, Any]:
        """Counts per supervisor kind and violation level, and the operator audit trail."""
        levels = [v.level for turn in self.turns for v in turn.violations()]
        return {
            "steps": len(self.turns),
            "supervision": dict(self.state.counts),
            "oversight_violations": levels.count("oversight"),
            "activity_violations": levels.count("activity"),
            "audit": [a.to_json() for a in self.state.audit],
        }

    def close(self) -> None:
        """Record the session's summary (the audit trail with it) in the trace."""
        if self.trace is not None:
            self.trace.record_episode(self.episode, self.summary())


def _with_slots(traj: Trajectory, observer: Observer) -> Trajectory:
    """``traj`` with an initial memory slot for each of ``observer``'s constraints it lacks."""
    missing = {
        c.name: c.initial_state(traj.observation)
        for c in observer.constraints
        if c.name not in traj.memory
    }
    return replace(traj, memory={**traj.memory, **missing}) if missing else traj
