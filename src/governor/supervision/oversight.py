"""The oversight level: the observer whose actions are modes, and how a chosen mode is committed.

:class:`ModeOversight` is the core loop with the selector as its policy, the mode graph and the
LTL mode rules as hard constraints and the safe mode as fallback. It judges one step's
:class:`~governor.supervision.mode_rules.Snapshot` (:meth:`~ModeOversight.select`), executes an
operator's mode as said while recording what the rules think of it
(:meth:`~ModeOversight.operator_decision`), and folds an executed mode into the
:class:`~governor.supervision.state.SupervisorState` (:meth:`~ModeOversight.commit`). It runs
without a time budget (no thread) and keeps nothing between steps: the progressed rules travel
in the state.
"""

from __future__ import annotations

from dataclasses import replace

from governor.config import ObserverConfig
from governor.core import Decision, DecisionKind, Trajectory
from governor.errors import ConfigError, expected
from governor.observer import Observer
from governor.supervision.mode_rules import GRAPH, RULES, ModeGraphConstraint, ModeRules, Snapshot
from governor.supervision.modes import ModeGraph
from governor.supervision.operator import ActKind
from governor.supervision.selection import ForcedFirst, ModeSelector, SafeModeFallback
from governor.supervision.state import SupervisorState


class ModeOversight:
    """The mode observer over ``graph`` (see the module doc); refuses unknown modes."""

    def __init__(
        self, graph: ModeGraph, selector: ModeSelector, rules: ModeRules, safe_mode: str | None
    ) -> None:
        for m in selector.modes:
            if m not in graph:
                raise ConfigError(f"selector: mode {expected(f'one of {graph.names}', m)}")
        if safe_mode is not None and safe_mode not in graph:
            raise ConfigError(f"safe mode: {expected(f'one of {graph.names}', safe_mode)}")
        self.graph, self.selector, self.rules, self.safe_mode = graph, selector, rules, safe_mode
        self.observer = Observer(
            ForcedFirst(selector),
            (ModeGraphConstraint(graph), rules.constraint),
            SafeModeFallback(safe_mode) if safe_mode else None,
            config=ObserverConfig(n_candidates=len(graph), max_regenerations=0, time_budget_s=None),
        )

    def trajectory(self, s: SupervisorState, snap: Snapshot) -> Trajectory:
        """The mode observer's trajectory: the snapshot, the current mode, the progressed rules."""
        monitor = s.monitor if s.monitor is not None else self.rules.initial()
        if monitor.names != self.rules.names:
            raise ConfigError(
                f"supervisor state: {expected(f'mode rules {self.rules.names}', monitor.names)}"
            )
        return Trajectory(snap, memory={GRAPH: snap.mode, RULES: monitor})

    def select(self, s: SupervisorState, snap: Snapshot) -> Decision:
        """The best-ranked admissible mode (or the forced one, or the safe mode, or nothing)."""
        return self.observer.step(self.trajectory(s, snap))

    def commit(self, s: SupervisorState, snap: Snapshot, decision: Decision) -> SupervisorState:
        """``s`` with the executed mode engaged and the rules progressed over it."""
        mode = decision.action
        traj = self.trajectory(s, snap)
        after = self.observer.commit(traj, decision, replace(snap, chosen=mode))
        monitor = self.rules.restart_violated(after.memory[RULES])
        since = s.mode_since if (s.engaged and s.mode == mode) else s.t
        return replace(s, mode=mode, engaged=True, mode_since=since, monitor=monitor)

    def operator_decision(self, s: SupervisorState, snap: Snapshot) -> Decision:
        """The operator's mode, executed as said; the rules' verdicts on it are kept, so a rule
        it breaks is an executed oversight violation in the trace."""
        mode = s.operator_mode
        verdicts = self.observer.verdicts(self.trajectory(s, snap), mode)
        who = next((a for a in reversed(s.audit) if a.kind is ActKind.SET_MODE), None)
        by = f"{who.who}: {who.why}" if who else "operator"
        return Decision(DecisionKind.EXECUTE, mode, verdicts, None, f"mode set by {by}")
