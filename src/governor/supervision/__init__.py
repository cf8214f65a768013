"""Supervision above the observer: modes, engagement gating, protective override, operator acts.

A :class:`Supervisor` is itself an observer whose actions are modes (oversight level): a mode
selector proposes modes, the mode graph and LTL rules over mode and state propositions judge
them, the arbiter picks, and the chosen :class:`Mode`'s own observer (its overlays, prompts and
fallback) then decides the reply (activity level). Around that loop: an :class:`EngagementGate`
of pluggable state classifiers decides whether to engage at all (with a cooldown after repeated
refusals), :mod:`protective rules <governor.supervision.override>` may interrupt or force a mode,
and an operator may pause, set the mode or end the session, every act audited. The state is
explicit and round-trips through JSON. :class:`SupervisedSession` (:mod:`.supervised`) runs both
levels and traces them apart (wrong mode vs bad behaviour inside a mode). The mode rules and the
mode-graph constraint are in :mod:`.mode_rules`; the shipped demand overlays
(:data:`DEMAND_OVERLAYS`, :func:`demand_overlays`) are the overlays' file, re-exported here.

Imports the core loop (core, observer, config), the overlays, the LTL monitors and the error
tree; never a world, a backend, the CLI or the benches.
"""

from governor.overlays.loader import DEMAND_OVERLAYS, demand_overlays
from governor.supervision.decision import (
    SupervisionKind,
    SupervisorDecision,
    Violation,
    activity_violations,
)
from governor.supervision.gating import (
    AffectClassifier,
    CrisisClassifier,
    EngagementGate,
    GatingRule,
    PresenceClassifier,
    RefusalClassifier,
    StateClassifier,
    TimeWindowClassifier,
)
from governor.supervision.mode_rules import ModeGraphConstraint, ModeRules, Snapshot
from governor.supervision.modes import Mode, ModeGraph, mode_atom
from governor.supervision.operator import ActKind, OperatorAct
from governor.supervision.override import (
    EscalatingAffect,
    Override,
    Perseveration,
    ProtectiveRule,
    ThresholdOverride,
)
from governor.supervision.oversight import ModeOversight
from governor.supervision.selection import ConditionSelector, FixedSelector, ModeSelector
from governor.supervision.state import SupervisorState
from governor.supervision.supervised import SupervisedSession, SupervisedTurn
from governor.supervision.supervisor import Supervisor, SupervisorConfig

__all__ = [
    "DEMAND_OVERLAYS",
    "ActKind",
    "AffectClassifier",
    "ConditionSelector",
    "CrisisClassifier",
    "EngagementGate",
    "EscalatingAffect",
    "FixedSelector",
    "GatingRule",
    "Mode",
    "ModeGraph",
    "ModeGraphConstraint",
    "ModeOversight",
    "ModeRules",
    "ModeSelector",
    "OperatorAct",
    "Override",
    "Perseveration",
    "PresenceClassifier",
    "ProtectiveRule",
    "RefusalClassifier",
    "Snapshot",
    "StateClassifier",
    "SupervisedSession",
    "SupervisedTurn",
    "SupervisionKind",
    "Supervisor",
    "SupervisorConfig",
    "SupervisorDecision",
    "SupervisorState",
    "ThresholdOverride",
    "TimeWindowClassifier",
    "Violation",
    "activity_violations",
    "demand_overlays",
    "mode_atom",
]
