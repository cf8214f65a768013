"""The paper's LlamaGuard-style baseline on state features: a learned one-step safety classifier.

p(safe | z, a) reads :func:`~governor.worlds.driving.task.state_features` and a one-hot action
through a small MLP (tanh, dropout) trained with binary cross-entropy on one-step labels: y = 0 iff
s+ = step(s, a) fails (l(s+) < 0). The recipe is the paper's Table 8 without the LLM (AdamW, BCE);
the head is smaller and the learning rate larger so that it trains in seconds on a CPU. The data
are the states visited by seeded rollouts of the nominal and erratic base policies, every action
labelled at each. The monitor rejects an action when p(safe) < threshold (0.5). The next position
does not depend on the steer (only the next heading does), so the true label is the same for all
three actions: a one-step monitor rejects all or none, and only once failure is one step away.

The recovery policy is either ``StopFallback`` (LlamaGuard's implicit stop: ``myopic_stop_learned``)
or :class:`ImitationFallback`, the paper's "Myopic-Privileged" policy: here supervised imitation of
the privileged action (argmax of the exact grid Q; tied actions share the target) on the same
states, standing in for the paper's PPO fine-tuning against a judge of that action.

A checkpoint is a directory with ``myopic.pt`` (``torch.save`` of plain data) and ``meta.json``
(the same without the weights); one model per directory.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from governor.config import check_range, option
from governor.core import Trajectory
from governor.errors import ConfigError, expected
from governor.safety_values.checkpoint_io import atomic_torch_save, atomic_write_json, plain
from governor.worlds.driving.controllers import ErraticPolicy, NominalController
from governor.worlds.driving.env import DrivingParams, margin, step_states
from governor.worlds.driving.grid_value import GridValue
from governor.worlds.driving.task import state_features

KINDS = ("myopic_classifier", "myopic_recovery")
CHECKPOINT, META, FORMAT = "myopic.pt", "meta.json", 1


@dataclasses.dataclass(frozen=True)
class MyopicConfig:
    """How the rollout data set is collected and the two networks are trained."""

    episodes: int = option(400, "rollout episodes per base policy (nominal, erratic)")
    erratic_p: float = option(0.5, "probability that the erratic policy acts at random")
    seed: int = option(0, "seed of the start states, the erratic policy and the networks")
    hidden: tuple[int, ...] = option((64, 64), "hidden sizes of both MLPs (tanh)")
    dropout: float = option(0.1, "dropout after each hidden layer")
    epochs: int = option(40, "passes over the data set")
    batch_size: int = option(256, "examples per gradient step")
    lr: float = option(3e-3, "AdamW learning rate")
    threshold: float = option(0.5, "the monitor rejects an action when p(safe) < threshold")

    def __post_init__(self) -> None:
        for name, high in (("episodes", 1e6), ("epochs", 1e4), ("batch_size", 1e6)):
            check_range(name, getattr(self, name), 1, high)
        check_range("erratic_p", self.erratic_p, 0.0, 1.0)
        check_range("dropout", self.dropout, 0.0, 0.9)
        check_range("lr", self.lr, 1e-8, 1.0)
        check_range("threshold", self.threshold, 0.0, 1.0)


def rollout_states(params: DrivingParams, cfg: MyopicConfig, seed: int | None = None) -> np.ndarray:
    """States (N, 3) visited by ``cfg.episodes`` rollouts of each base policy from live starts.

    Starts are uniform over the road (x < goal_x / 2, |theta| < 1.2, l >= 0); an episode ends at
    failure, at the goal or at the horizon. The failed and goal states themselves are left out.
    """
    rng = np.random.default_rng(cfg.seed if seed is None else seed)
    nominal = NominalController(params)
    erratic = ErraticPolicy(params, p=cfg.erratic_p, seed=int(rng.integers(2**31)))
    policies = (
        lambda s: nominal.action(s),
        lambda s: erratic.propose(Trajectory({"state": s}), None, 1)[0].action,
    )
    out: list[np.ndarray] = []
    for act in policies:
        for _ in range(cfg.episodes):
            s = np.array([-1.0, -1.0, 0.0])
            while margin(params, s) < 0.0:
                s = rng.uniform([0.0, 0.0, -1.2], [params.goal_x / 2, params.road_width, 1.2])
            for _ in range(params.horizon):
                out.append(s)
                s = step_states(params, s, act(s))
                if margin(params, s) < 0.0 or s[0] >= params.goal_x:
                    break
    return np.asarray(out)


def one_step_labels(params: DrivingParams, states: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every action at every state: actions (3N,) and labels (3N,), 0 iff l(step(s, a)) < 0."""
    states = np.asarray(states, dtype=np.float64).reshape(-1, 3)
    actions = np.tile(np.arange(3), len(states))
    nxt = step_states(params, np.repeat(states, 3, axis=0), actions)
    return actions, (margin(params, nxt) >= 0.0).astype(np.float32)


