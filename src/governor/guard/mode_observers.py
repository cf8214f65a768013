"""The supervisor in the guard: a policy's modes, each an observer in front of the upstream.

:class:`GuardSupervision` builds, from a policy with a supervision section, one observer per mode
(the upstream under the mode's system prompt, or the mode's fixed text for a silent mode; the
policy's LTL rules, the mode's own LTL rules and the mode's overlays as constraints; the mode's
fallback texts) and the :class:`~governor.supervision.Supervisor` above them, through the
policy's :class:`~governor.guard.spec.mode_spec.SupervisionSpec`. A guarded session asks
:meth:`GuardSupervision.step` first at each ``respond``: the user's turns since the last reply are
the observation (``user_text``; ``refused`` when one reads as declining to talk; ``hour``, the
server's local time, for a time window), and the shipped classifiers read what they need from it.
When a mode acts, that mode's observer proposes and judges; otherwise the session answers with
:meth:`text_for` and calls no model. Every LLM call is the mode observer's, counted as usual.

Every LTL rule (the policy's and each mode's) reads every executed action, whichever mode said
it; a mode's own rules and overlays judge only that mode's replies. If the supervisor fails, the
step fails closed: a ``wait`` that says the ``check_failed`` text. Imports the core types, the
observer, the backend interface, the supervision package and the guard's call checks, constraints,
fallback,
exchange, spec (the policy and its mode spec) and upstream.
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, replace
from typing import Any

from governor.backends.base import Backend
from governor.core import Candidate, Constraint, Decision, Feedback, Policy, Trajectory
from governor.errors import ConfigError, expected
from governor.guard.call_checks import CALL_CHECKS, call_constraints
from governor.guard.constraints import TextOverlayConstraint, ToolLTLConstraint
from governor.guard.exchange import Message, Reply
from governor.guard.fallback import GuardFallback
from governor.guard.spec.guard_policy import GuardPolicy
from governor.guard.spec.mode_spec import ModeSpec
from governor.guard.upstream import UpstreamPolicy
from governor.observer import Observer
from governor.supervision import (
    SupervisionKind,
    SupervisorDecision,
    SupervisorState,
    activity_violations,
)

FAILED = "supervisor_failed"
"""The rule a fail-closed wait names when the supervisor itself raised."""


class FixedReply(Policy):
    """A silent mode's policy: its one fixed text, no model."""

    name = "fixed reply"

    def __init__(self, text: str) -> None:
        self.text = text

    def propose(self, traj: Trajectory, feedback: Feedback | None, n: int) -> list[Candidate[Any]]:
        return [Candidate(Reply(self.text), self.text)]


