"""Reach-avoid double DQN for a safety value Q(z, a) (ReGuard, appendix A: equation 5).

Target for a transition (z, a, s', z'), with a* = argmax_a' Q_online(z', a') (double Q):

    y = l(s')                                                   if s' ends the episode
    y = (1 - gamma) l(s') + gamma min(l(s'), Q_target(z', a*))  otherwise

Driving: an episode ends at failure (l(s') < 0) and at the goal (x' >= goal_x): both are terminal,
so their target is the margin itself (at the goal no future can fail). Running out of the horizon
is not an end, and bootstraps. Commerce: an episode ends at checkout, whose margin is
budget - total + $0.005; a removal that leaves actions carries the margin of an empty cart and
bootstraps at gamma = 1 (the convention and why: :mod:`governor.worlds.commerce.env`). The margin is never normalised: the sign of max_a Q is the monitor. With
gamma < 1 the sign of the discounted value can call a doomed state safe when its failure lies many
steps ahead; on the exact grid, the sign of the discounted value agrees with the undiscounted one on
99.2% of live road states at gamma = 0.99 and 99.9% at 0.999, so gamma may be annealed toward
``gamma_end`` (each ``gamma_period`` halves 1 - gamma).

One iteration steps all envs once (epsilon-greedy on Q_online), stores their transitions, takes one
AdamW step on a batch from the replay buffer (mean squared error to y), and soft-updates the target
network. Epsilon and the learning rate follow the step schedules of
:mod:`~governor.safety_values.ddqn_config`, as in the paper's Tables 6 and 9. What differs between
tasks (envs, states, exact value, observations) comes from :mod:`~governor.safety_values.tasks`.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch

from governor.safety_values.ddqn_config import DDQNConfig, gamma_at, step_schedule
from governor.safety_values.encoders import ObservationModel
from governor.safety_values.learned import held_out_states, save_checkpoint, sign_agreement
from governor.safety_values.replay import ReplayBuffer
from governor.safety_values.tasks import ExactValue, TaskParams, make_task
from governor.safety_values.training import TrainingLoop, gradient_step, soft_update


def safety_target(
    levels: torch.Tensor,
    done: torch.Tensor,
    q_next_online: torch.Tensor,
    q_next_target: torch.Tensor,
    gamma: float,
) -> torch.Tensor:
    """The double-Q discounted safety Bellman target of a batch (see the module docstring)."""
    best = q_next_online.argmax(dim=1, keepdim=True)
    value = q_next_target.gather(1, best).squeeze(1)
    bootstrap = (1.0 - gamma) * levels + gamma * torch.minimum(levels, value)
    return torch.where(done, levels, bootstrap)


@dataclasses.dataclass(frozen=True)
class TrainResult:
    """Where the checkpoint is and how training went."""

    out: Path
    iterations: int
    minutes: float
    agreement: float
    interrupted: bool


Callback = Callable[[dict[str, Any]], None]


def train(
    cfg: DDQNConfig,
    out: str | Path,
    *,
    grid: ExactValue | None = None,
    params: TaskParams | None = None,
    callback: Callback | None = None,
    progress: bool = True,
) -> TrainResult:
    """Train until ``cfg.minutes`` or ``cfg.iterations``; checkpoints go to ``out``.

    ``grid`` is the exact value of the agreement check (driving: a GridValue; computed or loaded
    from the cache when None); ``params`` the task's parameters (default: the env's defaults).
    ``callback`` gets a status dict at every agreement check. A KeyboardInterrupt (also one raised
    by the callback) ends training cleanly: the current network is checkpointed and returned.
    """
    out = Path(out)
    torch.manual_seed(cfg.seed)
    rng = np.random.default_rng(cfg.seed)
    task = make_task(cfg.env, params)
    if grid is None:
        grid = task.exact_value((cfg.grid_nx, cfg.grid_ny, cfg.grid_ntheta), progress)
    model = ObservationModel(cfg.obs, task.params, cfg.model_settings())
    online = model.network()
    target = copy.deepcopy(online).requires_grad_(False)
    opt = torch.optim.AdamW(
        online.parameters(),
        lr=cfg.lr,
        eps=cfg.adam_eps,
        weight_decay=cfg.weight_decay,
        fused=True,
    )
    envs = task.vector_envs(cfg.n_envs, rng)
    buffer = ReplayBuffer(cfg.buffer_size, task.state_dim)
    check_states = held_out_states(task.params, cfg.eval_states, seed=cfg.seed, stream=1)
    check_safe = grid.values(check_states) > 0.0
    history: list[dict[str, Any]] = []
    status: dict[str, Any] = {"iteration": 0, "minutes": 0.0, "loss": None}
    status["agreement"] = sign_agreement(model, online, check_states, check_safe)
    history.append(dict(status))

    def save() -> None:
        info = {"config": dataclasses.asdict(cfg), "history": history, **status}
        save_checkpoint(out, model, online, info)

    what = f"safety value ({cfg.env}, {cfg.obs})"
    loop = TrainingLoop(
        cfg.iterations, cfg.minutes, cfg.checkpoint_minutes, save, desc=what, progress=progress
    )
    with loop:
        while loop.running():
            it = loop.it
            eps = step_schedule(cfg.eps_start, cfg.eps_decay, cfg.eps_period, cfg.eps_end, it)
            with torch.inference_mode():
                greedy = online(*model.from_states(envs.states)).argmax(dim=1).numpy()
            explore = rng.random(len(greedy)) < eps
            random = rng.integers(0, task.n_actions, len(greedy))
            buffer.add(envs.step(np.where(explore, random, greedy)))
            if len(buffer) < max(cfg.learning_starts, 1):
                continue
            batch = buffer.sample(cfg.batch, rng)
            levels = torch.from_numpy(batch.levels.astype(np.float32))
            with torch.no_grad():
                nxt = model.from_states(batch.next_states)
                y = safety_target(
                    levels,
                    torch.from_numpy(batch.done),
                    online(*nxt),
                    target(*nxt),
                    gamma_at(cfg, it),
                )
            q = online(*model.from_states(batch.states))
            q = q.gather(1, torch.from_numpy(batch.actions)[:, None]).squeeze(1)
            loss = torch.nn.functional.mse_loss(q, y)
            lr = step_schedule(cfg.lr, cfg.lr_decay, cfg.lr_period, cfg.lr_end, it)
            gradient_step(opt, loss, lr)
            soft_update(target.parameters(), online.parameters(), cfg.tau)
            loop.count(loss.item())
            if loop.it % 50 == 0:
                loop.show()
            if loop.it % cfg.eval_every == 0 or loop.it == cfg.iterations:
                status = {
                    "iteration": loop.it,
                    "minutes": loop.minutes(),
                    "loss": loop.mean_loss(),
                    "agreement": sign_agreement(model, online, check_states, check_safe),
                    "epsilon": eps,
                }
                history.append(status)
                loop.show(loss=f"{status['loss']:.2e}", agree=f"{status['agreement']:.3f}")
                if callback is not None:
                    callback(dict(status))
                loop.save_if_due()
    status.update(
        iteration=loop.it,
        minutes=loop.minutes(),
        agreement=sign_agreement(model, online, check_states, check_safe),
        interrupted=loop.interrupted,
    )
    save()
    return TrainResult(out, loop.it, status["minutes"], status["agreement"], loop.interrupted)
