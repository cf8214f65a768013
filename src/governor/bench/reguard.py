"""`governor bench reguard`: the layout of the ReGuard paper's tables 1 to 4 on our environments.

Table 1 (agentic driving, monitor quality) and the shielding figure come from
:mod:`~governor.bench.reguard_driving`; Table 2 (agentic commerce) from
:mod:`~governor.bench.commerce`; Tables 3 and 4 (backseat driver) from
:mod:`~governor.agents.backseat`. Learned safety values are read from checkpoint folders
(``governor train safety-value``); a missing one is trained for ``train_minutes`` when that is
positive, else its rows are left out and the result says so. The one-step (LlamaGuard-style) and
imitation (Myopic) baselines train in seconds and are trained here, seeded.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from tqdm import tqdm

from governor.agents.driving import ErraticPolicy, NominalController
from governor.backends import Backend, backend_from_config
from governor.bench.driving import start_states
from governor.bench.reguard_driving import (
    Guard,
    PolicyOf,
    classifier_value_safe,
    q_value_safe,
    shield,
)
from governor.config import BackendConfig, check_range, option
from governor.core import Policy
from governor.envs.driving import DrivingParams
from governor.errors import ConfigError, expected
from governor.filters.commands import single_thread
from governor.filters.grid_value import GridSpec, GridValue, load_or_compute
from governor.filters.safety_filter import exact_filter

TABLES = ("all", "driving", "commerce", "backseat")
OBS: tuple[Literal["state", "text"], ...] = ("state", "text")


@dataclasses.dataclass(frozen=True)
class ReGuardBenchConfig:
    """What `governor bench reguard` runs."""

    tables: Literal["all", "driving", "commerce", "backseat"] = option("all", "which tables")
    episodes: int = option(100, "driving: start states per (base policy, guard)")
    seed: int = option(0, "seed of the starts, the erratic policy and the baselines")
    erratic_p: float = option(0.3, "probability that the erratic policy acts at random")
    checkpoints: str = option(
        "reguard-checkpoints", "folder of the learned values: driving-state/, driving-text/"
    )
    learned: str = option("state,text", "learned values to use: state, text, or both (a,b)")
    llm_checkpoint: str | None = option(
        None, "an LLM-backbone value (train safety-value --obs llm) for a ReGuard (LLM) row"
    )
    model_path: str | None = option(None, "its model folder (default: where it was trained)")
    train_minutes: float = option(
        0.0, "train a missing learned value for this many minutes (0: leave its rows out)"
    )
    margin: float | None = option(None, "filter margin (default: the grid's resolution margin)")
    monitor_steps: int = option(600, "proposed actions scored per guard for the monitor metrics")
    zero_shot: bool = option(False, "add the zero-shot LLM guard (needs an endpoint)")
    false_safe: float = option(
        0.005,
        "learned filters: margin calibrated so that at most this share of admitted "
        "held-out (state, action) pairs is doomed",
    )

    def __post_init__(self) -> None:
        if self.tables not in TABLES:
            raise ConfigError(f"tables: {expected(', '.join(TABLES), self.tables)}")
        check_range("episodes", self.episodes, 1, 1_000_000)
        check_range("erratic_p", self.erratic_p, 0.0, 1.0)
        check_range("train_minutes", self.train_minutes, 0.0, 1e4)
        check_range("monitor_steps", self.monitor_steps, 1, 10_000_000)
        check_range("false_safe", self.false_safe, 0.0, 1.0)
        unknown = set(self.observations) - set(OBS)
        if unknown:
            raise ConfigError(f"learned: {expected('state, text or state,text', self.learned)}")

    @property
    def observations(self) -> tuple[str, ...]:
        """The learned values asked for, in the order state, text."""
        asked = {o.strip() for o in self.learned.split(",") if o.strip()}
        return tuple(o for o in OBS if o in asked) + tuple(sorted(asked - set(OBS)))

    def wants(self, table: str) -> bool:
        return self.tables in ("all", table)


def learned_values(
    cfg: ReGuardBenchConfig, gv: GridValue, notes: list[str], progress: bool
) -> dict[str, Any]:
    """The state and text checkpoints as LearnedQ, training missing ones when asked."""
    from governor.filters.learned import LearnedQ

    found: dict[str, Any] = {}
    for obs in OBS:
        if obs not in cfg.observations:
            continue
        folder = Path(cfg.checkpoints) / f"driving-{obs}"
        if not (folder / "checkpoint.pt").is_file():
            if cfg.train_minutes <= 0:
                notes.append(f"no {obs} checkpoint in {folder}: its rows are left out")
                continue
            from governor.filters.ddqn import train
            from governor.filters.ddqn_config import DDQNConfig

            train(
                DDQNConfig(obs=obs, minutes=cfg.train_minutes, seed=cfg.seed),
                folder,
                grid=gv,
                progress=progress,
            )
            notes.append(f"{obs} value trained here for {cfg.train_minutes:g} min")
        found[obs] = LearnedQ.load(folder, env="driving", obs=obs, params=gv.params)
    if cfg.llm_checkpoint is not None:
        from governor.filters.llm_q import LLMQ

        found["llm"] = LLMQ.load(cfg.llm_checkpoint, cfg.model_path)
    return found


def driving_guards(
    cfg: ReGuardBenchConfig,
    gv: GridValue,
    margin: float,
    learned: dict[str, Any],
    backend: Backend | None,
    margins: dict[str, float],
) -> tuple[list[Guard], Any]:
    """The guards of the driving tables, and the imitation recovery model (for its own row).

    ``margins`` gets each learned filter's calibrated margin.
    """
    from governor.filters import myopic_learned as ml
    from governor.filters.learned import calibrated_margin, held_out_states
    from governor.filters.safety_filter import SafetyFilter, ValueFallback

    monitor, fallback = exact_filter(gv, margin)
    guards = [
        Guard("none", [], None),
        Guard("exact", [monitor], fallback, q_value_safe(gv.q_batch)),
    ]
    names = {"state": "privileged", "text": "reguard_text", "llm": "reguard_llm"}
    calibration = held_out_states(gv.params, 20_000, cfg.seed, stream=2)
    for obs, q in learned.items():
        held = calibration[:1000] if obs == "llm" else calibration  # an LLM reads 1,000 prompts
        m = calibrated_margin(q.q_states, gv.q_batch, held, cfg.false_safe, floor=margin)
        margins[names[obs]] = m
        guards.append(
            Guard(
                names[obs],
                [SafetyFilter(q, m, name=names[obs])],
                ValueFallback(q),
                q_value_safe(q.q_states),
            )
        )
    mcfg = ml.MyopicConfig(seed=cfg.seed)
    states = ml.rollout_states(gv.params, mcfg)
    classifier = ml.train("myopic_classifier", gv.params, mcfg, states=states)
    recovery = ml.train("myopic_recovery", gv.params, mcfg, grid=gv, states=states)
    value = classifier_value_safe(classifier.p_safe)
    for name, rec in (("llamaguard", None), ("llamaguard_myopic", recovery)):
        mon, fb = ml.myopic_guard(classifier, rec)
        guards.append(Guard(name, [mon], fb, value))
    if backend is not None:
        from governor.filters.zero_shot import ZeroShotFallback, ZeroShotJudge, ZeroShotMonitor

        judge = ZeroShotMonitor(ZeroShotJudge(backend, gv.params))
        guards.append(Guard("zero_shot", [judge], ZeroShotFallback(backend, gv.params)))
    return guards, recovery


def run_driving(
    cfg: ReGuardBenchConfig, backend: Backend | None, notes: list[str], progress: bool
) -> dict[str, Any]:
    """Table 1 (erratic base) and the shielding rows (every base policy)."""
    from governor.filters.myopic_learned import ImitationFallback

    params = DrivingParams()
    gv = load_or_compute(params, GridSpec(), progress=progress)[0]
    margin = gv.resolution if cfg.margin is None else cfg.margin
    starts = start_states(gv, cfg.episodes, cfg.seed, margin)
    learned = learned_values(cfg, gv, notes, progress)
    margins = {"exact": margin}
    guards, recovery = driving_guards(cfg, gv, margin, learned, backend, margins)
    bases: dict[str, Callable[[], Policy]] = {
        "nominal": lambda: NominalController(params),
        "erratic": lambda: ErraticPolicy(params, p=cfg.erratic_p, seed=cfg.seed),
    }
    shielding: list[dict[str, Any]] = []
    bar = tqdm(
        total=(len(bases) * len(guards) + 1) * len(starts),
        desc="reguard driving",
        unit="ep",
        disable=None if progress else True,
    )
    with bar:
        for base, factory in bases.items():
            rows = shield(
                factory,
                guards,
                gv,
                margin,
                starts,
                monitor_limit=cfg.monitor_steps,
                seed=cfg.seed,
                score_monitors=base == "erratic",
                tick=lambda: bar.update(),
                label=base,
            )
            shielding += rows
        alone = shield(
            lambda: PolicyOf(ImitationFallback(recovery), "myopic_privileged"),
            [Guard("none", [], None)],
            gv,
            margin,
            starts,
            monitor_limit=0,
            seed=cfg.seed,
            score_monitors=False,
            tick=lambda: bar.update(),
        )
    table1 = [r for r in shielding if r["policy"] == "erratic" and r["guard"] != "none"]
    table1.append({**alone[0], "guard": "myopic_privileged (run alone)"})
    return {
        "margins": margins,
        "starts": len(starts),
        "learned": {
            obs: {k: getattr(q, "info", {}).get(k) for k in ("iteration", "minutes", "agreement")}
            for obs, q in learned.items()
        },
        "table1": table1,
        "shielding": shielding,
        "_grid": gv,
        "_learned": learned,
    }


def run_commerce_table(cfg: ReGuardBenchConfig, notes: list[str]) -> dict[str, Any]:
    """Table 2: the scripted shopping agents with no guard, the exact and the learned filter."""
    from governor.bench.commerce import CommerceBenchConfig, run_commerce

    text = Path(cfg.checkpoints) / "commerce-text"
    found = (text / "checkpoint.pt").is_file()
    if not found:
        notes.append(f"commerce: no text checkpoint in {text}, the learned filter is left out")
    return run_commerce(CommerceBenchConfig(seed=cfg.seed, checkpoint=str(text) if found else None))


def run_backseat_table(cfg: ReGuardBenchConfig, notes: list[str]) -> dict[str, Any]:
    """Tables 3 and 4; the advisor and shield read the text value (calibrated margin) if any."""
    from governor.agents.backseat import BackseatConfig, run_backseat
    from governor.filters.learned import LearnedQ, calibrated_margin, held_out_states

    text = Path(cfg.checkpoints) / "driving-text"
    gv = load_or_compute(DrivingParams(), GridSpec(), progress=False)[0]
    if not (text / "checkpoint.pt").is_file():
        notes.append("backseat: no text checkpoint, the safety advisor reads the exact value")
        return run_backseat(BackseatConfig(episodes=cfg.episodes, seed=cfg.seed), grid=gv)
    q = LearnedQ.load(text, env="driving", obs="text", params=gv.params)
    states = held_out_states(gv.params, 20_000, cfg.seed, stream=2)
    floor = gv.resolution if cfg.margin is None else cfg.margin
    epsilon = calibrated_margin(q.q_states, gv.q_batch, states, cfg.false_safe, floor=floor)
    bcfg = BackseatConfig(
        episodes=cfg.episodes, seed=cfg.seed, value=f"learned:{text}", epsilon=epsilon
    )
    return run_backseat(bcfg, grid=gv)


def run(
    cfg: ReGuardBenchConfig,
    backend_config: BackendConfig | None = None,
    *,
    backend: Backend | None = None,
    progress: bool = True,
) -> dict[str, Any]:
    """Run the tables ``cfg`` asks for; a JSON-ready dict (keys with '_' are for plots)."""
    start = time.perf_counter()
    single_thread()
    if cfg.zero_shot and backend is None:
        backend = backend_from_config(backend_config or BackendConfig.from_env())
        backend.check()
    notes: list[str] = []
    result: dict[str, Any] = {"config": dataclasses.asdict(cfg), "notes": notes}
    if cfg.wants("driving"):
        result["driving"] = run_driving(cfg, backend if cfg.zero_shot else None, notes, progress)
    if cfg.wants("commerce"):
        result["commerce"] = run_commerce_table(cfg, notes)
    if cfg.wants("backseat"):
        result["backseat"] = run_backseat_table(cfg, notes)
    result["seconds"] = time.perf_counter() - start
    return result
