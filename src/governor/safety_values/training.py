"""What the DDQN training loops share: the budget, the loss, checkpoints and the gradient step.

:class:`TrainingLoop` keeps the bookkeeping of a loop that runs until an iteration count or a
wall-clock budget: the mean loss since the last report, a checkpoint every few minutes, the
progress bar, and a KeyboardInterrupt (also one raised by a callback) that ends the loop cleanly
so that the caller can checkpoint what it has::

    with TrainingLoop(cfg.iterations, cfg.minutes, cfg.checkpoint_minutes, save) as loop:
        while loop.running():
            ...
            loop.count(loss.item())
    save()  # loop.interrupted says whether a KeyboardInterrupt ended it
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from types import TracebackType

import torch
from tqdm import tqdm


class TrainingLoop:
    """Iterations under a wall-clock budget, with periodic checkpoints and a progress bar."""

    def __init__(
        self,
        iterations: int,
        minutes: float,
        checkpoint_minutes: float,
        save: Callable[[], None],
        *,
        desc: str = "training",
        progress: bool = True,
    ) -> None:
        self.iterations, self.budget_s = iterations, minutes * 60
        self.save, self.save_every_s = save, checkpoint_minutes * 60
        self.it, self.interrupted = 0, False
        self._loss_sum, self._loss_n = 0.0, 0
        self.start = self._last_save = time.perf_counter()
        self.bar = tqdm(total=iterations, desc=desc, disable=not progress or None)

    def __enter__(self) -> TrainingLoop:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool:
        self.bar.close()
        self.interrupted = kind is not None and issubclass(kind, KeyboardInterrupt)
        return self.interrupted

    def running(self) -> bool:
        """Whether iterations and time are left."""
        return self.it < self.iterations and time.perf_counter() - self.start < self.budget_s

    def minutes(self) -> float:
        return (time.perf_counter() - self.start) / 60

    def count(self, loss: float) -> None:
        """One more iteration done, with its loss."""
        self.it += 1
        self._loss_sum, self._loss_n = self._loss_sum + loss, self._loss_n + 1

    def mean_loss(self) -> float | None:
        """The mean loss since the last call (None when no iteration ran since)."""
        if not self._loss_n:
            return None
        mean = self._loss_sum / self._loss_n
        self._loss_sum, self._loss_n = 0.0, 0
        return mean

    def show(self, **postfix: str) -> None:
        """Bring the progress bar to the current iteration, with ``postfix`` beside it."""
        self.bar.update(self.it - self.bar.n)
        if postfix:
            self.bar.set_postfix(postfix)

    def save_if_due(self) -> None:
        """Checkpoint when ``checkpoint_minutes`` have passed since the last one."""
        if time.perf_counter() - self._last_save >= self.save_every_s:
            self.save()
            self._last_save = time.perf_counter()


def gradient_step(opt: torch.optim.Optimizer, loss: torch.Tensor, lr: float) -> None:
    """One optimiser step on ``loss`` at learning rate ``lr``."""
    for group in opt.param_groups:
        group["lr"] = lr
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()


def soft_update(target: Iterable[torch.Tensor], online: Iterable[torch.Tensor], tau: float) -> None:
    """Move each target tensor a fraction ``tau`` toward its online twin."""
    with torch.no_grad():
        for t, o in zip(target, online, strict=True):
            t.lerp_(o, tau)
