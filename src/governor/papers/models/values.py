"""The two LLM safety values of `governor bench models`: trained and measured at a stated budget.

``reguard-llm-value`` trains the LoRA value (:func:`~governor.safety_values.llm_q.train.
train_llm_q`, the paper's Table 5 but for the CPU budget: one car, batch 2, 4 token transitions
before the first step) for ``lora_minutes``; ``reguard-frozen-value`` reads ``head_transitions``
random env steps once through the frozen model and fits a Q head on the hidden states
(:func:`~governor.safety_values.frozen_q.train_head.train_frozen_q`, a fresh cache, so its time
includes every forward pass). Both are then measured on the same ``value_eval_states`` held-out
states against the exact grid value (agreement, value F1, per-action TP / TN / FN rates).

Each runs in a child process (spawned: a fresh interpreter) so its peak RSS is its own, not the
bench's; the child's metered LLM calls are recorded in the parent, so the row counts them.
Imports the driving world (the task and its grid value) and the runtime's safety values.
"""

from __future__ import annotations

import multiprocessing
import resource
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from governor.backends.base import Backend
from governor.errors import ConfigError
from governor.papers.models.paths import Budget, PathResult
from governor.usage import Usage, metered, record_llm_call

LORA_CPU: dict[str, Any] = {
    "n_cars": 1,
    "batch_size": 2,
    "learning_starts": 4,
    "lr": 1e-4,
    "eps_start": 1.0,
}
"""The LoRA settings that differ from Table 5 (learning rate raised for a few steps). The model
stays float32: a LoRA step in bfloat16 took 1.5x as long on these cores (its backward pass)."""
HEAD_DTYPE = "float32"
"""The frozen model's dtype for the head's features. bfloat16 (hidden states at cosine 0.9999 to
float32's) took 0.6x the float32 time on one machine, but 6.5x on a CPU without bfloat16
instructions (AMD EPYC, torch 2.13, one thread: 26 s against 4 s of CPU for 4 prompts of 300
tokens), where this bench runs by default."""


def model_folder_of(backend: Backend) -> Path | None:
    """The local folder of ``backend``'s weights (an in-process model), else None."""
    path = getattr(backend, "path", None)
    return Path(path) if path is not None else None


def lora_value_path(backend: Backend, b: Budget) -> PathResult:
    """Train the LoRA value for ``b.lora_minutes`` and measure it (module doc)."""
    return _in_child("lora", backend, b)


def frozen_value_path(backend: Backend, b: Budget) -> PathResult:
    """Fit the frozen-state head on ``b.head_transitions`` steps and measure it (module doc)."""
    return _in_child("frozen", backend, b)


def _in_child(kind: str, backend: Backend, b: Budget) -> PathResult:
    folder = model_folder_of(backend)
    if folder is None:
        raise ConfigError(f"{kind} value: expected a model in a local folder, found {backend.name}")
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=1, mp_context=context) as pool:
        result, usage = pool.submit(value_row, kind, str(folder), b).result()
    record_llm_call(Usage(**usage))
    return result


def value_row(kind: str, folder: str, b: Budget) -> tuple[PathResult, dict[str, Any]]:
    """In the child: one thread, train, evaluate; the row and the metered usage."""
    import dataclasses

    import torch

    torch.set_num_threads(1)
    with metered() as meter:
        result = _lora(Path(folder), b) if kind == "lora" else _frozen(Path(folder), b)
    measures = {**result.measures, "peak_rss_mb": _peak_rss_mb()}
    return dataclasses.replace(result, measures=measures), dataclasses.asdict(meter.total)


def _peak_rss_mb() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def _truth() -> tuple[Any, Any]:
    from governor.worlds.driving.grid_value import load_or_compute
    from governor.worlds.driving.llm_task import DrivingLLMTask

    task = DrivingLLMTask()
    return task, load_or_compute(task.params, progress=False)[0]


def _measure(q: Any, grid: Any, n: int) -> tuple[dict[str, Any], float]:
    from governor.safety_values.learned import held_out_states
    from governor.safety_values.llm_q.evaluate import evaluate_llm_q

    start = time.perf_counter()
    states = held_out_states(grid.params, n)
    metrics = evaluate_llm_q(q, grid.values, states, exact_q=grid.q_batch)
    return metrics, time.perf_counter() - start


def _lora(folder: Path, b: Budget) -> PathResult:
    from governor.safety_values.llm_q.train import LLMQTrainConfig, train_llm_q

    task, grid = _truth()
    config = LLMQTrainConfig(eval_states=1, eval_every=10**9, log_every=1, **LORA_CPU)
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as out:
        r = train_llm_q(
            folder, out, task=task, minutes=b.lora_minutes, iterations=b.lora_iterations,
            config=config, progress=False,
        )  # fmt: skip
        train_s = time.perf_counter() - start
        metrics, eval_s = _measure(r.llm_q, grid, b.value_eval_states)
    budget = {"minutes": b.lora_minutes, "iterations": b.lora_iterations,
              "eval_states": b.value_eval_states, **LORA_CPU}  # fmt: skip
    measures = {"iterations": r.iterations, "train_seconds": round(train_s, 1),
                "eval_seconds": round(eval_s, 1), "loss": r.loss, **metrics}  # fmt: skip
    return PathResult(budget, {"dtype": "as saved (float32)", "top_p": 0.9}, measures, 0)


def _frozen(folder: Path, b: Budget) -> PathResult:
    from governor.safety_values.frozen_q.head import FrozenQ, HeadSettings
    from governor.safety_values.frozen_q.train_head import FrozenQTrainConfig, train_frozen_q

    task, grid = _truth()
    config = FrozenQTrainConfig(transitions=b.head_transitions, iterations=b.head_iterations)
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        settings = HeadSettings(dtype=HEAD_DTYPE)
        q = FrozenQ(folder, task, settings=settings, cache_dir=Path(tmp) / "cache", progress=False)
        load_s = time.perf_counter() - start
        q = train_frozen_q(folder, Path(tmp) / "ck", task=task, config=config, frozen=q,
                           progress=False)  # fmt: skip
        train_s = time.perf_counter() - start
        metrics, eval_s = _measure(q, grid, b.value_eval_states)
    budget = {"transitions": b.head_transitions, "head_iterations": b.head_iterations,
              "eval_states": b.value_eval_states, "cars": config.cars}  # fmt: skip
    measures = {"load_seconds": round(load_s, 1), "train_seconds": round(train_s, 1),
                "eval_seconds": round(eval_s, 1), "forward_passes": q.info["forward_passes"],
                "loss": q.info["loss"], **metrics}  # fmt: skip
    decoding = {"features": "last hidden state at the last prompt position", "dtype": HEAD_DTYPE}
    return PathResult(budget, decoding, measures, 0)
