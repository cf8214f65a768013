"""The guarded reply of a session: the work of ``respond`` (and its streamed variant).

:class:`RespondSteps` adds to :class:`~.session_steps.SessionSteps` what ``respond`` does once
the call holds the session's locks (see :mod:`.session` for the behaviour): catch the
conversation up, ask the supervisor, step the (acting mode's) observer, commit the executed
reply, save the state with the decision's record (failing closed). Streamed, the observer's
upstream goes through a hold-back buffer (:mod:`.holdback`) and the trajectory commits what the
client saw; with ``n > 1`` the admitted choices are answered and none is committed
(:mod:`.choices`). Imports the core types, the observer, the trace records, the supervision
package and the guard's choices, hold-back buffer, messages, release gate, summary and steps.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from governor.core import Decision, DecisionKind, Trajectory
from governor.guard.choices import admitted_choices, choice_observer
from governor.guard.holdback import executed_streamed, streaming_observer
from governor.guard.messages import Reply, Sampling
from governor.guard.release import ReleaseGate
from governor.guard.session_steps import GuardReply, SessionSteps
from governor.guard.summary import decision_summary, supervision_summary
from governor.supervision import SupervisorDecision
from governor.trace.record import decision_record


class RespondSteps(SessionSteps):
    """``respond``'s work (see the module doc)."""

    def _respond_streaming(
        self,
        messages: Sequence[Any],
        tools: Sequence[Any] | None,
        sampling: Sampling,
        gate: ReleaseGate,
    ) -> None:
        """:meth:`_respond` with the upstream streamed through ``gate``; the rest of the reply and
        the end are sent once the step is saved."""
        answer = self._respond(messages, tools, sampling, gate)
        gate.finish(answer.reply, answer.decision, answer.summary)

    def _respond(
        self,
        messages: Sequence[Any],
        tools: Sequence[Any] | None,
        sampling: Sampling,
        gate: ReleaseGate | None = None,
    ) -> GuardReply:
        start = time.perf_counter()
        if self.state.paused or self.state.ended:
            return self._held(start)
        traj, t = self._catch_up(messages, tools, sampling)
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
                after = replace(after, feedback=decision.feedback if decision.feedback else None)
            else:  # nothing admissible was executed: say the default text, commit nothing
                reply = seen(Reply(texts["default"]))
                after = replace(traj, observation=traj.observation.then(reply.message()))
        extra: dict[str, Any] = {"reply": reply.to_dict()}
        if choices:
            extra["choices"] = [c.to_dict() for c in choices]
        if gate is not None:
            extra["stream"] = gate.summary(decision, executed_streamed(decision))
        if sup is not None and self.supervision is not None:
            extra.update(self.supervision.record(sup, decision if sup.acts else None))
        record = decision_record(decision, episode=self.id, t=t, extra=extra)
        try:
            self._save(after, t, record, None if sup is None else sup.state)
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
        summary = decision_summary(decision, reply, session=self.id, t=t, seconds=seconds)
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
            decision, reply, session=self.id, t=self.state.t, seconds=seconds
        )
        sup = self.state.supervisor
        if self.supervision is not None and sup is not None:  # what the supervisor says (unsaved)
            summary["supervision"] = supervision_summary(self.supervision.step(sup, ()), None)
        return GuardReply(reply, decision, {**summary, "kind": how, how: True})
