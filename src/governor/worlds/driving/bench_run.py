"""The driving benchmark: base policies with no guard, a myopic stop guard, and the exact filter.

Every (policy, guard) pair drives the same seeded start states, drawn inside the safe set of the
exact grid value. The monitor block compares the grid value's safe/unsafe sign with an exact
depth-first search over action sequences on the true dynamics.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import Any, Literal

import numpy as np
from tqdm import tqdm

import governor.worlds.driving.task  # noqa: F401  # registers the env "driving" for checkpoints
from governor.backends import Backend, backend_from_config
from governor.config import (
    BackendConfig,
    ObserverConfig,
    check_range,
    option,
)
from governor.core import Constraint, Fallback, Policy, Trajectory
from governor.observer import Observer
from governor.runner import DecisionSink, Episode, run_episodes
from governor.trace import open_trace
from governor.worlds.driving.controllers import ErraticPolicy, LLMDrivingPolicy, NominalController
from governor.worlds.driving.env import DrivingEnv, DrivingParams
from governor.worlds.driving.filter import exact_filter
from governor.worlds.driving.grid_value import GridSpec, GridValue, load_or_compute
from governor.worlds.driving.monitor_check import filter_latency_us, monitor_report
from governor.worlds.driving.myopic import OneStepMonitor, StopFallback

GUARDS = ("none", "myopic_stop", "exact_filter")


@dataclasses.dataclass(frozen=True)
class DrivingBenchConfig:
    """What `governor bench driving` runs."""

    episodes: int = option(100, "episodes per (policy, guard) pair")
    seed: int = option(0, "seed of the start states and of the erratic policy")
    policy: Literal["offline", "nominal", "erratic", "llm"] = option(
        "offline", "base policy: nominal, erratic, llm, or offline (= nominal and erratic)"
    )
    erratic_p: float = option(0.3, "probability that the erratic policy acts at random")
    monitor_states: int = option(2000, "random states on which the grid value meets exact search")
    margin: float | None = option(None, "filter margin (default: the grid's resolution margin)")
    temperature: float = option(0.0, "LLM policy sampling temperature")
    llm_shots: int = option(3, "LLM policy: worked examples before the question (0: none)")
    grid_nx: int = option(101, "grid points along the track")
    grid_ny: int = option(101, "grid points across the road")
    grid_ntheta: int = option(64, "grid headings")

    def __post_init__(self) -> None:
        if self.margin is not None:  # below 0 the filter admits actions that fail
            check_range("margin", self.margin, 0.0, 1e6)
        check_range("episodes", self.episodes, 1, 1_000_000)
        check_range("erratic_p", self.erratic_p, 0.0, 1.0)
        check_range("monitor_states", self.monitor_states, 0, 1_000_000)
        for name in ("grid_nx", "grid_ny", "grid_ntheta"):
            check_range(name, getattr(self, name), 8, 1024)


@dataclasses.dataclass
class Row:
    policy: str
    guard: str
    episodes: int
    success_rate: float
    failure_rate: float
    stop_rate: float
    intervention_rate: float
    mean_steps: float
    llm_calls: int
    llm_failed: int
    invalid_replies: int = 0
    """LLM answers that named no choice (each an invalid candidate, never executed)."""


def start_states(
    gv: GridValue, n: int, seed: int, margin: float
) -> list[tuple[float, float, float]]:
    """``n`` random states in the first half of the track, strictly inside the safe set."""
    p, rng = gv.params, np.random.default_rng(seed)
    states: list[tuple[float, float, float]] = []
    while len(states) < n:
        s = (rng.uniform(0.0, p.goal_x / 2), rng.uniform(0.0, p.road_width), rng.uniform(-1.2, 1.2))
        if gv.value(np.asarray(s)) > margin:
            states.append(s)
    return states


def make_policy(
    name: str, cfg: DrivingBenchConfig, params: DrivingParams, backend: Backend | None
) -> Policy:
    if name == "nominal":
        return NominalController(params)
    if name == "erratic":
        return ErraticPolicy(params, p=cfg.erratic_p, seed=cfg.seed)
    assert backend is not None
    return LLMDrivingPolicy(
        backend, params, temperature=cfg.temperature, shots=cfg.llm_shots, seed=cfg.seed
    )


def make_guard(name: str, gv: GridValue, margin: float) -> tuple[list[Constraint], Fallback | None]:
    if name == "none":
        return [], None
    if name == "myopic_stop":
        return [OneStepMonitor(gv.params)], StopFallback()
    if name.startswith("learned:"):  # a trained checkpoint directory: learned:DIR
        from governor.safety_values.learned import learned_filter

        learned, fallback = learned_filter(name.removeprefix("learned:"), margin, gv.params)
        return [learned], fallback
    monitor, fallback = exact_filter(gv, margin)
    return [monitor], fallback


def run_pair(
    policy: Policy,
    guard: str,
    gv: GridValue,
    margin: float,
    starts: Sequence[tuple[float, float, float]],
    *,
    trace: DecisionSink | None = None,
    on_episode: Callable[[Episode], None] | None = None,
    label: str | None = None,
    parts: tuple[Sequence[Constraint], Fallback | None] | None = None,
) -> Row:
    """Run ``policy`` under ``guard`` from each start; the row is labelled ``label``.

    ``parts`` (constraints, fallback) replaces the guard that ``guard`` names.
    """
    constraints, fallback = parts if parts is not None else make_guard(guard, gv, margin)
    replies = getattr(policy, "replies", None)
    invalid_before = replies["invalid"] if replies is not None else 0
    # The safety filter switches at once: no regeneration, as in the paper.
    config = ObserverConfig(max_regenerations=0)
    observer = Observer(policy, list(constraints), fallback, config=config)
    episodes = run_episodes(
        DrivingEnv(gv.params),
        observer,
        starts,
        trace=trace,
        label=f"{label or policy.name}-{guard}",
        extra=_state_extra,
        on_episode=on_episode,
    )
    n = len(episodes)
    steps = sum(ep.steps for ep in episodes)
    decisions = sum(sum(ep.decisions.values()) for ep in episodes)
    return Row(
        label or policy.name,
        guard,
        n,
        sum(ep.outcome == "success" for ep in episodes) / n,
        sum(ep.outcome == "failure" for ep in episodes) / n,
        sum(ep.outcome == "stopped" for ep in episodes) / n,
        sum(ep.interventions for ep in episodes) / max(1, decisions),
        steps / n,
        sum(ep.usage.calls for ep in episodes),
        sum(ep.usage.failed for ep in episodes),
        (replies["invalid"] - invalid_before) if replies is not None else 0,
    )


def _state_extra(traj: Trajectory) -> dict[str, Any]:
    return {"state": [round(float(v), 3) for v in traj.observation["state"]]}


def run(
    cfg: DrivingBenchConfig,
    backend_config: BackendConfig | None = None,
    *,
    trace_path: Path | None = None,
    progress: bool = True,
) -> dict[str, Any]:
    """Run the benchmark; returns the JSON-ready result (rows, monitor, grid_seconds, ...)."""
    backend = None
    if cfg.policy == "llm":
        backend = backend_from_config(backend_config or BackendConfig.from_env())
        backend.check()
    params = DrivingParams()
    spec = GridSpec(nx=cfg.grid_nx, ny=cfg.grid_ny, ntheta=cfg.grid_ntheta)
    gv, grid_seconds, cached = load_or_compute(params, spec, progress=progress)
    margin = gv.resolution if cfg.margin is None else cfg.margin
    starts = start_states(gv, cfg.episodes, cfg.seed, margin)
    names = ("nominal", "erratic") if cfg.policy == "offline" else (cfg.policy,)
    rows = []
    examples: dict[tuple[str, str], list[Episode]] = {}
    with ExitStack() as stack:
        trace = stack.enter_context(open_trace(trace_path)) if trace_path else None
        bar = stack.enter_context(
            tqdm(
                total=len(names) * len(GUARDS) * len(starts),
                desc="driving",
                unit="ep",
                disable=None if progress else True,
            )
        )
        for name in names:
            for guard in GUARDS:
                kept = examples.setdefault((name, guard), [])

                def keep(ep: Episode, kept: list[Episode] = kept) -> None:
                    bar.update()
                    if len(kept) < 8:
                        kept.append(ep)

                policy = make_policy(name, cfg, params, backend)
                rows.append(
                    run_pair(
                        policy, guard, gv, margin, starts, trace=trace, on_episode=keep, label=name
                    )
                )
    return {
        "config": dataclasses.asdict(cfg),
        "params": dataclasses.asdict(params),
        "rows": [dataclasses.asdict(r) for r in rows],
        "monitor": monitor_report(gv, cfg.monitor_states, cfg.seed, margin),
        "margin": margin,
        "grid_seconds": grid_seconds,
        "grid_cached": cached,
        "grid_shape": [spec.nx, spec.ny, spec.ntheta],
        "filter_decision_us_p50": filter_latency_us(gv, margin),
        "_examples": examples,
        "_grid": gv,
    }
