"""The supervisor: an observer whose actions are modes, above the modes' own observers.

One step (:meth:`Supervisor.step`), in order of authority:

1. an ended session stays ended (``end``); a paused one does not engage (``wait``);
2. the operator's mode, while set, is executed as the operator said (``operator``); the mode
   rules still judge it, and a rule it breaks is an executed oversight violation in the trace;
3. a protective rule that fires forces its mode or ends the line (``override``), against the
   gate and a cooldown too; the forced mode is still judged by the mode rules;
4. repeated refusals stop prompting for a cooldown (``disengage``, then ``wait``); an interaction
   the world reports finished, or a sustained gate rule that stops holding, ends it
   (``disengage``); a closed gate keeps a new interaction from starting (``wait``, naming rules);
5. otherwise the selector ranks the modes and the mode observer (the core loop: selector as
   policy, the mode graph and the LTL mode rules as hard constraints, the safe mode as fallback)
   executes the best admissible one (``act``); none admissible and the safe mode refused: ``wait``.

The state is explicit (:class:`SupervisorState`, JSON round trip); the supervisor keeps nothing
between steps. The mode observer runs without a time budget (no thread): a decision without
lookahead costs well under a millisecond.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from governor.config import ObserverConfig, check_range, option
from governor.core import Decision, DecisionKind, Trajectory
from governor.errors import ConfigError, expected
from governor.observer import Observer
from governor.supervision.acts import apply_act
from governor.supervision.decision import ACTING, SupervisionKind, SupervisorDecision
from governor.supervision.gating import EngagementGate, check_features
from governor.supervision.modes import ModeGraph
from governor.supervision.operator import ActKind, OperatorAct
from governor.supervision.override import ProtectiveRule
from governor.supervision.rules import GRAPH, RULES, ModeGraphConstraint, ModeRules, Snapshot
from governor.supervision.selection import ForcedFirst, ModeSelector, SafeModeFallback
from governor.supervision.state import SupervisorState, observe, remember


@dataclass(frozen=True)
class SupervisorConfig:
    """Refusal cooldown and the windows the protective rules read."""

    max_refusals: int = option(3, "consecutive refusals after which prompting stops")
    cooldown_steps: int = option(5, "steps without prompting after repeated refusals")
    window: int = option(8, "recent steps of each feature and user turn kept in the state")
    text_chars: int = option(300, "characters of each recent user turn kept in the state")

    def __post_init__(self) -> None:
        check_range("max_refusals", self.max_refusals, 1, 1000)
        check_range("cooldown_steps", self.cooldown_steps, 0, 1_000_000)
        check_range("window", self.window, 1, 256)
        check_range("text_chars", self.text_chars, 1, 10_000)


class Supervisor:
    """Modes, their selector and rules, the engagement gate and the protective rules."""

    def __init__(
        self,
        graph: ModeGraph,
        selector: ModeSelector,
        *,
        gate: EngagementGate | None = None,
        rules: Sequence[tuple[str, str, str]] = (),
        propositions: Mapping[str, str] | None = None,
        overrides: Sequence[ProtectiveRule] = (),
        safe_mode: str | None = None,
        config: SupervisorConfig | None = None,
    ) -> None:
        self.graph = graph
        self.gate = gate or EngagementGate(())
        self.config = config or SupervisorConfig()
        self.rules = ModeRules(rules, propositions or {}, graph, self.gate.features)
        self.overrides = tuple(overrides)
        for o in self.overrides:
            for f in o.features:
                check_features(f"override {o.name!r}", f, self.gate.features)
            if o.mode is not None and o.mode not in graph:
                raise ConfigError(
                    f"override {o.name!r}: mode {expected(f'one of {graph.names}', o.mode)}"
                )
        for m in selector.modes:
            if m not in graph:
                raise ConfigError(f"selector: mode {expected(f'one of {graph.names}', m)}")
        if safe_mode is not None and safe_mode not in graph:
            raise ConfigError(f"safe mode: {expected(f'one of {graph.names}', safe_mode)}")
        self.safe_mode = safe_mode
        self.selector = selector
        self.observer = Observer(
            ForcedFirst(selector),
            (ModeGraphConstraint(graph), self.rules.constraint),
            SafeModeFallback(safe_mode) if safe_mode else None,
            config=ObserverConfig(n_candidates=len(graph), max_regenerations=0, time_budget_s=None),
        )

    def start(self) -> SupervisorState:
        """The state of a new session."""
        return SupervisorState(monitor=self.rules.initial())

    # ------------------------------------------------------------------ operator acts

    def operate(
        self,
        state: SupervisorState,
        kind: ActKind | str,
        *,
        who: str,
        why: str,
        mode: str | None = None,
        at: float | None = None,
    ) -> SupervisorState:
        """Apply an operator's act; it goes into the audit trail with who, when and why."""
        act = OperatorAct(ActKind(kind), who, why, time.time() if at is None else at, mode, state.t)
        return apply_act(state, act, self.graph.names)

    # ------------------------------------------------------------------ one step

    def step(self, state: SupervisorState, observation: Mapping[str, Any]) -> SupervisorDecision:
        """Decide this step (see the module doc); the decision carries the new state."""
        start = time.perf_counter()
        s = observe(state, observation, self.config.window, self.config.text_chars)
        features = self.gate.classify(observation, s)
        labels = self.rules.labels(features)
        s = remember(s, features, self.config.window)

        def done(
            kind: SupervisionKind, reason: str, new: SupervisorState, **kw: Any
        ) -> SupervisorDecision:
            new = new.counted(kind.value)
            return SupervisorDecision(
                kind,
                new.mode if kind in ACTING else None,
                state.mode if state.engaged else None,
                reason,
                new,
                features=features,
                labels=labels,
                seconds=time.perf_counter() - start,
                **kw,
            )

        if s.ended:
            return done(
                SupervisionKind.END, "the session was ended by an operator", s, rule="operator"
            )
        if s.paused:
            who = next((a.who for a in reversed(s.audit) if a.kind is ActKind.PAUSE), "operator")
            return done(SupervisionKind.WAIT, f"paused by {who}", s, rule="operator")
        snap = Snapshot(s.t, s.mode if s.engaged else None, s.mode_steps, features, labels)
        if s.operator_mode is not None:
            return self._operator(s, snap, done)
        override = next((o for r in self.overrides if (o := r.check(features, s))), None)
        if override is not None:
            forced = override.mode or (s.mode if s.engaged else None) or self.graph.initial
            decision = self._select(s, replace(snap, forced=forced))
            if decision.executed:
                new = self._commit(s, snap, decision)
                why = f"{override.action} by {override.rule}: {override.reason}"
                return done(
                    SupervisionKind.OVERRIDE,
                    why,
                    new,
                    rule=override.rule,
                    override=override,
                    oversight=decision,
                )
            why = f"override {override.rule} wanted {forced!r}, refused: {decision.reason}"
            return done(
                SupervisionKind.WAIT,
                why,
                s,
                rule=override.rule,
                override=override,
                oversight=decision,
            )
        cfg = self.config
        if s.refusals >= cfg.max_refusals:
            why = f"{s.refusals} refusals in a row: no prompting for {cfg.cooldown_steps} steps"
            cooled = replace(
                s, engaged=False, mode=None, refusals=0, cooldown_until=s.t + cfg.cooldown_steps
            )
            return done(SupervisionKind.DISENGAGE, why, cooled, rule="refusal_cooldown")
        if s.t <= s.cooldown_until:
            left = s.cooldown_until - s.t + 1
            return done(
                SupervisionKind.WAIT,
                f"cooldown after refusals: {left} step(s) left",
                s,
                rule="refusal_cooldown",
            )
        if s.engaged and observation.get("done"):
            return done(
                SupervisionKind.DISENGAGE, "the interaction finished", _idle(s), rule="finished"
            )
        blocked = self.gate.blocking(features, sustained=s.engaged)
        if blocked:
            if s.engaged:
                return done(
                    SupervisionKind.DISENGAGE,
                    "gate closed: " + "; ".join(blocked),
                    _idle(s),
                    rule=blocked[0].split(" ")[0],
                    blocked_by=blocked,
                )
            return done(
                SupervisionKind.WAIT,
                "gate closed: " + "; ".join(blocked),
                s,
                rule=blocked[0].split(" ")[0],
                blocked_by=blocked,
            )
        decision = self._select(s, snap)
        if not decision.executed:
            return done(
                SupervisionKind.WAIT,
                f"no admissible mode: {decision.reason}",
                s,
                rule="mode_rules",
                oversight=decision,
            )
        return done(
            SupervisionKind.ACT,
            decision.reason,
            self._commit(s, snap, decision),
            oversight=decision,
        )

    # ------------------------------------------------------------------ parts

    def _trajectory(self, s: SupervisorState, snap: Snapshot) -> Trajectory:
        monitor = s.monitor if s.monitor is not None else self.rules.initial()
        if monitor.names != self.rules.names:
            raise ConfigError(
                f"supervisor state: {expected(f'mode rules {self.rules.names}', monitor.names)}"
            )
        return Trajectory(snap, memory={GRAPH: snap.mode, RULES: monitor})

    def _select(self, s: SupervisorState, snap: Snapshot) -> Decision:
        return self.observer.step(self._trajectory(s, snap))

    def _commit(self, s: SupervisorState, snap: Snapshot, decision: Decision) -> SupervisorState:
        mode = decision.action
        traj = self._trajectory(s, snap)
        after = self.observer.commit(traj, decision, replace(snap, chosen=mode))
        monitor = self.rules.restart_violated(after.memory[RULES])
        since = s.mode_since if (s.engaged and s.mode == mode) else s.t
        return replace(s, mode=mode, engaged=True, mode_since=since, monitor=monitor)

    def _operator(self, s: SupervisorState, snap: Snapshot, done: Any) -> SupervisorDecision:
        mode = s.operator_mode
        traj = self._trajectory(s, snap)
        verdicts = self.observer.verdicts(traj, mode)
        who = next((a for a in reversed(s.audit) if a.kind is ActKind.SET_MODE), None)
        by = f"{who.who}: {who.why}" if who else "operator"
        decision = Decision(DecisionKind.EXECUTE, mode, verdicts, None, f"mode set by {by}")
        new = self._commit(s, snap, decision)
        return done(
            SupervisionKind.OPERATOR,
            decision.reason,
            new,
            rule="operator",
            oversight=decision,
        )


def _idle(s: SupervisorState) -> SupervisorState:
    return replace(s, engaged=False, mode=None)