class GuardSupervision:
    """The supervisor of ``policy`` and its modes' observers over ``backend`` (module doc)."""

    def __init__(self, policy: GuardPolicy, backend: Backend) -> None:
        spec = policy.supervision
        if spec is None:
            raise ConfigError(f"{policy.source}: {expected('a supervision section', None)}")
        self.policy = policy
        shared: list[Constraint] = call_constraints(policy.tools)
        texts = {c.name: c.text for c in shared if isinstance(c, CALL_CHECKS)}
        shared += [ToolLTLConstraint(r, policy.vocabulary, policy.checks) for r in policy.ltl]
        texts |= {r.name: r.text for r in policy.ltl}
        union: dict[str, Constraint] = {c.name: c for c in shared}
        observers: dict[str, Observer] = {}
        for m in spec.modes:
            own = [ToolLTLConstraint(r, policy.vocabulary, policy.checks) for r in m.ltl]
            ranked = sorted(m.overlays, key=lambda o: -o.priority)
            texts_of = [TextOverlayConstraint(o, policy.checks) for o in ranked if o.kind != "permissive"]  # fmt: skip
            constraints: list[Constraint] = [*shared, *own, *texts_of]
            for c in constraints:
                union.setdefault(c.name, c)
            rules = {**texts, **{r.name: r.text for r in m.ltl}}
            observers[m.name] = Observer(
                self._proposer(m, backend),
                constraints,
                GuardFallback(m.fallbacks, rules),
                config=policy.observer,
            )
        self.supervisor = spec.supervisor(observers)
        self.constraints: tuple[Constraint, ...] = tuple(union.values())
        self.texts: Mapping[str, Mapping[str, str]] = {m.name: m.fallbacks for m in spec.modes}
        self.refusal = re.compile("|".join(f"(?:{p})" for p in spec.refusal_phrases), re.I)

    def _proposer(self, mode: ModeSpec, backend: Backend) -> Policy:
        if mode.silent:
            return FixedReply(mode.fallbacks["default"])
        up = self.policy.upstream
        return UpstreamPolicy(
            backend,
            system_prompt=mode.system_prompt or up.system_prompt,
            temperature=up.temperature,
            max_tokens=up.max_tokens,
        )

    # ------------------------------------------------------------------ state

    def start(self) -> SupervisorState:
        return self.supervisor.start()

    def restored(self, state: SupervisorState | None, where: str) -> SupervisorState:
        """A saved supervisor state, checked against this policy (None: a new session's)."""
        if state is None:
            return self.start()
        names = self.supervisor.rules.names
        if state.monitor is not None and state.monitor.names != names:
            raise ConfigError(
                f"{where}: supervisor state: {expected(f'mode rules {names}', state.monitor.names)}"
                " (the policy's mode rules changed since the session was saved); start a new session"
            )
        for mode in (state.mode, state.operator_mode):
            if mode is not None and mode not in self.supervisor.graph:
                raise ConfigError(
                    f"{where}: supervisor state: mode {expected(f'one of {self.supervisor.graph.names}', mode)};"
                    " start a new session"
                )
        return state

    def restart(self, old: SupervisorState) -> SupervisorState:
        """A new session's state that keeps the operator's pause, end, mode and audit trail."""
        return replace(
            self.start(),
            paused=old.paused,
            ended=old.ended,
            operator_mode=old.operator_mode,
            audit=old.audit,
        )

    # ------------------------------------------------------------------ one step

    def observation(self, new: Sequence[Message]) -> dict[str, Any]:
        """What the supervisor observes: the user's turns in ``new`` (module doc)."""
        said = "\n".join(m.content for m in new if m.role == "user" and m.content)
        now = time.localtime()
        seen: dict[str, Any] = {"user_text": said, "hour": now.tm_hour + now.tm_min / 60.0}
        if said.strip() and self.refusal.search(said):
            seen["refused"] = True
        return seen

    def step(self, state: SupervisorState, new: Sequence[Message]) -> SupervisorDecision:
        """The supervisor's decision on the user's turns ``new``; a failure waits (fail closed)."""
        try:
            return self.supervisor.step(state, self.observation(new))
        except Exception as exc:
            why = f"the supervisor failed ({type(exc).__name__}: {exc}); no model was called"
            return SupervisorDecision(
                SupervisionKind.WAIT, None, state.mode if state.engaged else None, why, state,
                rule=FAILED,
            )  # fmt: skip

    def observer(self, mode: str) -> Observer:
        return self.supervisor.graph[mode].observer

    def observer_for(self, state: SupervisorState) -> Observer:
        """The observer that judges a candidate now: the operator's mode, the current one, or
        the initial one."""
        return self.observer(state.operator_mode or state.mode or self.supervisor.graph.initial)

    def texts_for(self, mode: str | None) -> Mapping[str, str]:
        """The fallback texts of ``mode`` (the policy's when None)."""
        return self.policy.fallbacks if mode is None else self.texts[mode]

    def text_for(self, sup: SupervisorDecision) -> str:
        """What a step in which no mode acts says: the mode's (or the policy's) default text,
        the ``check_failed`` text when the supervisor failed."""
        texts = self.texts_for(sup.mode or sup.previous)
        return texts["check_failed"] if sup.rule == FAILED else texts["default"]

    def record(self, sup: SupervisorDecision, activity: Decision | None) -> dict[str, Any]:
        """What a decision record keeps of the step: the oversight record and the activity
        level's violations."""
        below = [] if activity is None else activity_violations(activity, sup.mode)
        return {
            **sup.record(),
            "level": "activity" if activity is not None else "oversight",
            "activity_violations": [asdict(v) for v in below],
        }
