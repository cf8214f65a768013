"""The three agents of the Safety Chip benchmark, built for one task and seed.

``base``: the planner alone. ``nl_constraints``: the planner with the constraints in its prompt
(LLM only; with the simulated planner it is n/a, see :data:`NL_NOTE`). ``safety_chip``: the
planner under one monitor per constraint, with pruning, explanations (by the LLM when one is
configured, else offline) and re-prompting. Every agent gets the same bound on regenerations;
an invalid LLM reply is re-prompted with the error, like a rejection.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from governor.backends import Backend
from governor.config import ObserverConfig
from governor.core import Policy
from governor.ltl.constraint import Spec
from governor.observer import Observer
from governor.trace import TraceWriter
from governor.worlds.household.bench_config import SafetyChipBenchConfig
from governor.worlds.household.bench_scoring import TaskSpecs, judge, outcome
from governor.worlds.household.env import HouseholdParams, HouseholdSim, Task
from governor.worlds.household.episode import run_household_episode
from governor.worlds.household.guard import Halt, safety_chip
from governor.worlds.household.planners import SimulatedPlanner
from governor.worlds.household.prompts import LLMExplainer, LLMPlanner, offline_explainer

AGENTS = ("base", "nl_constraints", "safety_chip")
LLM_STEP_BUDGET_S = 300.0
"""Seconds one step with an LLM may take (its re-prompts and explanations included)."""
NL_NOTE = (
    "nl_constraints is n/a with the simulated planner: a scripted stand-in cannot show how a model "
    "heeds constraints written in its prompt; run --agent llm to measure it"
)


def planner(
    agent: str,
    task: Task,
    seed: int,
    sentences: Sequence[str],
    backend: Backend | None,
    *,
    deviation_rate: float = 0.2,
    temperature: float = 0.0,
) -> Policy | None:
    """The agent's planner: the LLM planner with a backend, else the simulated one (None: n/a)."""
    if backend is None:
        if agent == "nl_constraints":
            return None
        return SimulatedPlanner(task, seed, deviation_rate)
    return LLMPlanner(
        backend,
        task,
        constraints_in_prompt=agent == "nl_constraints",
        constraints=sentences,
        temperature=temperature,
    )


def guard(
    agent: str,
    policy: Policy,
    specs: Sequence[Spec],
    sentences: Sequence[str],
    backend: Backend | None,
    *,
    max_regenerations: int = 6,
) -> Observer:
    """The observer the agent's planner runs in: the Safety Chip, or no constraint at all.

    A step with an LLM has :data:`LLM_STEP_BUDGET_S`; the simulated planner needs none.
    """
    budget = None if backend is None else LLM_STEP_BUDGET_S
    if agent == "safety_chip":
        explainer = LLMExplainer(backend, sentences) if backend is not None else None
        return safety_chip(
            policy,
            specs,
            explainer=explainer,
            max_regenerations=max_regenerations,
            time_budget_s=budget,
        )
    config = ObserverConfig(max_regenerations=max_regenerations, time_budget_s=budget)
    return Observer(policy, [], Halt(), config=config, feedback=offline_explainer())


def episodes(
    agent: str,
    task: Task,
    k: int,
    judged: TaskSpecs,
    used: TaskSpecs,
    given: Sequence[str],
    cfg: SafetyChipBenchConfig,
    backend: Backend | None,
    trace: TraceWriter | None,
) -> list[dict[str, Any]]:
    """``cfg.repeats`` episodes of one agent on one task with k constraints, scored."""
    out = []
    params = HouseholdParams(max_steps=cfg.max_steps, stop_on_goal=False)
    chip = agent == "safety_chip"
    for r in range(cfg.repeats):
        policy = planner(
            agent,
            task,
            cfg.seed + r,
            given,
            backend,
            deviation_rate=cfg.deviation_rate,
            temperature=cfg.temperature,
        )
        if policy is None:
            return []
        ep = run_household_episode(
            HouseholdSim(task, params=params),
            guard(
                agent, policy, used.specs, given, backend, max_regenerations=cfg.max_regenerations
            ),
            specs=used.specs if chip else None,
            trace=trace,
            episode_id=f"{agent}-{task.key}-k{k}-{r}",
        )
        verified = judged.verified and (used.verified or not chip)
        out.append(outcome(ep, judge(judged.specs, ep.labels), verified))
    return out
