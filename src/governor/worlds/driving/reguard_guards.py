"""The learned values and the guards of the driving tables of `governor bench reguard`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import governor.worlds.driving.task  # noqa: F401  # registers the env "driving" for checkpoints
from governor.backends import Backend
from governor.worlds.driving.env import LABELS
from governor.worlds.driving.filter import exact_filter
from governor.worlds.driving.grid_value import GridValue
from governor.worlds.driving.reguard import Guard, classifier_value_safe, q_value_safe
from governor.worlds.driving.reguard_config import OBS, ReGuardBenchConfig


def learned_values(
    cfg: ReGuardBenchConfig, gv: GridValue, notes: list[str], progress: bool
) -> dict[str, Any]:
    """The state and text checkpoints as LearnedQ, training missing ones when asked."""
    from governor.safety_values.learned import LearnedQ

    found: dict[str, Any] = {}
    for obs in OBS:
        if obs not in cfg.observations:
            continue
        folder = Path(cfg.checkpoints) / f"driving-{obs}"
        if not (folder / "checkpoint.pt").is_file():
            if cfg.train_minutes <= 0 and cfg.train_steps is None:
                notes.append(f"no {obs} checkpoint in {folder}: its rows are left out")
                continue
            from governor.safety_values.ddqn import train
            from governor.safety_values.ddqn_config import DDQNConfig

            if cfg.train_steps is None:
                config = DDQNConfig(obs=obs, seed=cfg.seed, minutes=cfg.train_minutes)
                notes.append(f"{obs} value trained here for {cfg.train_minutes:g} min")
            else:  # bounded by steps alone: the same checkpoint on every machine
                config = DDQNConfig(obs=obs, seed=cfg.seed, minutes=1e4, iterations=cfg.train_steps)
                notes.append(f"{obs} value trained here for {cfg.train_steps:,} gradient steps")
            train(config, folder, grid=gv, progress=progress)
        found[obs] = LearnedQ.load(folder, env="driving", obs=obs, params=gv.params)
    if cfg.llm_checkpoint is not None:
        from governor.safety_values.frozen_q.head import FrozenQ, is_head_checkpoint
        from governor.safety_values.llm_q.value import LLMQ
        from governor.worlds.driving.llm_task import DrivingLLMTask

        task = DrivingLLMTask()
        if is_head_checkpoint(cfg.llm_checkpoint):  # a Q head on the model's frozen states
            found["llm-head"] = FrozenQ.load(cfg.llm_checkpoint, cfg.model_path, task=task)
        else:
            found["llm"] = LLMQ.load(cfg.llm_checkpoint, cfg.model_path, task=task)
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
    from governor.safety_values.filter import SafetyFilter, ValueFallback
    from governor.safety_values.learned import calibrated_margin, held_out_states
    from governor.worlds.driving import myopic_learned as ml
    from governor.worlds.driving.myopic_guard import myopic_guard

    monitor, fallback = exact_filter(gv, margin)
    guards = [
        Guard("none", [], None),
        Guard("exact", [monitor], fallback, q_value_safe(gv.q_batch)),
    ]
    names = {"state": "privileged", "text": "reguard_text", "llm": "reguard_llm"}
    names["llm-head"] = "reguard_llm_head"
    calibration = held_out_states(gv.params, 20_000, cfg.seed, stream=2)
    for obs, q in learned.items():
        held = calibration[:1000] if obs.startswith("llm") else calibration  # 1,000 prompts
        m = calibrated_margin(q.q_states, gv.q_batch, held, cfg.false_safe, floor=margin)
        margins[names[obs]] = m
        guards.append(
            Guard(
                names[obs],
                [SafetyFilter(q, m, name=names[obs], labels=LABELS)],
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
        mon, fb = myopic_guard(classifier, rec)
        guards.append(Guard(name, [mon], fb, value))
    if backend is not None:
        from governor.worlds.driving.zero_shot import (
            ZeroShotFallback,
            ZeroShotJudge,
            ZeroShotMonitor,
        )

        judge = ZeroShotMonitor(ZeroShotJudge(backend, gv.params))
        guards.append(Guard("zero_shot", [judge], ZeroShotFallback(backend, gv.params)))
    return guards, recovery
