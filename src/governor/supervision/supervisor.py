"""The supervisor: an observer whose actions are modes, above the modes' own observers.

One step (:meth:`Supervisor.step`), in order of authority (the stages are in
:mod:`~governor.supervision.stages`):

1. an ended session stays ended (``end``); a paused one does not engage (``wait``);
2. the operator's mode, while set, is executed as the operator said (``operator``); the mode
   rules still judge it, and a rule it breaks is an executed oversight violation in the trace;
3. a protective rule that fires forces its mode or ends the line (``override``), against the
   gate and a cooldown too; the forced mode is still judged by the mode rules;
4. repeated refusals stop prompting for a cooldown (``disengage``, then ``wait``); an interaction
   the world reports finished, or a sustained gate rule that stops holding, ends it
   (``disengage``); a closed gate keeps a new interaction from starting (``wait``, naming rules);
5. otherwise the selector ranks the modes and the mode observer
   (:class:`~governor.supervision.oversight.ModeOversight`: the core loop with the selector as
   policy, the mode graph and the LTL mode rules as hard constraints, the safe mode as fallback)
   executes the best admissible one (``act``); none admissible and the safe mode refused: ``wait``.

The state is explicit (:class:`SupervisorState`, JSON round trip); the supervisor keeps nothing
between steps. The mode observer runs without a time budget (no thread): a decision without
lookahead costs well under a millisecond.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from governor.config import check_range, option
from governor.errors import ConfigError, expected
from governor.supervision import stages
from governor.supervision.acts import apply_act
from governor.supervision.decision import ACTING, SupervisorDecision
from governor.supervision.gating import EngagementGate, check_features
from governor.supervision.mode_rules import ModeRules, Snapshot
from governor.supervision.modes import ModeGraph
from governor.supervision.operator import ActKind, OperatorAct
from governor.supervision.override import ProtectiveRule
from governor.supervision.oversight import ModeOversight
from governor.supervision.selection import ModeSelector
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
        self.oversight = ModeOversight(graph, selector, self.rules, safe_mode)
        self.safe_mode = safe_mode
        self.selector = selector
        self.observer = self.oversight.observer

    def start(self) -> SupervisorState:
        """The state of a new session."""
        return SupervisorState(monitor=self.rules.initial())

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

    def step(self, state: SupervisorState, observation: Mapping[str, Any]) -> SupervisorDecision:
        """Decide this step (see the module doc); the decision carries the new state."""
        start = time.perf_counter()
        cfg, oversight = self.config, self.oversight
        s = observe(state, observation, cfg.window, cfg.text_chars)
        features = self.gate.classify(observation, s)
        labels = self.rules.labels(features)
        s = remember(s, features, cfg.window)
        snap = Snapshot(s.t, s.mode if s.engaged else None, s.mode_steps, features, labels)
        out = (
            stages.authority(s)
            or stages.operator(oversight, s, snap)
            or stages.protective(oversight, self.overrides, s, snap)
            or stages.restraint(
                self.gate, cfg.max_refusals, cfg.cooldown_steps, s, observation, features
            )
            or stages.act(oversight, s, snap)
        )
        new = out.state.counted(out.kind.value)
        return SupervisorDecision(
            out.kind,
            new.mode if out.kind in ACTING else None,
            state.mode if state.engaged else None,
            out.reason,
            new,
            features=features,
            labels=labels,
            seconds=time.perf_counter() - start,
            **out.extra,
        )
