"""The LLM safety values on the real local model: the frozen-state head and value-guided advice.

A tiny budget (a few env steps, one head step, one batch of evaluated states, 4 advice tokens):
about a minute on one thread. What they show is that the paths run on the real weights and count
their calls, not how good the values are (see docs/local-model.md for the measured figures).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from governor.backends.local_model import LOCAL_MODEL, fetched_dir, model_dir
from governor.usage import metered

pytestmark = pytest.mark.model


@pytest.fixture(scope="module")
def folder() -> Path:
    """The fetched model's folder, or a skip saying what is missing."""
    for module in ("torch", "transformers", "peft"):
        pytest.importorskip(module, reason=f"no {module}; run: make model")
    found = fetched_dir()
    if found is None:
        pytest.skip(f"{LOCAL_MODEL} is not fetched into {model_dir()}; run: make model")
    import torch

    torch.set_num_threads(1)
    return found


def test_a_frozen_head_trains_reloads_and_is_measured_on_the_real_model(
    folder: Path, tmp_path: Path
) -> None:
    from governor.safety_values.frozen_q.head import FrozenQ
    from governor.safety_values.frozen_q.train_head import FrozenQTrainConfig, train_frozen_q
    from governor.safety_values.learned import held_out_states
    from governor.safety_values.llm_q.evaluate import evaluate_llm_q
    from governor.worlds.driving.grid_value import load_or_compute
    from governor.worlds.driving.llm_task import DrivingLLMTask

    task, cache = DrivingLLMTask(), tmp_path / "cache"
    config = FrozenQTrainConfig(transitions=4, cars=2, iterations=1)
    with metered() as meter:
        q = train_frozen_q(
            folder, tmp_path / "ck", task=task, config=config, cache_dir=cache, progress=False
        )
    assert q.info["iteration"] == 1 and q.info["transitions"] == 4
    passes = q.info["forward_passes"]
    assert passes == q.features.forward_passes >= 4  # one per distinct prompt
    assert meter.total.calls == -(-passes // q.features.batch)  # one per batched forward pass
    again = FrozenQ.load(tmp_path / "ck", task=task, cache_dir=cache, progress=False)
    grid = load_or_compute(task.params, progress=False)[0]
    states = held_out_states(task.params, again.features.batch)  # one batch of new prompts
    with metered() as meter:
        metrics = evaluate_llm_q(again, grid.values, states, exact_q=grid.q_batch)
    assert meter.total.calls == 1  # every state new to the cache, one call for the batch
    np.testing.assert_allclose(again.q_states(states), q.q_states(states), atol=1e-5)
    assert metrics["obs"] == "llm-head" and 0.0 <= metrics["agreement"] <= 1.0


def test_a_guided_advisor_speaks_through_value_guided_decoding(folder: Path) -> None:
    from governor.safety_values.llm_q.value import LLMQ
    from governor.worlds.backseat.advisors import GuidedAdvisor
    from governor.worlds.driving.env import DrivingParams
    from governor.worlds.driving.llm_task import DrivingLLMTask

    state = np.array([2.0, 1.5, 0.3])
    advisor = GuidedAdvisor(LLMQ(folder, DrivingLLMTask()), DrivingParams(), max_tokens=4)
    with metered() as meter:
        advice = advisor.advise({"state": state, "intended": 1})
    assert advice and advisor.fallbacks == 0, advisor.errors
    assert 2 <= meter.total.calls <= 2 * 4  # two forward passes (base and valued) per token
