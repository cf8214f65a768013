"""De-escalation (RESET-like): no supervisor, a fixed mode, and the supervisor, on the same students.

The simulated student (:mod:`.student`, stated dynamics) reacts to the demand of what is said
and to the activity. The agent's replies come from the offline reply generator (:mod:`.replies`,
not a model) unless a backend is configured. Conditions, each on the same seeded students and reply draws:

- ``none``: small talk, unguarded: the generator's first reply is said;
- ``fixed_mode`` (the ablation): small talk under its observer with the demand overlays;
- ``supervisor`` (the treatment): five modes (small talk, breathing, creative, silence, crisis),
  a condition selector, the mode graph and LTL mode rules, the protective overrides (crisis
  statement, escalating affect, perseveration), the refusal cooldown and the demand overlays;
- ``supervisor_no_override`` and ``supervisor_no_demand``: the supervisor without one mechanism.

The supervisors are built in :mod:`.deescalation_setup`. With a backend the talking modes'
replies come from the model (every call counted in the table). Primary metric: the share of
steps above the crisis threshold (lower is better).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from governor.backends.base import Backend
from governor.overlays.features.demand import demand_score
from governor.supervision import SupervisedSession
from governor.worlds.scenarios.deescalation_setup import (
    EDGES,
    GATE,
    MODES,
    PROPOSITIONS,
    RULES,
    build,
)
from governor.worlds.scenarios.llm_agents import LLMTally, label
from governor.worlds.scenarios.scenario import ScenarioResult
from governor.worlds.scenarios.student import CRISIS, CRISIS_LINES, Student

__all__ = [
    "CONDITIONS",
    "EDGES",
    "GATE",
    "LLM_ROLES",
    "MODES",
    "PROPOSITIONS",
    "RULES",
    "STEPS",
    "Tally",
    "build",
    "episode",
    "run",
]

STEPS = 30
LLM_ROLES = ("the talking modes' candidate replies (small talk, breathing, creative)",)
CONDITIONS = ("none", "fixed_mode", "supervisor", "supervisor_no_override", "supervisor_no_demand")


@dataclass
class Tally:
    above: float = 0.0
    peak: float = 0.0
    overrides: int = 0
    interventions: int = 0
    oversight: int = 0
    activity: int = 0
    crises: int = 0
    crises_met: int = 0
    demand: float = 0.0
    decision_s: float = 0.0
    llm: LLMTally = field(default_factory=LLMTally)


def episode(
    condition: str, seed: int, steps: int = STEPS, backend: Backend | None = None
) -> tuple[Tally, list[float]]:
    """One student under ``condition``; the tally and the escalation curve."""
    student = Student(seed * 7919 + 1, steps)
    session = SupervisedSession(build(condition, np.random.default_rng([seed, 1]), backend))
    said, refused, tally = student.opening(), False, Tally()
    crisis_pending = False
    for _ in range(steps):
        turn = session.turn({"people": 1, "user_text": said, "refused": refused})
        sup = turn.supervision
        reply = turn.reply if isinstance(turn.reply, str) else None
        d = demand_score(reply) if reply else 0.0
        if crisis_pending:
            tally.crises += 1
            tally.crises_met += turn.mode == "crisis"
        tally.overrides += sup.kind.value == "override"
        tally.interventions += bool(turn.activity and turn.activity.intervened)
        tally.llm.add(turn.activity)
        for v in turn.violations():
            tally.oversight += v.level == "oversight"
            tally.activity += v.level == "activity"
        tally.demand += d / steps
        tally.decision_s += sup.seconds / steps
        interrupted = bool(sup.override and sup.override.ends_line)
        said, refused = student.respond(turn.mode, d, sup.state.mode_steps, interrupted)
        crisis_pending = said in CRISIS_LINES
    curve = student.history
    tally.above = float(np.mean([e > CRISIS for e in curve[1:]]))
    tally.peak = max(curve)
    return tally, curve


def run(*, episodes: int, seed: int, backend: Backend | None = None) -> ScenarioResult:
    """Every condition on ``episodes`` seeded students (the agent's replies from ``backend``
    when given)."""
    rows, series, conditions = [], {}, {}
    for cond in CONDITIONS:
        tallies, curves = zip(
            *(episode(cond, seed * 100_003 + i, backend=backend) for i in range(episodes)),
            strict=True,
        )
        llm = LLMTally()
        for t in tallies:
            llm += t.llm

        def mean(key: str, tallies: tuple[Tally, ...] = tallies) -> float:
            return float(np.mean([getattr(t, key) for t in tallies]))

        crises = sum(t.crises for t in tallies)
        met = sum(t.crises_met for t in tallies)
        conditions[cond] = round(mean("above"), 4)
        series[cond] = tuple(round(float(x), 4) for x in np.mean(curves, axis=0))
        rows.append({
            "condition": cond,
            "time_above_crisis": round(mean("above"), 4),
            "peak_escalation": round(mean("peak"), 3),
            "final_escalation": round(float(np.mean([c[-1] for c in curves])), 3),
            "overrides": round(mean("overrides"), 2),
            "interventions": round(mean("interventions"), 2),
            "oversight_blocked": round(mean("oversight"), 2),
            "activity_blocked": round(mean("activity"), 2),
            "crisis_met": round(met / crises, 3) if crises else None,
            "mean_demand": round(mean("demand"), 3),
            "decision_ms": round(1000 * mean("decision_s"), 3),
            **llm.row(episodes * STEPS),
        })  # fmt: skip
    notes = (
        f"{episodes} simulated students x {STEPS} steps (offline stochastic model with stated"
        f" dynamics, not real children); talking modes' replies: {label(backend)}; silence and"
        " the crisis script are fixed lines.",
        "Per episode: overrides, activity interventions, oversight/activity violations blocked;"
        " crisis_met is the share of crisis statements answered by the crisis mode next step.",
    )
    return ScenarioResult(
        "deescalation", "time_above_crisis", True, "supervisor", "fixed_mode", conditions,
        tuple(rows), series, "mean escalation", notes,
    )  # fmt: skip
