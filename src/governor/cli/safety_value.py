"""The ``governor train safety-value`` and ``governor eval safety-value`` commands.

``train`` runs reach-avoid DDQN (:mod:`~governor.safety_values.ddqn`) for ``--env driving`` or
``--env commerce`` and writes a checkpoint directory; ``eval`` measures a checkpoint against its
env's exact value (driving: the grid value; commerce: the dynamic programme; :func:`~governor.
safety_values.learned.evaluate`) and writes ``{"env", "obs", "agreement", "value_f1", "tp_rate",
"tn_rate", "fn_rate", "train_minutes"}``. The envs are the tasks the worlds register
(:mod:`~governor.safety_values.tasks`): this module imports the driving and the commerce task
modules, in that order (the order the registry lists them in).
"""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path
from typing import Any

from rich.console import Console

from governor.config import check_range, option
from governor.errors import ConfigError, expected
from governor.files import write_json
from governor.flags import add_dataclass_args, dataclass_from_args
from governor.safety_values.ddqn_config import DDQNConfig, env_defaults_text, single_thread
from governor.safety_values.tasks import task_named
from governor.worlds.driving import task as driving_task
from governor.worlds.driving.env import DrivingParams

# isort: split
from governor.worlds.commerce import task as commerce_task

OBS_CHOICES = ("state", "text", "llm", "llm-head")
WORLD_TASKS = (driving_task, commerce_task)  # importing them registers the envs, in this order


@dataclasses.dataclass(frozen=True)
class EvalConfig:
    """`governor eval safety-value`: a checkpoint against its env's exact value."""

    states: int = option(20_000, "held-out live states")
    seed: int = option(20_251_007, "seed of the held-out states (training never draws them)")
    env: str | None = option(None, "refuse a checkpoint trained for another environment")
    obs: str | None = option(None, "refuse a checkpoint of another observation model")
    latency: bool = option(False, "also time one filter decision (median, batch of one)")
    model_path: str | None = option(
        None, "obs llm, llm-head: the model folder (default: where it trained)"
    )
    llm_states: int = option(
        200, "obs llm, llm-head: evaluate at most this many of --states (each is a forward pass)"
    )
    grid_nx: int = option(101, "driving's exact grid value: points along the track")
    grid_ny: int = option(101, "driving's exact grid value: points across the road")
    grid_ntheta: int = option(64, "driving's exact grid value: headings")

    def __post_init__(self) -> None:
        check_range("states", self.states, 1, 10_000_000)
        check_range("llm_states", self.llm_states, 1, 10_000_000)
        if self.env is not None:
            task_named(self.env)  # a ConfigError naming the registered envs
        if self.obs is not None and self.obs not in OBS_CHOICES:
            raise ConfigError(f"obs: {expected(' or '.join(OBS_CHOICES), self.obs)}")


def add_train_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``train`` (``safety-value``) to ``subparsers``."""
    train = subparsers.add_parser("train", help="train a learned guard")
    sub = train.add_subparsers(dest="train_command", required=True, parser_class=type(train))
    value = sub.add_parser(
        "safety-value",
        help="reach-avoid DDQN safety value from states or text observations",
        epilog=env_defaults_text(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    value.add_argument("--out", type=Path, required=True, help="checkpoint directory")
    value.add_argument(
        "--force", action="store_true", help="overwrite a checkpoint already in --out"
    )
    add_dataclass_args(value, DDQNConfig)
    value.set_defaults(handler=train_command)
    return train


def add_eval_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``eval`` (``safety-value``) to ``subparsers``."""
    ev = subparsers.add_parser("eval", help="evaluate a learned guard")
    sub = ev.add_subparsers(dest="eval_command", required=True, parser_class=type(ev))
    value = sub.add_parser("safety-value", help="a safety value checkpoint against the exact value")
    value.add_argument("checkpoint", type=Path, help="checkpoint directory")
    value.add_argument("--json", type=Path, help="write the metrics here")
    add_dataclass_args(value, EvalConfig)
    value.set_defaults(handler=eval_command)
    return ev


