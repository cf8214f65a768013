"""The de-escalation scenario's supervisors: one per condition, over the same five modes.

The modes (small talk, breathing, creative, silence, crisis) each have an observer over a reply
pool of :mod:`.replies` (the offline generator, not a model) or, for the talking modes when a
backend is given, the model (:mod:`.llm_agents`). The supervisor adds the mode graph, a condition
selector, three LTL mode rules, three protective overrides, the refusal cooldown and the demand
overlays; the baselines are single-mode supervisors (small talk, unguarded or under the demand
overlays). :func:`build` makes the supervisor of a condition.
"""

from __future__ import annotations

import numpy as np

from governor.backends.base import Backend
from governor.config import ObserverConfig
from governor.core import Policy
from governor.observer import Observer
from governor.overlays.constraint import overlay_constraints
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
    Supervisor,
    SupervisorConfig,
    ThresholdOverride,
    demand_overlays,
)
from governor.worlds.scenarios.llm_agents import MODE_PROMPTS, mode_policy
from governor.worlds.scenarios.replies import POOLS, LowestDemandFallback, OfflineReplies

MODES = ("small_talk", "breathing", "creative", "silence", "crisis")
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


def _mode(
    name: str,
    rng: np.random.Generator,
    *,
    demand: bool,
    guarded: bool = True,
    backend: Backend | None = None,
) -> Mode:
    pool = POOLS[name]
    policy: Policy = OfflineReplies(pool, rng)
    if backend is not None and name in MODE_PROMPTS:
        policy = mode_policy(backend, name, n=2 if guarded else 1)
    if not guarded:
        config = ObserverConfig(n_candidates=1, max_regenerations=0, time_budget_s=None)
        return Mode(name, Observer(policy, (), None, config=config))
    talking = name in ("small_talk", "breathing", "creative")
    constraints = overlay_constraints(demand_overlays()) if demand and talking else []
    config = ObserverConfig(n_candidates=2, max_regenerations=2, time_budget_s=None)
    return Mode(name, Observer(policy, constraints, LowestDemandFallback(pool), config=config))


def build(condition: str, rng: np.random.Generator, backend: Backend | None = None) -> Supervisor:
    """The supervisor of ``condition`` (the baselines are single-mode supervisors); the talking
    modes' replies come from ``backend`` when given, else from the offline generator."""
    gate = EngagementGate([c() for c in GATE])
    if condition in ("none", "fixed_mode"):
        guarded = condition == "fixed_mode"
        mode = _mode("small_talk", rng, demand=True, guarded=guarded, backend=backend)
        graph = ModeGraph([mode], {}, "small_talk")
        return Supervisor(
            graph,
            FixedSelector("small_talk"),
            gate=gate,
            config=SupervisorConfig(max_refusals=1000),
        )
    demand = condition != "supervisor_no_demand"
    graph = ModeGraph(
        [_mode(m, rng, demand=demand, backend=backend) for m in MODES],
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