def _mlp(inputs: int, hidden: Sequence[int], outputs: int, dropout: float) -> nn.Sequential:
    layers: list[nn.Module] = []
    for size in hidden:
        layers += [nn.Linear(inputs, size), nn.Tanh(), nn.Dropout(dropout)]
        inputs = size
    return nn.Sequential(*layers, nn.Linear(inputs, outputs))


class MyopicModel:
    """One trained network of either kind with its driving parameters and training info.

    ``myopic_classifier``: (features, one-hot action) -> logit of p(safe).
    ``myopic_recovery``: features -> logits of the three actions.
    """

    def __init__(
        self, kind: str, params: DrivingParams, cfg: MyopicConfig, info: dict[str, Any]
    ) -> None:
        if kind not in KINDS:
            raise ConfigError(f"myopic model kind: {expected(' or '.join(KINDS), kind)}")
        self.kind, self.params, self.cfg, self.info = kind, params, cfg, info
        width, outputs = (7, 1) if kind == KINDS[0] else (4, 3)
        self.net = _mlp(width, cfg.hidden, outputs, cfg.dropout)

    def _inputs(self, states: np.ndarray, actions: np.ndarray | None = None) -> torch.Tensor:
        features = torch.from_numpy(state_features(self.params, np.reshape(states, (-1, 3))))
        if actions is None:
            return features
        one_hot = nn.functional.one_hot(torch.as_tensor(actions, dtype=torch.long), 3)
        return torch.cat([features, one_hot.float()], dim=1)

    def p_safe(self, states: np.ndarray, actions: np.ndarray) -> np.ndarray:
        """p(safe | s, a) for states (N, 3) and actions (N,)."""
        with torch.inference_mode():
            return torch.sigmoid(self.net.eval()(self._inputs(states, actions))[:, 0]).numpy()

    def actions(self, states: np.ndarray) -> np.ndarray:
        """The recovery policy's action at each of states (N, 3)."""
        with torch.inference_mode():
            return self.net.eval()(self._inputs(states)).argmax(dim=1).numpy()

    def fit(self, inputs: torch.Tensor, targets: torch.Tensor) -> None:
        """Minibatch AdamW on BCE (classifier) or soft-target cross-entropy (recovery)."""
        cfg, f = self.cfg, nn.functional
        torch.manual_seed(cfg.seed)
        opt = torch.optim.AdamW(self.net.parameters(), lr=cfg.lr)
        gen = torch.Generator().manual_seed(cfg.seed)
        bce = self.kind == KINDS[0]
        for _ in range(cfg.epochs):
            for idx in torch.randperm(len(inputs), generator=gen).split(cfg.batch_size):
                out = self.net.train()(inputs[idx])
                loss = (
                    f.binary_cross_entropy_with_logits(out[:, 0], targets[idx])
                    if bce
                    else f.cross_entropy(out, targets[idx])
                )
                opt.zero_grad()
                loss.backward()
                opt.step()
        self.net.eval()


