"""The stages of one supervisor step, in order of authority; the first that decides wins.

Each stage returns an :class:`Outcome` (the kind, the reason, the new state and what the
decision carries besides: the rule, the override, the oversight decision, the gate rules that
blocked) or None to let the next stage decide:

1. :func:`authority`: an ended session stays ended; a paused one waits;
2. :func:`operator`: the operator's mode, while set, is executed as said;
3. :func:`protective`: a protective rule that fires forces its mode or ends the line, against the
   gate and a cooldown too; the forced mode is still judged by the mode rules;
4. :func:`restraint`: the refusal cooldown, a finished interaction, a closed gate;
5. :func:`act`: the best-ranked admissible mode, or a wait when none is.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from governor.supervision.decision import SupervisionKind
from governor.supervision.gating import EngagementGate
from governor.supervision.mode_rules import Snapshot
from governor.supervision.operator import ActKind
from governor.supervision.override import ProtectiveRule
from governor.supervision.oversight import ModeOversight
from governor.supervision.state import SupervisorState


@dataclass(frozen=True)
class Outcome:
    """What a stage decided: the kind, why, the new state, and the decision's other fields."""

    kind: SupervisionKind
    reason: str
    state: SupervisorState
    extra: Mapping[str, Any] = field(default_factory=dict)


def idle(s: SupervisorState) -> SupervisorState:
    """``s`` with no interaction engaged."""
    return replace(s, engaged=False, mode=None)


def authority(s: SupervisorState) -> Outcome | None:
    """An ended session stays ended; a paused one does not engage."""
    if s.ended:
        return Outcome(
            SupervisionKind.END, "the session was ended by an operator", s, {"rule": "operator"}
        )
    if s.paused:
        who = next((a.who for a in reversed(s.audit) if a.kind is ActKind.PAUSE), "operator")
        return Outcome(SupervisionKind.WAIT, f"paused by {who}", s, {"rule": "operator"})
    return None


def operator(oversight: ModeOversight, s: SupervisorState, snap: Snapshot) -> Outcome | None:
    """The operator's mode, while one is set."""
    if s.operator_mode is None:
        return None
    decision = oversight.operator_decision(s, snap)
    new = oversight.commit(s, snap, decision)
    extra = {"rule": "operator", "oversight": decision}
    return Outcome(SupervisionKind.OPERATOR, decision.reason, new, extra)


def protective(
    oversight: ModeOversight,
    rules: Sequence[ProtectiveRule],
    s: SupervisorState,
    snap: Snapshot,
) -> Outcome | None:
    """The first protective rule that fires: its mode (or the current one) if the rules admit it,
    else a wait naming the refusal."""
    override = next((o for r in rules if (o := r.check(snap.features, s))), None)
    if override is None:
        return None
    forced = override.mode or (s.mode if s.engaged else None) or oversight.graph.initial
    decision = oversight.select(s, replace(snap, forced=forced))
    extra = {"rule": override.rule, "override": override, "oversight": decision}
    if decision.executed:
        why = f"{override.action} by {override.rule}: {override.reason}"
        new = oversight.commit(s, snap, decision)
        return Outcome(SupervisionKind.OVERRIDE, why, new, extra)
    why = f"override {override.rule} wanted {forced!r}, refused: {decision.reason}"
    return Outcome(SupervisionKind.WAIT, why, s, extra)


def restraint(
    gate: EngagementGate,
    max_refusals: int,
    cooldown_steps: int,
    s: SupervisorState,
    observation: Mapping[str, Any],
    features: Mapping[str, float],
) -> Outcome | None:
    """Repeated refusals start a cooldown; a finished interaction or a closed gate stops it."""
    if s.refusals >= max_refusals:
        why = f"{s.refusals} refusals in a row: no prompting for {cooldown_steps} steps"
        cooled = replace(idle(s), refusals=0, cooldown_until=s.t + cooldown_steps)
        return Outcome(SupervisionKind.DISENGAGE, why, cooled, {"rule": "refusal_cooldown"})
    if s.t <= s.cooldown_until:
        why = f"cooldown after refusals: {s.cooldown_until - s.t + 1} step(s) left"
        return Outcome(SupervisionKind.WAIT, why, s, {"rule": "refusal_cooldown"})
    if s.engaged and observation.get("done"):
        why = "the interaction finished"
        return Outcome(SupervisionKind.DISENGAGE, why, idle(s), {"rule": "finished"})
    blocked = gate.blocking(features, sustained=s.engaged)
    if not blocked:
        return None
    extra = {"rule": blocked[0].split(" ")[0], "blocked_by": blocked}
    why = "gate closed: " + "; ".join(blocked)
    if s.engaged:
        return Outcome(SupervisionKind.DISENGAGE, why, idle(s), extra)
    return Outcome(SupervisionKind.WAIT, why, s, extra)


def act(oversight: ModeOversight, s: SupervisorState, snap: Snapshot) -> Outcome:
    """The best-ranked admissible mode; none admissible (and the safe mode refused): a wait."""
    decision = oversight.select(s, snap)
    if not decision.executed:
        why = f"no admissible mode: {decision.reason}"
        return Outcome(SupervisionKind.WAIT, why, s, {"rule": "mode_rules", "oversight": decision})
    new = oversight.commit(s, snap, decision)
    return Outcome(SupervisionKind.ACT, decision.reason, new, {"oversight": decision})
