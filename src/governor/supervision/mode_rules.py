"""The mode-selection layer's admissibility rules: the mode graph, and LTL over modes and state.

The supervisor's observer judges candidate *modes*. Its observation is a :class:`Snapshot` of the
step (features, the propositions that hold, the current mode). Two hard constraints:

- :class:`ModeGraphConstraint`: the candidate may follow the current mode in the graph;
- :class:`ModeRules`: LTLf monitors over the propositions ``mode_<name>`` (the mode executed at a
  step) and named state propositions (``"crisis_statement": "crisis_statement >= 1"``), e.g.
  ``G(crisis_statement -> mode_crisis)`` or "breathing may only follow small talk or creative",
  ``G(mode_breathing -> Y(mode_small_talk | mode_creative | mode_breathing))``. Positions of the
  trace are the steps at which a mode was executed. A formula over an atom that is neither a
  mode nor a proposition, or a proposition over a feature no classifier provides, is refused
  when the rules are built, naming it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from governor.core import Constraint, Severity, Step, Trajectory, Verdict
from governor.errors import ConfigError, SpecError
from governor.ltl.constraint import LTLConstraint
from governor.ltl.monitor import MonitorSetState
from governor.ltl.parser import parse
from governor.overlays.rules import Condition
from governor.supervision.gating import check_features
from governor.supervision.modes import ModeGraph, mode_atom

GRAPH = "mode_graph"
RULES = "mode_rules"


@dataclass(frozen=True)
class Snapshot:
    """What the mode-selection layer sees at one step; ``chosen`` is set once a mode executed."""

    t: int
    mode: str | None
    mode_steps: int
    features: Mapping[str, float] = field(default_factory=dict)
    labels: frozenset[str] = frozenset()
    forced: str | None = None
    chosen: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "features", MappingProxyType(dict(self.features)))


class ModeGraphConstraint(Constraint):
    """A candidate mode must be allowed after the current one by the :class:`ModeGraph`."""

    name = GRAPH
    hard = True

    def __init__(self, graph: ModeGraph) -> None:
        self.graph = graph

    def check(self, traj: Trajectory, action: Any) -> Verdict:
        current = traj.memory.get(GRAPH)
        if action not in self.graph:
            return Verdict.reject(GRAPH, 1.0, f"{action!r} is not a mode of the graph")
        if self.graph.allows(current, action):
            return Verdict.allow(GRAPH)
        where = f"after {current!r}" if current else "to start an interaction"
        allowed = (
            sorted(self.graph.edges.get(current, ())) if current else sorted(self.graph.entries)
        )
        return Verdict.reject(
            GRAPH,
            1.0,
            f"mode {action!r} may not be chosen {where}; allowed: {', '.join(allowed)}",
            severity=Severity.HIGH,
        )

    def commit(self, traj: Trajectory, step: Step) -> Any:
        return step.action


def _labels(snapshot: Snapshot, mode: str | None) -> frozenset[str]:
    return snapshot.labels | {mode_atom(mode)} if mode else snapshot.labels


class ModeRules:
    """Named LTL rules over mode and state propositions, as one hard :class:`LTLConstraint`."""

    def __init__(
        self,
        specs: Iterable[tuple[str, str, str]],
        propositions: Mapping[str, str],
        graph: ModeGraph,
        features: AbstractSet[str],
    ) -> None:
        self.propositions: dict[str, Condition] = {}
        for name, text in propositions.items():
            try:
                cond = Condition.parse(text)
            except ValueError as exc:
                raise ConfigError(f"proposition {name!r}: {exc}") from None
            check_features(f"proposition {name!r}", cond.feature, frozenset(features))
            self.propositions[name] = cond
        known = {mode_atom(n) for n in graph.names} | set(self.propositions)
        parsed = []
        for name, text, formula in specs:
            try:
                f = parse(formula)
            except SpecError as exc:
                raise ConfigError(f"mode rule {name!r}: {exc}") from None
            unknown = sorted(f.atom_labels() - known)
            if unknown:
                raise ConfigError(
                    f"mode rule {name!r}: unknown proposition {unknown[0]!r}; expected a mode"
                    f" atom or a proposition: {', '.join(sorted(known))}"
                )
            parsed.append((name, text, f))
        self.constraint = LTLConstraint(
            parsed,
            predict=lambda traj, mode: _labels(traj.observation, mode),
            observe=lambda snap: _labels(snap, snap.chosen),
            name=RULES,
            severity=Severity.HIGH,
        )

    @property
    def names(self) -> tuple[str, ...]:
        return self.constraint.monitors.names

    def initial(self) -> MonitorSetState:
        """The monitors before any mode was executed."""
        return self.constraint.monitors.initial

    def labels(self, features: Mapping[str, float]) -> frozenset[str]:
        """The propositions that hold for ``features`` (a missing feature: false)."""
        return frozenset(
            n
            for n, c in self.propositions.items()
            if c.feature in features and c.holds(features[c.feature])
        )

    def restart_violated(self, state: MonitorSetState) -> MonitorSetState:
        """``state`` with every violated monitor restarted (after an operator's forced mode)."""
        if not state.violated:
            return state
        fresh = self.initial()
        forms = tuple(
            fresh.formulas[i] if n in state.violated else f
            for i, (n, f) in enumerate(zip(state.names, state.formulas, strict=True))
        )
        verdicts = tuple(
            fresh.verdicts[i] if n in state.violated else v
            for i, (n, v) in enumerate(zip(state.names, state.verdicts, strict=True))
        )
        return MonitorSetState(state.names, forms, verdicts, state.labels, state.t)