def privileged_targets(grid: GridValue, states: np.ndarray, tie: float = 1e-6) -> np.ndarray:
    """(N, 3) uniform distributions over the argmax set of the exact Q (within ``tie``)."""
    q = grid.q_batch(states)
    best = (q >= q.max(axis=1, keepdims=True) - tie).astype(np.float32)
    return best / best.sum(axis=1, keepdims=True)


def train(
    kind: str,
    params: DrivingParams,
    cfg: MyopicConfig | None = None,
    *,
    grid: GridValue | None = None,
    states: np.ndarray | None = None,
) -> MyopicModel:
    """Train a ``myopic_classifier`` or (with ``grid``) a ``myopic_recovery`` on ``states``
    (default: :func:`rollout_states`). ``info`` says how it went on its training data."""
    cfg, start = cfg or MyopicConfig(), time.perf_counter()
    model = MyopicModel(kind, params, cfg, {})
    states = rollout_states(params, cfg) if states is None else np.reshape(states, (-1, 3))
    if kind == KINDS[0]:
        actions, labels = one_step_labels(params, states)
        model.fit(model._inputs(np.repeat(states, 3, axis=0), actions), torch.from_numpy(labels))
        hits = (model.p_safe(np.repeat(states, 3, axis=0), actions) >= 0.5) == labels
        info = {"unsafe_fraction": float(1.0 - labels.mean()), "train_accuracy": float(hits.mean())}
    else:
        if grid is None or grid.params.key() != params.key():
            raise ConfigError("myopic_recovery: expected the exact grid value of these params")
        targets = privileged_targets(grid, states)
        model.fit(model._inputs(states), torch.from_numpy(targets))
        chosen = targets[np.arange(len(states)), model.actions(states)] > 0
        info = {"train_agreement": float(chosen.mean())}
    model.info = {"states": len(states), **info, "seconds": time.perf_counter() - start}
    return model


def save_model(directory: str | Path, model: MyopicModel) -> Path:
    """Write ``myopic.pt`` and ``meta.json`` into ``directory`` (atomically); returns the first."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    settings = {"params": dataclasses.asdict(model.params), "config": dataclasses.asdict(model.cfg)}
    meta = {"format": FORMAT, "env": "driving", "kind": model.kind}
    meta |= plain({**settings, "info": model.info})
    atomic_torch_save({**meta, "state_dict": dict(model.net.state_dict())}, directory / CHECKPOINT)
    atomic_write_json(directory / META, meta)
    return directory / CHECKPOINT


def load_model(
    directory: str | Path, kind: str, params: DrivingParams | None = None, env: str = "driving"
) -> MyopicModel:
    """Load a model saved by :func:`save_model`, refusing another env, kind or driving params."""
    path = Path(directory) / CHECKPOINT
    if not path.is_file():
        raise ConfigError(f"myopic checkpoint: expected {path}, found no such file")
    try:
        data = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # torch raises many kinds for a damaged file
        raise ConfigError(f"myopic checkpoint {path} cannot be read: {exc}") from exc
    for what, wanted in (("format", FORMAT), ("env", env), ("kind", kind)):
        found = data.get(what) if isinstance(data, dict) else type(data).__name__
        if found != wanted:
            raise ConfigError(
                f"myopic checkpoint {path} holds {what} {found!r}, expected {wanted!r}"
            )
    try:
        trained = DrivingParams(**data["params"])
        cfg = MyopicConfig(**dict(data["config"], hidden=tuple(data["config"]["hidden"])))
    except (KeyError, TypeError) as exc:
        raise ConfigError(f"myopic checkpoint {path}: damaged settings: {exc!r}") from exc
    if params is not None and params.key() != trained.key():
        raise ConfigError(
            f"myopic checkpoint {path} was trained for other driving parameters "
            f"({trained.key()}), expected {params.key()}"
        )
    model = MyopicModel(kind, trained, cfg, dict(data.get("info", {})))
    try:
        model.net.load_state_dict(data["state_dict"])
    except (RuntimeError, KeyError) as exc:
        raise ConfigError(f"myopic checkpoint {path}: weights do not fit the model: {exc}") from exc
    return model
