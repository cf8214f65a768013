"""Learned safety values: the checkpoint format, Q as a filter's ``q_values``, and their metrics.

A checkpoint is a directory holding ``checkpoint.pt`` (``torch.save`` of plain data: format,
env, obs, the task's parameters, the observation model's settings, the network's weights and the
training info) and ``meta.json`` (the same without the weights, for people). Both are written
atomically, so an interrupted write leaves the previous checkpoint intact. A checkpoint of one
env, observation model or parameters is refused where another is expected; loading one needs its
env's task registered (:mod:`~governor.safety_values.tasks`: import the world's task module).

Metrics against the exact value (driving: the grid value; commerce: the dynamic programme), on
live held-out states drawn from a seed stream training never uses (driving: uniform over the road
with x < goal_x, any heading, l(s) >= 0; commerce: random carts with 1..actions actions left):

- ``agreement``: how often max_a Q(z, a) > 0 matches V_exact(s) > 0 (the sign is the monitor).
- ``value_f1``: F1 of the safe class of the same state-level decision.
- ``tp_rate``, ``tn_rate``, ``fn_rate``: the paper's monitor rates per (state, action) pair, every
  action at every held-out state, with the exact Q(s, a) > 0 (the best recovery policy after
  allowing a) as the truth and safe as the positive class: tp_rate = P(Q > 0 | safe),
  tn_rate = P(Q <= 0 | unsafe), fn_rate = P(Q <= 0 | safe) (conservativeness, 1 - tp_rate).
"""

from __future__ import annotations

import dataclasses
import statistics
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from governor.core import Trajectory
from governor.errors import ConfigError, expected
from governor.safety_values.checkpoint_io import atomic_torch_save, atomic_write_json, plain
from governor.safety_values.encoders import ObservationModel
from governor.safety_values.filter import SafetyFilter, ValueFallback
from governor.safety_values.tasks import (
    ExactValue,
    TaskParams,
    make_task,
    registered_tasks,
    task_of,
)

CHECKPOINT, META, FORMAT = "checkpoint.pt", "meta.json", 1
EVAL_SEED = 20_251_007
METRICS = ("env", "obs", "agreement", "value_f1", "tp_rate", "tn_rate", "fn_rate", "train_minutes")


def held_out_states(
    params: TaskParams, n: int, seed: int = EVAL_SEED, stream: int = 0
) -> np.ndarray:
    """``n`` live states from seed stream (seed, stream); training draws from other streams."""
    return task_of(params).sample_live_states(n, np.random.default_rng([seed, stream, 7]))


def q_of_states(model: ObservationModel, net: nn.Module, states: np.ndarray) -> np.ndarray:
    """Q (N, n_actions) of states through their observations, in chunks, without gradients."""
    out = [np.zeros((0, model.task.n_actions), dtype=np.float32)]
    with torch.inference_mode():
        for i in range(0, len(states), 1024):
            out.append(net(*model.from_states(states[i : i + 1024])).numpy())
    return np.concatenate(out)


def sign_agreement(
    model: ObservationModel, net: nn.Module, states: np.ndarray, safe: np.ndarray
) -> float:
    """How often max_a Q > 0 matches ``safe`` on ``states``."""
    return float(((q_of_states(model, net, states).max(axis=1) > 0.0) == safe).mean())


def save_checkpoint(
    directory: str | Path, model: ObservationModel, net: nn.Module, info: Mapping[str, Any]
) -> Path:
    """Write the checkpoint directory (atomically); returns the checkpoint file."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    meta = {
        "format": FORMAT,
        "env": model.task.name,
        "obs": model.kind,
        "params": plain(dataclasses.asdict(model.params)),
        "settings": model.settings,
        "info": plain(dict(info)),
    }
    path = directory / CHECKPOINT
    atomic_torch_save({**meta, "state_dict": dict(net.state_dict())}, path)
    atomic_write_json(directory / META, meta)
    return path


def load_checkpoint(directory: str | Path) -> dict[str, Any]:
    """The checkpoint's contents; a missing or unreadable checkpoint is a ConfigError."""
    path = Path(directory) / CHECKPOINT
    if not path.is_file():
        raise ConfigError(
            f"checkpoint: expected {path} (train one with `governor train safety-value`), "
            "found no such file"
        )
    try:
        data = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # torch raises many kinds for a damaged file
        raise ConfigError(f"checkpoint {path} cannot be read: {exc}") from exc
    keys = {"format", "env", "obs", "params", "settings", "state_dict", "info"}
    if not isinstance(data, dict) or not keys <= set(data) or data["format"] != FORMAT:
        found = data.get("format") if isinstance(data, dict) else type(data).__name__
        raise ConfigError(f"checkpoint {path}: {expected(f'format {FORMAT}', found)}")
    return data