def train_command(args: argparse.Namespace, console: Console) -> int:
    """Train, checkpointing to ``--out``; an interrupt keeps the checkpoint and exits 130."""
    cfg = dataclass_from_args(DDQNConfig, args)
    names = ("checkpoint.pt", "meta.json", "adapter", "head.pt")
    existing = [n for n in names if (args.out / n).exists()]
    if existing and not args.force:
        found = f"{', '.join(existing)} already there"
        raise ConfigError(
            f"--out {args.out}: expected a new folder, found {found} (--force overwrites)"
        )
    single_thread()
    if cfg.obs in ("llm", "llm-head"):
        return _train_llm(cfg, args.out, console)
    from governor.safety_values.ddqn import train

    result = train(cfg, args.out)
    how = "interrupted" if result.interrupted else "done"
    console.print(
        f"{how}: {result.iterations} iterations in {result.minutes:.1f} min, agreement "
        f"{result.agreement:.2%} on the check states; checkpoint in {result.out}/"
    )
    return 130 if result.interrupted else 0


def eval_command(args: argparse.Namespace, console: Console) -> int:
    """Evaluate a checkpoint; print the metrics and write them to ``--json``."""
    cfg = dataclass_from_args(EvalConfig, args)
    if not args.checkpoint.is_dir():
        raise ConfigError(
            f"checkpoint: expected a folder written by train safety-value, found no folder at "
            f"{args.checkpoint}"
        )
    single_thread()
    if (args.checkpoint / "checkpoint.pt").is_file() or cfg.obs not in (None, "llm", "llm-head"):
        metrics, latency = _eval_learned(args.checkpoint, cfg)
    else:
        metrics, latency = _eval_llm(args.checkpoint, cfg)
        if metrics["states"] < metrics["states_requested"]:
            console.print(
                f"note: an LLM value is evaluated on {metrics['states']} of the "
                f"{metrics['states_requested']} held-out states (--llm-states caps them: each "
                "state is a forward pass of the model)"
            )
    console.print(
        f"{metrics['env']}/{metrics['obs']}: agreement {metrics['agreement']:.2%}, value F1 "
        f"{metrics['value_f1']:.3f}, TP {metrics['tp_rate']:.3f} TN {metrics['tn_rate']:.3f} "
        f"FN {metrics['fn_rate']:.3f} ({metrics['train_minutes']:.1f} training minutes)"
    )
    if latency is not None:
        console.print(f"filter decision: {latency:.0f} µs median")
    if args.json is not None:
        write_json(args.json, metrics)
    return 0


def _eval_learned(checkpoint: Path, cfg: EvalConfig) -> tuple[dict[str, Any], float | None]:
    from governor.safety_values.learned import LearnedQ, decision_latency_us, evaluate

    learned = LearnedQ.load(checkpoint, env=cfg.env, obs=cfg.obs)
    shape = (cfg.grid_nx, cfg.grid_ny, cfg.grid_ntheta)
    exact = learned.model.task.exact_value(shape, progress=True)
    metrics = evaluate(learned, exact, cfg.states, cfg.seed)
    return metrics, decision_latency_us(learned) if cfg.latency else None


