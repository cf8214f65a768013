"""The metrics of :class:`~governor.safety_values.llm_q.value.LLMQ` against the exact value.

They are those of the other learned values (:mod:`~governor.safety_values.learned`): ``agreement``
(sign of max_a Q against the exact V), ``value_f1``, and per (state, action) ``tp_rate``,
``tn_rate``, ``fn_rate`` against the exact Q, safe being the positive class
(:class:`~governor.safety_values.metrics.Confusion`); a rate of an empty class is 0.

Any LLM value is measured the same way (:class:`TextValue`: the LoRA value
:class:`~governor.safety_values.llm_q.value.LLMQ` and the frozen-head value
:class:`~governor.safety_values.frozen_q.head.FrozenQ`).

Imports the metrics and the task protocol; no world: the exact
Q of a task comes from its :meth:`~governor.safety_values.llm_q.task.LLMTask.exact_q_from_value`.
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np

from governor.errors import ConfigError, expected
from governor.safety_values.llm_q.task import LLMTask, Value
from governor.safety_values.metrics import Confusion


class TextValue(Protocol):
    """What :func:`evaluate_llm_q` reads of a value: its task, info, observation model and Q."""

    obs: str

    @property
    def task(self) -> LLMTask: ...
    @property
    def info(self) -> dict[str, Any]: ...

    def q_states(self, states: np.ndarray, batch: int = 16) -> np.ndarray: ...


def sign_agreement(q: np.ndarray, exact_v: np.ndarray) -> float:
    """How often max_a Q > 0 (``q`` (N, 3)) matches V > 0 (``exact_v`` (N,))."""
    return float(((np.asarray(q).max(axis=1) > 0.0) == (np.asarray(exact_v) > 0.0)).mean())


def monitor_metrics(q: np.ndarray, exact_v: np.ndarray, exact_q: np.ndarray) -> dict[str, float]:
    """``agreement``, ``value_f1``, ``tp_rate``, ``tn_rate``, ``fn_rate`` from arrays.

    ``q`` (N, 3) is the learned Q, ``exact_v`` (N,) and ``exact_q`` (N, 3) the truth.
    """
    q, exact_v, exact_q = np.asarray(q), np.asarray(exact_v), np.asarray(exact_q)
    if exact_v.shape != q.shape[:1] or exact_q.shape != q.shape:
        shapes = (q.shape, exact_v.shape, exact_q.shape)
        raise ConfigError(f"metrics: {expected('q (N, 3), exact_v (N,), exact_q (N, 3)', shapes)}")
    states = Confusion.of((q.max(axis=1) > 0.0).tolist(), (exact_v > 0.0).tolist())
    pairs = Confusion.of((q > 0.0).ravel().tolist(), (exact_q > 0.0).ravel().tolist())
    return {
        "agreement": sign_agreement(q, exact_v),
        "value_f1": states.f1 or 0.0,
        "tp_rate": pairs.tp_rate or 0.0,
        "tn_rate": pairs.tn_rate or 0.0,
        "fn_rate": pairs.fn_rate or 0.0,
    }


def evaluate_llm_q(
    llm_q: TextValue,
    exact_value: Value,
    states: np.ndarray,
    *,
    exact_q: Value | None = None,
    batch: int = 16,
) -> dict[str, Any]:
    """The learned values' metrics dict of ``llm_q`` against ``exact_value`` on ``states``.

    The per-action truth is ``exact_q(states)`` when given (e.g. ``GridValue.q_batch``), else
    the task's ``exact_q_from_value``. A letter outside the action set counts as judged unsafe.
    """
    task = llm_q.task
    states = np.asarray(states, dtype=np.float64).reshape(-1, task.state_dim)
    truth_q = (
        exact_q(states) if exact_q is not None else task.exact_q_from_value(exact_value, states)
    )
    metrics = monitor_metrics(llm_q.q_states(states, batch), exact_value(states), truth_q)
    minutes = float(llm_q.info.get("minutes", 0.0))
    return {"env": task.name, "obs": llm_q.obs, **metrics, "train_minutes": minutes}
