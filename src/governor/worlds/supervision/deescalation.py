"""De-escalation (RESET-like): no supervisor, a fixed mode, and the supervisor, on the same students.

The simulated student (:mod:`.student`, stated dynamics) reacts to the demand of what is said
and to the activity. The agent's replies come from the offline reply generator (:mod:`.replies`,
not a model). Conditions, each on the same seeded students and reply draws:

- ``none``: small talk, unguarded: the generator's first reply is said;
- ``fixed_mode`` (the ablation): small talk under its observer with the demand overlays;
- ``supervisor`` (the treatment): five modes (small talk, breathing, creative, silence, crisis),
  a condition selector, the mode graph and LTL mode rules, the protective overrides (crisis
  statement, escalating affect, perseveration), the refusal cooldown and the demand overlays;
- ``supervisor_no_override`` and ``supervisor_no_demand``: the supervisor without one mechanism.

Primary metric: the share of steps above the crisis threshold (lower is better).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from governor.config import ObserverConfig
from governor.observer import Observer
from governor.overlays.constraint import overlay_constraints
from governor.overlays.features.demand import demand_score
from governor.supervision import (
    AffectClassifier,
    ConditionSelector,
    CrisisClassifier,
    EngagementGate,
    EscalatingAffect,
    FixedSelector,
    Mode,
    ModeGraph,
    Perseveration,
    PresenceClassifier,
    ProtectiveRule,
    RefusalClassifier,
    SupervisedSession,
    Supervisor,
    SupervisorConfig,
    ThresholdOverride,
    demand_overlays,
)
from governor.worlds.supervision.replies import POOLS, LowestDemandFallback, OfflineReplies
from governor.worlds.supervision.scenario import ScenarioResult
from governor.worlds.supervision.student import CRISIS, CRISIS_LINES, Student

STEPS = 30
MODES = ("small_talk", "breathing", "creative", "silence", "crisis")
CONDITIONS = ("none", "fixed_mode", "supervisor", "supervisor_no_override", "supervisor_no_demand")
RULES = (
    ("crisis_protocol", "a crisis statement starts the crisis protocol", "G(crisis_statement -> mode_crisis)"),
    ("no_small_talk_escalated", "no small talk while the student is escalated", "G(escalated -> !mode_small_talk)"),
    ("breathing_follows", "breathing may only follow small talk or creative",
     "G(mode_breathing -> Y(mode_small_talk | mode_creative | mode_breathing))"),
)  # fmt: skip
PROPOSITIONS = {"crisis_statement": "crisis_statement >= 1", "escalated": "user_affect < -0.6"}
EDGES = {
    "small_talk": ("breathing", "creative", "silence", "crisis"),
    "breathing": ("small_talk", "creative", "silence", "crisis"),
    "creative": ("small_talk", "breathing", "silence", "crisis"),
    "silence": ("small_talk", "breathing", "creative", "crisis"),
    "crisis": ("silence",),
}
GATE = (PresenceClassifier, AffectClassifier, CrisisClassifier, RefusalClassifier)


def _mode(name: str, rng: np.random.Generator, *, demand: bool, guarded: bool = True) -> Mode:
    pool = POOLS[name]
    policy = OfflineReplies(pool, rng)
    if not guarded:
        config = ObserverConfig(n_candidates=1, max_regenerations=0, time_budget_s=None)
        return Mode(name, Observer(policy, (), None, config=config))
    talking = name in ("small_talk", "breathing", "creative")
    constraints = overlay_constraints(demand_overlays()) if demand and talking else []
    config = ObserverConfig(n_candidates=2, max_regenerations=2, time_budget_s=None)
    return Mode(name, Observer(policy, constraints, LowestDemandFallback(pool), config=config))


def build(condition: str, rng: np.random.Generator) -> Supervisor:
    """The supervisor of ``condition`` (the baselines are single-mode supervisors)."""
    gate = EngagementGate([c() for c in GATE])
    if condition in ("none", "fixed_mode"):
        mode = _mode("small_talk", rng, demand=True, guarded=condition == "fixed_mode")
        graph = ModeGraph([mode], {}, "small_talk")
        return Supervisor(
            graph,
            FixedSelector("small_talk"),
            gate=gate,
            config=SupervisorConfig(max_refusals=1000),
        )
    demand = condition != "supervisor_no_demand"
    graph = ModeGraph(
        [_mode(m, rng, demand=demand) for m in MODES],
        EDGES,
        "small_talk",
        entries=("small_talk", "silence", "crisis"),
    )
    selector = ConditionSelector(
        MODES,
        [("crisis_statement >= 1", "crisis"), ("user_affect < -0.55", "breathing"),
         ("user_affect < -0.2", "creative")],
        "small_talk",
        max_steps={"breathing": 6, "creative": 8, "crisis": 3},
    )  # fmt: skip
    overrides: list[ProtectiveRule] = []
    if condition != "supervisor_no_override":
        overrides = [
            ThresholdOverride("crisis_statement", "crisis_statement >= 1", "crisis"),
            EscalatingAffect("breathing", window=3, drop=0.5, below=-0.5),
            Perseveration("breathing", repeats=3, similarity=0.5),
        ]
    return Supervisor(
        graph,
        selector,
        gate=gate,
        rules=RULES,
        propositions=PROPOSITIONS,
        overrides=overrides,
        safe_mode="silence",
        config=SupervisorConfig(max_refusals=3, cooldown_steps=2),
    )


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


def episode(condition: str, seed: int, steps: int = STEPS) -> tuple[Tally, list[float]]:
    """One student under ``condition``; the tally and the escalation curve."""
    student = Student(seed * 7919 + 1, steps)
    session = SupervisedSession(build(condition, np.random.default_rng([seed, 1])))
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


def run(*, episodes: int, seed: int) -> ScenarioResult:
    """Every condition on ``episodes`` seeded students."""
    rows, series, conditions = [], {}, {}
    for cond in CONDITIONS:
        tallies, curves = zip(
            *(episode(cond, seed * 100_003 + i) for i in range(episodes)), strict=True
        )

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
        })  # fmt: skip
    notes = (
        f"{episodes} simulated students x {STEPS} steps (offline stochastic model with stated"
        " dynamics, not real children); replies from the offline reply generator (not a model).",
        "Per episode: overrides, activity interventions, oversight/activity violations blocked;"
        " crisis_met is the share of crisis statements answered by the crisis mode next step.",
    )
    return ScenarioResult(
        "deescalation", "time_above_crisis", True, "supervisor", "fixed_mode", conditions,
        tuple(rows), series, "mean escalation", notes,
    )  # fmt: skip
