"""Running the Backseat AI Driver: one condition over seeded starts, the privileged reference runs,
and the metrics of ReGuard's Tables 3 and 4.

Rollout F1 is the F1 of success against the privileged runs: per start, the label is whether the
human's own policy acting directly under the exact filter succeeds, the prediction whether the
condition's run succeeds. The intervention rate is the share of steps where the shield intervened
(None where there is no shield). LLM calls are counted per condition, the advisor's (made inside
the observer's stages) and the human's (made by the environment) apart.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from governor.config import ObserverConfig
from governor.core import Trajectory
from governor.observer import Observer
from governor.runner import DecisionSink, Episode, run_episode, run_episodes
from governor.safety_values.metrics import rollout_f1
from governor.usage import metered
from governor.worlds.backseat.advisors import AdviceShield, Advisor, SilentAdvisor
from governor.worlds.backseat.env import BackseatEnv
from governor.worlds.backseat.human import own_policy
from governor.worlds.driving.env import DrivingEnv
from governor.worlds.driving.filter import exact_filter
from governor.worlds.driving.grid_value import GridValue


def privileged_runs(
    grid: GridValue,
    epsilon: float,
    starts: Sequence[tuple[float, float, float]],
    seeds: Sequence[int],
    erratic_p: float = 0.0,
) -> list[Episode]:
    """The human's own policy acting directly under the exact filter, from each start."""
    monitor, fallback = exact_filter(grid, epsilon)
    env, config = DrivingEnv(grid.params), ObserverConfig(max_regenerations=0, time_budget_s=None)
    return [
        run_episode(
            env,
            Observer(own_policy(grid.params, erratic_p, seed), [monitor], fallback, config=config),
            seed=seed,
            options={"state": start},
        )
        for start, seed in zip(starts, seeds, strict=True)
    ]


def run_condition(
    env: BackseatEnv,
    advisor: Advisor,
    starts: Sequence[tuple[float, float, float]],
    seeds: Sequence[int],
    reference: Sequence[bool],
    *,
    shield: tuple[AdviceShield, Advisor] | None = None,
    config: ObserverConfig | None = None,
    trace: DecisionSink | None = None,
    on_episode: Callable[[Episode], None] | None = None,
    label: str = "backseat",
) -> tuple[dict[str, Any], list[Episode]]:
    """Run ``advisor`` from each start; the row of metrics and the episodes.

    ``shield`` is the constraint and the advisor that speaks when it rejects (each such step is an
    intervention); ``reference`` says which privileged runs succeeded, for the rollout F1.
    """
    constraints, fallback = ([shield[0]], shield[1]) if shield else ([], None)
    observer = Observer(
        advisor, constraints, fallback, config=config or ObserverConfig(max_regenerations=0)
    )
    speaker = fallback or advisor
    name = "none" if isinstance(speaker, SilentAdvisor) else speaker.name
    label = f"{label}-{name}{'-shield' if shield else ''}"
    with metered() as meter:
        episodes = run_episodes(
            env,
            observer,
            starts,
            seeds=seeds,
            trace=trace,
            label=label,
            extra=_extra,
            on_episode=on_episode,
        )
    row = {
        "advisor": name,
        "shield": shield is not None,
        **_metrics(episodes, reference, shield is not None, meter.total.calls),
        "advisor_fallbacks": getattr(speaker, "fallbacks", 0),
        "human_fallbacks": env.human.fallbacks,
    }
    return row, episodes


def _metrics(
    episodes: Sequence[Episode], reference: Sequence[bool], shielded: bool, calls: int
) -> dict[str, Any]:
    n = len(episodes)
    steps = [s for ep in episodes for s in ep.trajectory.steps]
    advised = [s.info for s in steps if s.info.get("advised") is not None]
    decisions = sum(sum(ep.decisions.values()) for ep in episodes)
    interventions = sum(ep.interventions for ep in episodes)
    advisor_calls = sum(ep.usage.calls for ep in episodes)
    return {
        "episodes": n,
        "success_rate": sum(ep.outcome == "success" for ep in episodes) / n,
        "failure_rate": sum(ep.outcome == "failure" for ep in episodes) / n,
        "rollout_f1": rollout_f1([ep.outcome == "success" for ep in episodes], reference),
        "intervention_rate": interventions / max(1, decisions) if shielded else None,
        "interventions": interventions if shielded else None,
        "followed_rate": sum(i["followed"] for i in advised) / len(advised) if advised else None,
        "mean_steps": len(steps) / n,
        "llm_calls": calls,
        "advisor_calls": advisor_calls,
        "human_calls": calls - advisor_calls,
    }


def _extra(traj: Trajectory) -> dict[str, Any]:
    obs = traj.observation
    return {"state": [round(float(v), 3) for v in obs["state"]], "intended": int(obs["intended"])}
