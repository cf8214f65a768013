"""`governor bench reguard`: the layout of the ReGuard paper's tables 1 to 4 on our environments.

Table 1 (agentic driving, monitor quality) and the shielding figure come from
:mod:`~governor.worlds.driving.reguard`; Table 2 (agentic commerce) from
:mod:`~governor.worlds.commerce.bench`; Tables 3 and 4 (backseat driver) from
:mod:`~governor.worlds.backseat.bench`. Learned safety values are read from checkpoint folders
(``governor train safety-value``); a missing one is trained for ``train_minutes`` when that is
positive, else its rows are left out and the result says so. The one-step (LlamaGuard-style) and
imitation (Myopic) baselines train in seconds and are trained here, seeded.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tqdm import tqdm

from governor.backends import Backend, backend_from_config
from governor.config import BackendConfig
from governor.core import Policy
from governor.safety_values.ddqn_config import single_thread
from governor.worlds.driving.bench_run import start_states
from governor.worlds.driving.controllers import ErraticPolicy, NominalController
from governor.worlds.driving.env import DrivingParams
from governor.worlds.driving.grid_value import GridSpec, load_or_compute
from governor.worlds.driving.reguard import (
    Guard,
    PolicyOf,
    shield,
)
from governor.worlds.driving.reguard_config import ReGuardBenchConfig
from governor.worlds.driving.reguard_guards import driving_guards, learned_values


def run_driving(
    cfg: ReGuardBenchConfig, backend: Backend | None, notes: list[str], progress: bool
) -> dict[str, Any]:
    """Table 1 (erratic base) and the shielding rows (every base policy)."""
    from governor.worlds.driving.myopic_guard import ImitationFallback

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
    from governor.worlds.commerce.bench import CommerceBenchConfig, run_commerce

    text = Path(cfg.checkpoints) / "commerce-text"
    found = (text / "checkpoint.pt").is_file()
    if not found:
        notes.append(f"commerce: no text checkpoint in {text}, the learned filter is left out")
    return run_commerce(CommerceBenchConfig(seed=cfg.seed, checkpoint=str(text) if found else None))


def run_backseat_table(cfg: ReGuardBenchConfig, notes: list[str]) -> dict[str, Any]:
    """Tables 3 and 4; the advisor and shield read the text value (calibrated margin) if any."""
    from governor.safety_values.learned import LearnedQ, calibrated_margin, held_out_states
    from governor.worlds.backseat.bench import BackseatConfig, run_backseat

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
