"""A conversation under an observer, one user turn at a time.

The trajectory's observation is the user's latest turn and each executed step's action is the
bot's reply, so :func:`~governor.overlays.features.dialogue.as_dialogue` reads the dialogue from
it. A decision is committed when the next user turn arrives (that turn is its next observation);
after a turn on which the bot said nothing, the next user turn is appended to the last one.
Every LLM call made while the bot answers is counted per turn; a trace, when given, receives
every decision with the turn's call count.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, replace

from governor.core import Decision, Trajectory
from governor.observer import Observer
from governor.overlays.features.dialogue import Dialogue, Turn, as_dialogue
from governor.runner import DecisionSink
from governor.usage import metered


@dataclass(frozen=True)
class TurnResult:
    """The bot's side of one turn: the decision, the reply (None when nothing was said)."""

    context: Dialogue
    decision: Decision
    reply: str | None
    llm_calls: int
    seconds: float
    llm_failed: int = 0

    @property
    def observer_seconds(self) -> float:
        """Time spent judging (checks, feedback, fallback), not proposing."""
        return self.decision.judging_seconds


class ChatSession:
    """Feeds user turns to an observer and keeps the trajectory between them."""

    def __init__(
        self, observer: Observer, *, trace: DecisionSink | None = None, episode: str | None = None
    ) -> None:
        self.observer = observer
        self.trace = trace
        self.episode = episode or uuid.uuid4().hex[:12]
        self.traj: Trajectory | None = None
        self._pending: Decision | None = None
        self.turns: list[TurnResult] = []

    def respond(self, user_text: str) -> TurnResult:
        """The bot's answer to ``user_text``."""
        if self.traj is None:
            traj = self.observer.start(user_text)
        elif self._pending is not None and self._pending.executed:
            traj = self.observer.commit(self.traj, self._pending, user_text)
        else:  # the bot said nothing last turn: the user's turns run together
            traj = replace(self.traj, observation=f"{self.traj.observation} {user_text}")
        start = time.perf_counter()
        with metered() as meter:
            decision = self.observer.step(traj)
        seconds = time.perf_counter() - start
        context = as_dialogue(traj)
        if self.trace is not None:
            extra = {
                "user": user_text,
                "llm_calls": meter.total.calls,
                "llm_failed": meter.total.failed,
            }
            self.trace.record(decision, episode=self.episode, t=traj.t, extra=extra)
        self.traj, self._pending = traj, decision
        reply = decision.action if decision.executed else None
        usage = meter.total
        result = TurnResult(context, decision, reply, usage.calls, seconds, usage.failed)
        self.turns.append(result)
        return result

    @property
    def dialogue(self) -> Dialogue:
        """Everything said so far, the last reply included."""
        if self.traj is None:
            return ()
        turns = as_dialogue(self.traj)
        last = self.turns[-1].reply if self.turns else None
        return (*turns, Turn("assistant", last)) if last is not None else turns

    def close(self) -> None:
        """Record the episode's summary in the trace."""
        if self.trace is not None:
            kinds = [t.decision.kind.value for t in self.turns]
            summary = {
                "outcome": "ended",
                "steps": len(self.turns),
                "decisions": {k: kinds.count(k) for k in sorted(set(kinds))},
                "llm_calls": sum(t.llm_calls for t in self.turns),
                "regenerations": sum(t.decision.regenerations for t in self.turns),
                "interventions": sum(t.decision.intervened for t in self.turns),
            }
            self.trace.record_episode(self.episode, summary)
