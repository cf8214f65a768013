"""ReGuard's Backseat AI Driver experiments: Table 3 (full) and Table 4 (shielded backseat driving).

Every condition drives the same seeded start states (the driving benchmark's: inside the exact safe
set) with the scripted or LLM human proxy of each persona, ``none`` and ``urgent``:

- full: the advisor speaks at every step; the base advisor, then the safety advisor.
- shielded: the human acts alone; then alone unless :class:`AdviceShield` finds
  Q(s, a_H) <= epsilon for the human's intended action, when the safety advisor speaks (an
  intervention).

Metrics per condition (:mod:`governor.worlds.backseat.episode`): success rate (goal reached without
failure), failure rate, rollout F1 against the privileged runs, intervention rate, LLM calls.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, Literal

import governor.worlds.driving.task  # noqa: F401  # registers the env "driving" for checkpoints
from governor.backends.base import Backend
from governor.config import ObserverConfig, check_range, option
from governor.errors import ConfigError, expected
from governor.observer import Observer
from governor.runner import DecisionSink, Episode, run_episodes
from governor.safety_values.filter import QValues
from governor.worlds.backseat.advisors import (
    AdviceShield,
    Advisor,
    BaseAdvisor,
    LLMAdvisor,
    SafetyAdvisor,
    SilentAdvisor,
)
from governor.worlds.backseat.env import BackseatEnv
from governor.worlds.backseat.episode import privileged_runs, run_condition
from governor.worlds.backseat.human import PERSONAS, HumanProxy, LLMHuman, ScriptedHuman
from governor.worlds.backseat.tone import ToneLearningAdvisor
from governor.worlds.driving.bench_run import start_states
from governor.worlds.driving.env import DrivingParams
from governor.worlds.driving.filter import exact_filter
from governor.worlds.driving.grid_value import GridSpec, GridValue, load_or_compute

__all__ = [
    "AdviceShield",
    "Advisor",
    "BackseatConfig",
    "BaseAdvisor",
    "LLMAdvisor",
    "SafetyAdvisor",
    "SilentAdvisor",
    "privileged_runs",
    "run_backseat",
    "run_condition",
]


@dataclasses.dataclass(frozen=True)
class BackseatConfig:
    """What the Backseat AI Driver experiments run (ReGuard, Tables 3 and 4)."""

    episodes: int = option(100, "seeded start states per condition")
    seed: int = option(0, "seed of the start states and of the erratic human")
    human: Literal["scripted", "llm"] = option(
        "scripted", "human proxy: scripted personas, or an LLM with the paper's human prompt"
    )
    advisor: Literal["offline", "llm"] = option(
        "offline", "offline: templated base and safety advisors; llm: the paper's advisor prompt"
    )
    erratic_p: float = option(0.0, "probability that the human's own policy acts at random")
    epsilon: float | None = option(
        None, "shield and filter margin on Q (default: the grid's resolution margin)"
    )
    urgency_margin: float = option(
        0.3, "safety advice sounds urgent when Q(s, a_H) <= this (units of 10 m)"
    )
    value: str = option("exact", "safety value: exact (the grid) or learned:DIR (a checkpoint)")
    tone_episodes: int = option(
        50, "offline: training episodes of the tone-learning advisor (other starts; 0: no row)"
    )
    temperature: float = option(0.0, "LLM sampling temperature (human and advisor)")
    grid_nx: int = option(101, "grid points along the track")
    grid_ny: int = option(101, "grid points across the road")
    grid_ntheta: int = option(64, "grid headings")

    def __post_init__(self) -> None:
        check_range("episodes", self.episodes, 1, 1_000_000)
        check_range("tone_episodes", self.tone_episodes, 0, 1_000_000)
        check_range("erratic_p", self.erratic_p, 0.0, 1.0)
        check_range("urgency_margin", self.urgency_margin, -1e9, 1e9)
        check_range("temperature", self.temperature, 0.0, 5.0)
        if self.epsilon is not None:
            check_range("epsilon", self.epsilon, -1e9, 1e9)
        for name in ("grid_nx", "grid_ny", "grid_ntheta"):
            check_range(name, getattr(self, name), 8, 1024)
        for name, kinds in (("human", ("scripted", "llm")), ("advisor", ("offline", "llm"))):
            if getattr(self, name) not in kinds:
                raise ConfigError(f"{name}: {expected(' or '.join(kinds), getattr(self, name))}")
        if self.value != "exact" and not self.value.startswith("learned:"):
            raise ConfigError(f"value: {expected('exact or learned:DIR', self.value)}")


def run_backseat(
    config: BackseatConfig | None = None,
    *,
    advisor_backend: Backend | None = None,
    human_backend: Backend | None = None,
    grid: GridValue | None = None,
    trace: DecisionSink | None = None,
    on_episode: Callable[[Episode], None] | None = None,
    progress: bool = False,
) -> dict[str, Any]:
    """Run Tables 3 and 4; returns a JSON-ready dict.

    ``grid`` is the exact value that the starts, the privileged runs and the default safety value
    come from (default: loaded or computed for the config's grid fields). The LLM backends are
    needed when ``config.advisor`` or ``config.human`` is ``llm``. The result:

    - ``config``, ``params``, ``episodes``, ``seed``, ``epsilon`` (the margin used), ``value``;
    - ``privileged``: ``success_rate``, ``failure_rate`` of the reference runs (the human's own
      scripted policy acting directly under the exact filter);
    - ``rows``: Table 3 (``setting`` full: the base then the safety advisor, persona none then
      urgent), then Table 4 (``setting`` shielded: the human alone, then under the shield, for each
      persona). Each row: ``setting``, ``persona``, ``advisor`` (who speaks: an advisor's name, or
      none), ``shield``, ``episodes``, ``success_rate``, ``failure_rate``, ``rollout_f1``,
      ``intervention_rate`` and ``interventions`` (None without a shield), ``followed_rate`` (share
      of steps with usable advice where the human took the advised action; None without advice),
      ``mean_steps``, ``llm_calls`` = ``advisor_calls`` + ``human_calls``, ``advisor_fallbacks``
      (templated advice after a failed LLM call), ``human_fallbacks`` (own policy after an unusable
      LLM reply);
    - ``llm_calls``: all rows together.
    """
    cfg = config or BackseatConfig()
    for what, wanted, backend in (
        ("advisor", cfg.advisor, advisor_backend),
        ("human", cfg.human, human_backend),
    ):
        if wanted == "llm" and backend is None:
            raise ConfigError(f"{what} llm: expected a backend, found None")
    params = DrivingParams() if grid is None else grid.params
    if grid is None:
        spec = GridSpec(nx=cfg.grid_nx, ny=cfg.grid_ny, ntheta=cfg.grid_ntheta)
        grid = load_or_compute(params, spec, progress=progress)[0]
    epsilon = grid.resolution if cfg.epsilon is None else cfg.epsilon
    q_values = _q_values(cfg.value, grid)
    starts = start_states(grid, cfg.episodes, cfg.seed, epsilon)
    seeds = [cfg.seed * 1_000_003 + i for i in range(cfg.episodes)]
    reference = privileged_runs(grid, epsilon, starts, seeds, cfg.erratic_p)
    succeeded = [ep.outcome == "success" for ep in reference]
    # An LLM advisor's time is bounded by its backend's timeout: a call that runs out is a
    # BackendError, answered by the templated advice, never an aborted episode.
    observer_config = ObserverConfig(
        max_regenerations=0,
        time_budget_s=None,
        fallback_budget_s=5.0 if cfg.advisor == "offline" else 3600.0,
    )

    def safety(persona: str) -> Advisor:
        templated = SafetyAdvisor(q_values, epsilon, cfg.urgency_margin)
        if cfg.advisor == "offline" or advisor_backend is None:
            return templated
        return LLMAdvisor(advisor_backend, params, templated, persona, temperature=cfg.temperature)

    def base(persona: str) -> Advisor:
        if cfg.advisor == "offline" or advisor_backend is None:
            return BaseAdvisor()
        return LLMAdvisor(advisor_backend, params, None, persona, temperature=cfg.temperature)

    def learned_tone(persona: str) -> list[tuple[Advisor, None]]:
        """The tone-learning advisor, trained on other starts with this persona, then frozen."""
        if cfg.advisor != "offline" or not cfg.tone_episodes:
            return []
        advisor = ToneLearningAdvisor(q_values, epsilon, seed=cfg.seed)
        train = start_states(grid, cfg.tone_episodes, cfg.seed + 1, epsilon)
        observer = Observer(advisor, [], None, config=observer_config)
        env = BackseatEnv(params, human(persona))
        run_episodes(env, observer, train, label=f"tone-training-{persona}")
        advisor.freeze()
        return [(advisor, None)]

    def human(persona: str) -> HumanProxy:
        if cfg.human == "llm" and human_backend is not None:
            return LLMHuman(
                human_backend, params, persona, cfg.erratic_p, temperature=cfg.temperature
            )
        return ScriptedHuman(params, persona, cfg.erratic_p)

    rows = []
    for setting in ("full", "shielded"):
        for persona in PERSONAS:
            if setting == "full":
                conditions: list[tuple[Advisor, tuple[AdviceShield, Advisor] | None]] = [
                    (base(persona), None),
                    (safety(persona), None),
                    *learned_tone(persona),
                ]
            else:
                shield = (AdviceShield(q_values, epsilon), safety(persona))
                conditions = [(SilentAdvisor(), None), (SilentAdvisor(), shield)]
            for advisor, guard in conditions:
                row, _ = run_condition(
                    BackseatEnv(params, human(persona)),
                    advisor,
                    starts,
                    seeds,
                    succeeded,
                    shield=guard,
                    config=observer_config,
                    trace=trace,
                    on_episode=on_episode,
                    label=f"{setting}-{persona}",
                )
                rows.append({"setting": setting, "persona": persona, **row})
    return {
        "config": dataclasses.asdict(cfg),
        "params": dataclasses.asdict(params),
        "episodes": cfg.episodes,
        "seed": cfg.seed,
        "epsilon": epsilon,
        "value": cfg.value,
        "privileged": {
            "success_rate": sum(succeeded) / len(succeeded),
            "failure_rate": sum(ep.outcome == "failure" for ep in reference) / len(reference),
        },
        "rows": rows,
        "llm_calls": sum(r["llm_calls"] for r in rows),
    }


def _q_values(value: str, grid: GridValue) -> QValues:
    if value == "exact":
        return exact_filter(grid)[0].q_values
    from governor.safety_values.learned import (
        LearnedQ,  # torch: only when a checkpoint is asked for
    )

    return LearnedQ.load(value.removeprefix("learned:"), env="driving", params=grid.params)
