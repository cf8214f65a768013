"""What the supervisor decided at one step, and the two levels of violation kept apart.

Kinds: ``act`` (a mode was chosen and its observer acts), ``override`` (a protective rule forced
the mode or ended the line), ``operator`` (a human set the mode), ``wait`` (no action: the gate is
closed, the session is paused, a cooldown runs, or no mode was admissible), ``disengage`` (stop
prompting: repeated refusals, the interaction finished, a sustained gate rule stopped holding),
``end`` (the operator ended the session). Not acting is a decision like any other: it is traced
with its reason and the rule that required it.

A :class:`Violation` is either ``oversight`` (a mode that the mode rules reject: proposed and
blocked, or executed on an operator's word) or ``activity`` (a reply that a mode's own
constraints reject inside that mode).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Literal

from governor.core import Candidate, Decision, DecisionKind, Verdict
from governor.supervision.override import Override
from governor.supervision.state import SupervisorState

Level = Literal["oversight", "activity"]


class SupervisionKind(StrEnum):
    ACT = "act"
    OVERRIDE = "override"
    OPERATOR = "operator"
    WAIT = "wait"
    DISENGAGE = "disengage"
    END = "end"


ACTING = (SupervisionKind.ACT, SupervisionKind.OVERRIDE, SupervisionKind.OPERATOR)


@dataclass(frozen=True)
class Violation:
    """One rejected verdict: at which level, in which mode, by which constraint, and whether it
    was blocked (caught before execution) or executed."""

    level: Level
    constraint: str
    mode: str | None
    descriptor: str
    blocked: bool = True


@dataclass(frozen=True)
class SupervisorDecision:
    """One supervisor step. ``oversight`` is the mode observer's decision when modes were judged;
    ``rule`` names what required a non-default outcome (an override, a gating rule, an operator);
    ``state`` is the state after the step; ``seconds`` the time the decision took."""

    kind: SupervisionKind
    mode: str | None
    previous: str | None
    reason: str
    state: SupervisorState
    rule: str | None = None
    override: Override | None = None
    oversight: Decision | None = None
    features: Mapping[str, float] = field(default_factory=dict)
    labels: frozenset[str] = frozenset()
    blocked_by: tuple[str, ...] = ()
    seconds: float = 0.0

    @property
    def acts(self) -> bool:
        """A mode acts this step."""
        return self.kind in ACTING and self.mode is not None

    @property
    def switched(self) -> bool:
        return self.acts and self.mode != self.previous

    @property
    def ends_line(self) -> bool:
        """The activity starts afresh: a new interaction, or an override that ends the line."""
        return self.acts and (
            self.previous is None or bool(self.override and self.override.ends_line)
        )

    def violations(self) -> tuple[Violation, ...]:
        """Oversight-level violations: modes the mode rules rejected at this step."""
        if self.oversight is None:
            return ()
        out = [
            Violation("oversight", v.constraint, cand.action, v.descriptor)
            for cand, row in _preferred(self.oversight)
            for v in row
            if not v.admissible
        ]
        if self.kind is SupervisionKind.OPERATOR:
            out += [
                Violation("oversight", v.constraint, self.mode, v.descriptor, blocked=False)
                for v in self.oversight.verdicts
                if not v.admissible
            ]
        return tuple(out)

    def as_decision(self) -> Decision:
        """The decision to trace: the oversight decision, or a deferral saying why not."""
        if self.oversight is not None and self.kind is not SupervisionKind.WAIT:
            return self.oversight
        verdicts = self.oversight.verdicts if self.oversight is not None else ()
        kind = DecisionKind.ABORT if self.kind is SupervisionKind.END else DecisionKind.DEFER
        return Decision(kind, None, verdicts, None, f"{self.kind}: {self.reason}")

    def record(self) -> dict[str, Any]:
        """What a trace keeps beside the decision (``extra``)."""
        return {
            "level": "oversight",
            "supervision": {
                "kind": self.kind.value,
                "mode": self.mode,
                "previous": self.previous,
                "rule": self.rule,
                "reason": self.reason,
                "override": None
                if self.override is None
                else {"rule": self.override.rule, "action": self.override.action},
                "blocked_by": list(self.blocked_by),
                "features": dict(self.features),
                "labels": sorted(self.labels),
                "violations": [dataclasses.asdict(v) for v in self.violations()],
                "decision_ms": 1000.0 * self.seconds,
            },
        }


def activity_violations(decision: Decision, mode: str | None) -> tuple[Violation, ...]:
    """Activity-level violations: replies that the mode's own constraints rejected."""
    return tuple(
        Violation("activity", v.constraint, mode, v.descriptor)
        for _, row in _preferred(decision)
        for v in row
        if not v.admissible
    )


def _preferred(decision: Decision) -> list[tuple[Candidate[Any], tuple[Verdict, ...]]]:
    """Each attempt's candidates ranked before the chosen one (all of them when none was), with
    their verdicts: what the policy preferred over what was executed. Candidates ranked after
    the chosen one were never going to run, so their rejections are not violations."""
    out = []
    for a in decision.attempts:
        upto = len(a.candidates) if a.chosen is None else a.chosen
        out += list(zip(a.candidates[:upto], a.verdicts[:upto], strict=False))
    return out
