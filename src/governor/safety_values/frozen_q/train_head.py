"""Training :class:`~governor.safety_values.frozen_q.head.FrozenQ`: transitions once, then the head by TD.

Two phases, because the model is the cost and the head is not:

1. :func:`collect_transitions` drives the task's envs with uniformly random letters for
   ``transitions`` steps in all and keeps (s, a, l(s'), done, s') as state texts; their hidden
   states are computed once (one forward pass per distinct prompt; a non-terminal s' is the
   next step's s, so about one pass per transition) and cached on disk.
2. The head is fitted on that fixed set by double-Q reach-avoid TD, the physical-step target of
   the DDQN values (:func:`~governor.safety_values.ddqn.safety_target`):
   y = l(s') at a failed or goal s', else (1 - gamma) l(s') + gamma min(l(s'), Q'(s', a*)), with
   a* the online argmax and Q' a soft-updated target head (AdamW, mean squared error).

Imports the frozen value, the DDQN target and the runtime's training loop; no world.
"""

from __future__ import annotations

import copy
import dataclasses
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from governor.config import check_range, option
from governor.safety_values.ddqn import safety_target
from governor.safety_values.frozen_q.head import FrozenQ, HeadSettings
from governor.safety_values.llm_q.evaluate import sign_agreement
from governor.safety_values.llm_q.task import LLMTask, Value
from governor.safety_values.training import TrainingLoop, gradient_step, soft_update


@dataclasses.dataclass(frozen=True)
class FrozenQTrainConfig:
    """The frozen-head value's budget: transitions (forward passes) and head steps."""

    transitions: int = option(400, "env steps collected (about one model forward pass each)")
    cars: int = option(4, "envs driven at once while collecting")
    iterations: int = option(3000, "gradient steps of the head")
    minutes: float = option(10.0, "wall-clock budget of the head's training")
    batch_size: int = option(64, "transitions per gradient step")
    gamma: float = option(0.99, "discount of the safety Bellman target")
    tau: float = option(0.01, "soft update rate of the target head")
    lr: float = option(1e-3, "AdamW learning rate")
    weight_decay: float = option(1e-4, "AdamW weight decay")
    seed: int = option(0, "seed of the envs, the actions and the head")

    def __post_init__(self) -> None:
        for name in ("transitions", "cars", "iterations", "batch_size"):
            check_range(name, getattr(self, name), 1, 1e9)
        check_range("minutes", self.minutes, 1e-4, 1e7)
        for name in ("gamma", "tau"):
            check_range(name, getattr(self, name), 0.0, 1.0)
        check_range("lr", self.lr, 0.0, 10.0)
        check_range("weight_decay", self.weight_decay, 0.0, 10.0)


@dataclasses.dataclass(frozen=True)
class Transitions:
    """Physical transitions as state texts: s, a, l(s'), whether s' ends the episode, s'."""

    texts: list[str]
    actions: np.ndarray
    levels: np.ndarray
    done: np.ndarray
    next_texts: list[str]


def collect_transitions(task: LLMTask, n: int, cars: int, rng: np.random.Generator) -> Transitions:
    """``n`` steps of ``cars`` envs of ``task`` under uniformly random letters."""
    envs = task.vector_envs(cars, rng)
    texts: list[str] = []
    nxt: list[str] = []
    actions, levels, done = [], [], []
    while len(texts) < n:
        acts = rng.integers(0, len(task.letters), cars)
        before = [task.describe(s) for s in envs.states]
        moved = envs.step(acts)
        take = min(cars, n - len(texts))
        texts += before[:take]
        nxt += [task.describe(s) for s in moved.next_states[:take]]
        actions.append(acts[:take])
        levels.append(np.asarray(moved.levels, dtype=np.float64)[:take])
        done.append(np.asarray(moved.done, dtype=bool)[:take])
    return Transitions(
        texts, np.concatenate(actions), np.concatenate(levels), np.concatenate(done), nxt
    )


def train_frozen_q(
    model_path: str | Path,
    out: str | Path,
    *,
    task: LLMTask,
    config: FrozenQTrainConfig | None = None,
    settings: HeadSettings | None = None,
    exact_value: Value | None = None,
    check_states: np.ndarray | None = None,
    cache_dir: str | Path | None = None,
    progress: bool = True,
    frozen: FrozenQ | None = None,
) -> FrozenQ:
    """Collect, embed and fit (module doc); save the checkpoint to ``out`` and return the value.

    With ``exact_value`` and ``check_states`` the sign agreement on them goes into the info.
    ``frozen`` reuses a loaded value (its model and cache) instead of loading the model again.
    """
    cfg = config or FrozenQTrainConfig()
    start = time.perf_counter()
    torch.manual_seed(cfg.seed)
    rng = np.random.default_rng([cfg.seed, 3])
    q = frozen or FrozenQ(
        model_path, task, settings=settings, cache_dir=cache_dir, progress=progress
    )
    data = collect_transitions(task, cfg.transitions, cfg.cars, rng)
    live = ~data.done
    passes_before = q.features.forward_passes
    h = torch.from_numpy(
        q.features([*data.texts, *[t for t, o in zip(data.next_texts, live, strict=True) if o]])
    )
    h_s, h_next = h[: len(data.texts)], torch.zeros_like(h[: len(data.texts)])
    h_next[torch.from_numpy(live)] = h[len(data.texts) :]
    a = torch.from_numpy(data.actions).long()
    levels = torch.from_numpy(data.levels).float()
    done = torch.from_numpy(data.done)
    q.head.standardise_on(h_s)
    q.head.train()
    target = copy.deepcopy(q.head)
    opt = torch.optim.AdamW(q.head.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    status: dict[str, Any] = {"iteration": 0, "loss": None}

    def save() -> None:
        info = _info(cfg, status, len(data.texts), q.features.forward_passes - passes_before)
        q.save(out, {**info, "out": str(out)})

    loop = TrainingLoop(cfg.iterations, cfg.minutes, 1e9, save, desc="q head", progress=progress)
    with loop:
        while loop.running():
            idx = torch.from_numpy(rng.integers(0, len(a), cfg.batch_size))
            with torch.no_grad():
                y = safety_target(
                    levels[idx], done[idx], q.head(h_next[idx]), target(h_next[idx]), cfg.gamma
                )
            pred = q.head(h_s[idx]).gather(1, a[idx, None]).squeeze(1)
            loss = torch.nn.functional.mse_loss(pred, y)
            gradient_step(opt, loss, cfg.lr)
            soft_update(target.parameters(), q.head.parameters(), cfg.tau)
            loop.count(loss.item())
            if loop.it % 100 == 0:
                loop.show(loss=f"{loss.item():.3e}")
    q.head.eval()
    minutes = (time.perf_counter() - start) / 60  # the forward passes and the head
    status.update(iteration=loop.it, minutes=minutes, head_minutes=loop.minutes())
    status["loss"] = loop.mean_loss()
    status["interrupted"] = loop.interrupted
    if exact_value is not None and check_states is not None:
        status["agreement"] = sign_agreement(q.q_states(check_states), exact_value(check_states))
    save()
    return q


def _info(cfg: FrozenQTrainConfig, status: dict[str, Any], n: int, passes: int) -> dict[str, Any]:
    return {"config": dataclasses.asdict(cfg), "transitions": n, "forward_passes": passes, **status}
