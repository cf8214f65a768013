"""Token-level reach-avoid DDQN for :class:`~governor.safety_values.llm_q.value.LLMQ`.

Double Q keeps one base model and two sets of LoRA weights, as the paper does: the online adapter
is the peft model's own, the target is a detached copy of just the LoRA tensors, soft-updated by
tau and swapped in for a forward pass with ``torch.func.functional_call``. Each iteration steps a
few cars once (epsilon-greedy over the letters in V'), stores their token transitions
(:mod:`~governor.safety_values.llm_q.transitions`), takes one AdamW step on a replay batch (mean squared error
to the token-level target) and soft-updates the target; epsilon and the learning rate follow
:func:`~governor.safety_values.ddqn_config.step_schedule`. A checkpoint is
:meth:`LLMQ.save <governor.safety_values.llm_q.value.LLMQ.save>`: the LoRA adapter and meta.json.

Recipe where weights and a GPU exist. The defaults are the paper's Table 5 (lr 2e-5 decaying by
0.8 every 20k iterations to 1e-6, epsilon 0.95 decaying by 0.7 every 20k to 0.05, tau 0.005,
batch 8, buffer 5000, gamma 0.99, 400k iterations; the paper trained 66 hours on one RTX 4090).
This code has run on tiny randomly initialised Llama models and, for a few minutes on one CPU
thread, on Gemma 3 270M (about 30 s an iteration at one car and batch 2: ``governor bench models``
and docs/local-model.md give the figures); never on Llama weights or a GPU, so nothing here
reports how well the full recipe works::

    import numpy as np
    from governor.worlds.driving.grid_value import load_or_compute
    from governor.worlds.driving.llm_task import DrivingLLMTask
    from governor.safety_values.llm_q.value import LLMQ
    from governor.safety_values.llm_q.evaluate import evaluate_llm_q
    from governor.safety_values.llm_q.train import LLMQTrainConfig, train_llm_q

    model = "/models/Llama-3.2-1B-Instruct"  # a local folder: config.json and *.safetensors
    task = DrivingLLMTask()  # the driving prompts, letters and dynamics
    grid = load_or_compute(task.params)[0]  # the exact value, for agreement checks
    cfg = LLMQTrainConfig(device="cuda", dtype="bfloat16",
                          attn_implementation="flash_attention_2")  # None: transformers' default
    train_llm_q(model, "runs/llm-q", task=task, minutes=66 * 60, iterations=400_000, seed=0,
                config=cfg, exact_value=grid.values)
    q = LLMQ.load("runs/llm-q", model, task=task, device="cuda", dtype="bfloat16")
    states = task.sample_live_states(2000, np.random.default_rng(20_251_007))
    print(evaluate_llm_q(q, grid.values, states, exact_q=grid.q_batch))
    advice = q.guided_generate(messages, max_tokens=50, beta=38.0, temperature=1.0)  # Table 10

Imports the package's other parts and the runtime's training helpers; no world: the task is handed in.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch

from governor.config import check_range, option
from governor.safety_values.ddqn_config import step_schedule
from governor.safety_values.llm_q.evaluate import sign_agreement
from governor.safety_values.llm_q.model import LLMQSettings
from governor.safety_values.llm_q.task import LLMTask, Value
from governor.safety_values.llm_q.transitions import TokenEnvs, TokenReplay, td_loss
from governor.safety_values.llm_q.value import LLMQ
from governor.safety_values.training import TrainingLoop, gradient_step, soft_update


@dataclasses.dataclass(frozen=True)
class LLMQTrainConfig:
    """Token-level reach-avoid DDQN on an LLM (defaults: the paper's Table 5, Agentic Driving)."""

    minutes: float = option(15.0, "wall-clock training budget in minutes")
    iterations: int = option(400_000, "gradient steps at most")
    seed: int = option(0, "seed of the adapters, the cars and the exploration")
    n_cars: int = option(4, "cars driven at once; each step adds K + 1 token transitions per car")
    buffer_size: int = option(5000, "replay buffer capacity (token transitions)")
    batch_size: int = option(8, "token transitions per gradient step")
    learning_starts: int = option(64, "token transitions collected before the first step")
    gamma: float = option(0.99, "discount of an EOS transition (content tokens use 1)")
    tau: float = option(0.005, "soft update rate of the target adapter")
    lr: float = option(2e-5, "learning rate at the start")
    lr_decay: float = option(0.8, "learning rate factor per period")
    lr_period: int = option(20_000, "iterations per learning rate decay")
    lr_end: float = option(1e-6, "learning rate floor")
    eps_start: float = option(0.95, "exploration rate at the start")
    eps_decay: float = option(0.7, "exploration factor per period")
    eps_period: int = option(20_000, "iterations per exploration decay")
    eps_end: float = option(0.05, "exploration floor")
    adam_eps: float = option(1e-5, "AdamW epsilon")
    weight_decay: float = option(0.0, "AdamW weight decay")
    device: str = option("cpu", "torch device, e.g. cuda")
    dtype: str | None = option(None, "model dtype (bfloat16 on a GPU); None keeps the saved one")
    attn_implementation: str | None = option(None, "e.g. flash_attention_2; None: the default")
    eval_every: int = option(1000, "iterations between agreement checks (needs exact_value)")
    eval_states: int = option(200, "live road states of the agreement check")
    log_every: int = option(10, "iterations between progress bar updates")
    checkpoint_minutes: float = option(10.0, "minutes between checkpoints")

    def __post_init__(self) -> None:
        check_range("minutes", self.minutes, 0.0, 1e7)
        for name in ("iterations", "n_cars", "buffer_size", "batch_size", "lr_period"):
            check_range(name, getattr(self, name), 1, 1e9)
        for name in ("eps_period", "eval_every", "eval_states", "log_every"):
            check_range(name, getattr(self, name), 1, 1e9)
        check_range("learning_starts", self.learning_starts, 0, 1e9)
        for name in ("gamma", "tau", "lr_decay", "eps_start", "eps_decay", "eps_end"):
            check_range(name, getattr(self, name), 0.0, 1.0)
        for name in ("lr", "lr_end", "adam_eps", "weight_decay", "checkpoint_minutes"):
            check_range(name, getattr(self, name), 0.0, 1e3)


@dataclasses.dataclass(frozen=True)
class LLMQTrainResult:
    """Where the checkpoint is, how training went, and the trained value."""

    out: Path
    iterations: int
    minutes: float
    loss: float | None
    agreement: float | None
    interrupted: bool
    llm_q: LLMQ


def train_llm_q(
    model_path: str | Path,
    out: str | Path,
    *,
    task: LLMTask,
    minutes: float | None = None,
    iterations: int | None = None,
    seed: int | None = None,
    progress: bool = True,
    config: LLMQTrainConfig | None = None,
    settings: LLMQSettings | None = None,
    exact_value: Value | None = None,
    callback: Callable[[dict[str, Any]], None] | None = None,
) -> LLMQTrainResult:
    """Train ``task``'s safety value on the model at ``model_path``; checkpoints go to ``out``.

    ``minutes``, ``iterations`` and ``seed`` override ``config``. With ``exact_value`` (states ->
    V, e.g. ``GridValue.values``) the sign agreement is checked every ``eval_every`` iterations
    and ``callback`` gets the status. A KeyboardInterrupt (also from the callback) ends training
    cleanly: the current adapter is checkpointed and returned.
    """
    overrides: dict[str, Any] = {"minutes": minutes, "iterations": iterations, "seed": seed}
    cfg = dataclasses.replace(
        config or LLMQTrainConfig(), **{k: v for k, v in overrides.items() if v is not None}
    )
    out = Path(out)
    torch.manual_seed(cfg.seed)
    rng = np.random.default_rng(cfg.seed)
    llm_q = LLMQ(
        model_path,
        task,
        settings=settings,
        device=cfg.device,
        dtype=cfg.dtype,
        attn_implementation=cfg.attn_implementation,
    )
    online = llm_q.lora_parameters()
    target = {name: p.detach().clone() for name, p in online.items()}
    opt = torch.optim.AdamW(
        online.values(), lr=cfg.lr, eps=cfg.adam_eps, weight_decay=cfg.weight_decay
    )
    cars = TokenEnvs(llm_q, cfg.n_cars, rng)
    buffer = TokenReplay(cfg.buffer_size)
    check = task.sample_live_states(cfg.eval_states, np.random.default_rng([cfg.seed, 1]))
    status: dict[str, Any] = {"iteration": 0, "minutes": 0.0, "loss": None, "agreement": None}
    history: list[dict[str, Any]] = []

    def save() -> None:
        info = {"config": dataclasses.asdict(cfg), "history": history, **status}
        llm_q.save(out, info)

    def agreement() -> float | None:
        if exact_value is None:
            return None
        return sign_agreement(llm_q.q_states(check), exact_value(check))

    loop = TrainingLoop(
        cfg.iterations,
        cfg.minutes,
        cfg.checkpoint_minutes,
        save,
        desc="llm safety value",
        progress=progress,
    )
    with loop:
        while loop.running():
            it = loop.it
            eps = step_schedule(cfg.eps_start, cfg.eps_decay, cfg.eps_period, cfg.eps_end, it)
            buffer.extend(cars.step(eps))
            if len(buffer) < max(cfg.learning_starts, 1):
                continue
            loss = td_loss(llm_q, buffer.sample(cfg.batch_size, rng), target, cfg.gamma)
            lr = step_schedule(cfg.lr, cfg.lr_decay, cfg.lr_period, cfg.lr_end, it)
            gradient_step(opt, loss, lr)
            soft_update(target.values(), online.values(), cfg.tau)
            loop.count(loss.item())
            if loop.it % cfg.log_every == 0 or loop.it == cfg.iterations:
                status.update(
                    iteration=loop.it, minutes=loop.minutes(), loss=loop.mean_loss(), epsilon=eps
                )
                loop.show(loss=f"{status['loss']:.3e}")
            if exact_value is not None and loop.it % cfg.eval_every == 0:
                status["agreement"] = agreement()
                history.append(dict(status))
                if callback is not None:
                    callback(dict(status))
            loop.save_if_due()
    status.update(iteration=loop.it, minutes=loop.minutes())
    if (mean := loop.mean_loss()) is not None:
        status["loss"] = mean
    status.update(agreement=agreement(), interrupted=loop.interrupted)
    save()
    return LLMQTrainResult(
        out,
        loop.it,
        status["minutes"],
        status["loss"],
        status["agreement"],
        loop.interrupted,
        llm_q,
    )