def _eval_llm(checkpoint: Path, cfg: EvalConfig) -> tuple[dict[str, Any], float | None]:
    """An LLM checkpoint (a LoRA adapter or a frozen-state head) against the exact driving value,
    on at most ``llm_states`` held-out states."""
    from governor.safety_values.frozen_q.head import FrozenQ, is_head_checkpoint
    from governor.safety_values.learned import held_out_states
    from governor.safety_values.llm_q.evaluate import TextValue, evaluate_llm_q
    from governor.safety_values.llm_q.value import LLMQ
    from governor.worlds.driving.grid_value import GridSpec, load_or_compute
    from governor.worlds.driving.llm_task import DrivingLLMTask

    if cfg.env not in (None, "driving"):
        raise ConfigError(f"env: {expected('driving for an LLM checkpoint', cfg.env)}")
    head = is_head_checkpoint(checkpoint)
    if cfg.obs is not None and cfg.obs != ("llm-head" if head else "llm"):
        found = "a frozen-state head (llm-head)" if head else "a LoRA adapter (llm)"
        raise ConfigError(f"checkpoint {checkpoint}: expected obs {cfg.obs}, found {found}")
    path = _model_folder(cfg.model_path)
    q: TextValue = (
        FrozenQ.load(checkpoint, path, task=DrivingLLMTask())
        if head
        else LLMQ.load(checkpoint, path, task=DrivingLLMTask())
    )
    spec = GridSpec(nx=cfg.grid_nx, ny=cfg.grid_ny, ntheta=cfg.grid_ntheta)
    grid = load_or_compute(q.task.params, spec, progress=True)[0]
    n = min(cfg.states, cfg.llm_states)
    states = held_out_states(q.task.params, n, cfg.seed)
    metrics = evaluate_llm_q(q, grid.values, states, exact_q=grid.q_batch)
    return {**metrics, "states": n, "states_requested": cfg.states}, None


def _model_folder(spec: str | None) -> Path | None:
    """The folder ``--model-path`` names (gemma3-270m: the fetched model); None stays None."""
    from governor.backends.local_model import resolve_model_path

    return None if spec is None else resolve_model_path(spec)


def _train_llm(cfg: DDQNConfig, out: Path, console: Console) -> int:
    """obs llm (LoRA, Table 5 but for the budget flags) or llm-head (a head on frozen states)."""
    from governor.worlds.driving.grid_value import GridSpec, load_or_compute
    from governor.worlds.driving.llm_task import DrivingLLMTask

    path = _model_folder(cfg.model_path)
    assert path is not None  # the config refuses obs llm without a model
    spec = GridSpec(nx=cfg.grid_nx, ny=cfg.grid_ny, ntheta=cfg.grid_ntheta)
    grid = load_or_compute(DrivingParams(), spec, progress=True)[0]
    if cfg.obs == "llm-head":
        from governor.safety_values.frozen_q.head import HeadSettings
        from governor.safety_values.frozen_q.train_head import FrozenQTrainConfig, train_frozen_q

        head_cfg = FrozenQTrainConfig(
            transitions=cfg.head_transitions, cars=cfg.llm_cars, iterations=cfg.iterations,
            minutes=cfg.minutes, batch_size=cfg.batch_size or 64, gamma=cfg.gamma,
            tau=cfg.tau, lr=cfg.lr, weight_decay=cfg.weight_decay, seed=cfg.seed,
        )  # fmt: skip
        q = train_frozen_q(
            path, out, task=DrivingLLMTask(), config=head_cfg,
            settings=HeadSettings(hidden=cfg.head_hidden, dtype=cfg.llm_dtype),
        )  # fmt: skip
        console.print(
            f"done: {q.info['transitions']} transitions ({q.info['forward_passes']} forward "
            f"passes), {q.info['iteration']} head steps; head in {out}/"
        )
        return 130 if q.info["interrupted"] else 0
    from governor.safety_values.llm_q.train import LLMQTrainConfig, train_llm_q

    llm_cfg = LLMQTrainConfig(
        n_cars=cfg.llm_cars, batch_size=cfg.batch_size or 8,
        learning_starts=cfg.llm_learning_starts, checkpoint_minutes=cfg.checkpoint_minutes,
        dtype=cfg.llm_dtype,
    )  # fmt: skip
    result = train_llm_q(
        path, out, task=DrivingLLMTask(), minutes=cfg.minutes, iterations=cfg.iterations,
        seed=cfg.seed, config=llm_cfg, exact_value=grid.values,
    )  # fmt: skip
    how = "interrupted" if result.interrupted else "done"
    console.print(
        f"{how}: {result.iterations} iterations in {result.minutes:.1f} min; adapter in {out}/"
    )
    return 130 if result.interrupted else 0