class LearnedQ:
    """Q(z, a) of a trained checkpoint: ``learned(observation) -> np.ndarray(n_actions)``.

    The state model reads ``observation["state"]``, the text model ``observation["text"]`` (or a
    string). The last text and its Q are remembered, so a filter and its fallback asking about
    the same observation cost one forward pass.
    """

    def __init__(self, model: ObservationModel, net: nn.Module, info: Mapping[str, Any]) -> None:
        self.model, self.net, self.info = model, net.eval(), dict(info)
        self._last: tuple[Any, np.ndarray] | None = None

    @property
    def obs(self) -> str:
        return self.model.kind

    @property
    def env(self) -> str:
        return self.model.task.name

    @property
    def params(self) -> TaskParams:
        return self.model.params

    @classmethod
    def load(
        cls,
        directory: str | Path,
        *,
        env: str | None = None,
        obs: str | None = None,
        params: TaskParams | None = None,
    ) -> LearnedQ:
        """Load a checkpoint, refusing one trained for another env, observation model or params."""
        data = load_checkpoint(directory)
        for what, wanted in (("env", env), ("obs", obs)):
            if wanted is not None and data[what] != wanted:
                raise ConfigError(
                    f"checkpoint {directory} was trained for {what} {data[what]!r}, "
                    f"expected {what} {wanted!r}"
                )
        if data["env"] not in registered_tasks():
            wanted = "env " + (" or ".join(registered_tasks()) or "of a registered task")
            raise ConfigError(f"checkpoint {directory}: {expected(wanted, data['env'])}")
        trained = make_task(data["env"], data["params"]).params
        if params is not None and (
            type(params) is not type(trained) or params.key() != trained.key()
        ):
            raise ConfigError(
                f"checkpoint {directory} was trained for other {data['env']} parameters "
                f"({trained.key()}), expected {type(params).__name__} {params.key()}"
            )
        model = ObservationModel(data["obs"], trained, data["settings"])
        net = model.network()
        try:
            net.load_state_dict(data["state_dict"])
        except (RuntimeError, KeyError) as exc:
            raise ConfigError(
                f"checkpoint {directory}: weights do not fit the model: {exc}"
            ) from exc
        return cls(model, net, data["info"])

    def __call__(self, observation: Any) -> np.ndarray:
        key = observation.get("text") if isinstance(observation, Mapping) else observation
        key = key if self.obs == "text" and isinstance(key, str) else None
        if key is not None and self._last is not None and self._last[0] == key:
            return self._last[1].copy()
        with torch.inference_mode():
            q = self.net(*self.model.from_observation(observation))[0].numpy().astype(np.float64)
        if key is not None:
            self._last = (key, q)
        return q.copy()

    def q_states(self, states: np.ndarray) -> np.ndarray:
        """Q (N, n_actions) of states (through their observations), batched."""
        return q_of_states(self.model, self.net, np.asarray(states, dtype=np.float64))


def learned_filter(
    directory: str | Path,
    margin: float,
    params: TaskParams | None = None,
    *,
    env: str = "driving",
) -> tuple[SafetyFilter, ValueFallback]:
    """The filter of an ``env`` checkpoint: admit a iff Q(z, a) > margin, else argmax_a Q."""
    q = LearnedQ.load(directory, env=env, params=params)
    return q.model.task.safety_filter(q, margin, f"learned_{q.obs}"), ValueFallback(q)


def evaluate(
    learned: LearnedQ, exact: ExactValue, n_states: int = 20_000, seed: int = EVAL_SEED
) -> dict[str, Any]:
    """The metrics of the module docstring on ``n_states`` held-out states (a JSON-ready dict).

    ``exact`` is the task's exact value (driving: a GridValue; commerce: a CommerceValue).
    """
    states = held_out_states(learned.params, n_states, seed)
    q = learned.q_states(states)
    exact_q = exact.q_batch(states)
    safe, predicted = exact.values(states) > 0.0, q.max(axis=1) > 0.0
    tp = int((predicted & safe).sum())
    fp, fn = int((predicted & ~safe).sum()), int((~predicted & safe).sum())
    pair_safe, pair_pred = exact_q > 0.0, q > 0.0
    n_safe, n_unsafe = max(int(pair_safe.sum()), 1), max(int((~pair_safe).sum()), 1)
    return {
        "env": learned.env,
        "obs": learned.obs,
        "agreement": float((predicted == safe).mean()),
        "value_f1": 2 * tp / (2 * tp + fp + fn) if tp else 0.0,
        "tp_rate": float((pair_pred & pair_safe).sum() / n_safe),
        "tn_rate": float((~pair_pred & ~pair_safe).sum() / n_unsafe),
        "fn_rate": float((~pair_pred & pair_safe).sum() / n_safe),
        "train_minutes": float(learned.info.get("minutes", 0.0)),
    }


def decision_latency_us(
    learned: LearnedQ, n: int = 1000, seed: int = 0, margin: float = 0.0
) -> float:
    """Median microseconds of one filter decision (batch of one, inference mode, this thread)."""
    task = learned.model.task
    states = held_out_states(learned.params, n, seed, stream=3)
    monitor = task.safety_filter(learned, margin, "latency")
    times = []
    for i, s in enumerate(states):
        traj = Trajectory({"state": s.astype(np.float32), "text": task.describe(s)})
        begin = time.perf_counter()
        monitor.check(traj, i % task.n_actions)
        times.append(time.perf_counter() - begin)
    return statistics.median(times) * 1e6


def calibrated_margin(
    q_states: Callable[[np.ndarray], np.ndarray],
    exact_q: Callable[[np.ndarray], np.ndarray],
    states: np.ndarray,
    false_safe: float = 0.005,
    floor: float = 0.0,
) -> float:
    """The smallest filter margin at which at most ``false_safe`` of the admitted (state, action)
    pairs of held-out ``states`` are doomed by the exact value (``exact_q(s)[a] <= 0``).

    A learned Q errs mostly near its zero level set, so a filter reading its sign admits some
    doomed actions; a larger margin trades interventions for safety. The exact value plays the
    simulator's part here, as it does in training. Never less than ``floor``.
    """
    q = np.asarray(q_states(states), dtype=float).ravel()
    doomed = (np.asarray(exact_q(states)) <= 0.0).ravel()
    order = np.argsort(-q)
    rate = np.cumsum(doomed[order]) / np.arange(1, len(q) + 1)
    ok = np.flatnonzero(rate <= false_safe)  # admitting the top k + 1 pairs keeps the rate
    if not len(ok):
        return float(max(floor, q.max()))
    k = int(ok.max())
    cut = float(q[order[k + 1]]) if k + 1 < len(q) else float(q.min()) - 1e-9
    return float(max(floor, cut))
