"""The real local model as the agent under a guard: 2 driving episodes, a 2-turn chat."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from governor.backends.hf import HFBackend
from governor.conversation.chat import ChatSession
from governor.conversation.examples import human_examples
from governor.conversation.llm_policy import LLMChatPolicy
from governor.conversation.small_talk import SmallTalkConfig, small_talk_observer
from governor.overlays import load_overlays
from governor.worlds.driving import bench_run as driving
from governor.worlds.driving.controllers import LLMDrivingPolicy
from governor.worlds.driving.grid_value import GridSpec, GridValue, load_or_compute

pytestmark = pytest.mark.model


def test_two_guarded_driving_episodes(
    local_model: HFBackend, small_grid: GridValue, tmp_path: Path
) -> None:
    params = dataclasses.replace(small_grid.params, horizon=2)  # two steps an episode
    gv, _, _ = load_or_compute(
        params, GridSpec(nx=31, ny=31, ntheta=16), cache_dir=tmp_path, progress=False
    )
    policy = LLMDrivingPolicy(local_model, params)
    starts = driving.start_states(gv, 2, seed=0, margin=gv.resolution)
    row = driving.run_pair(policy, "exact_filter", gv, gv.resolution, starts)
    assert row.episodes == 2 and row.failure_rate == 0.0
    steps = round(row.mean_steps * 2)
    assert row.llm_calls == steps and row.llm_failed == 0  # one counted call a step
    assert row.invalid_replies == 0  # the answer is read from the logits over A, B, C


def test_a_two_turn_guarded_chat(local_model: HFBackend, data_dir: Path) -> None:
    policy = LLMChatPolicy(
        local_model, examples=human_examples(data_dir, 3), max_tokens=12, temperature=0.7
    )
    config = SmallTalkConfig(n_candidates=2, max_regenerations=1, time_budget_s=120.0)
    session = ChatSession(small_talk_observer(policy, load_overlays(), config=config))
    results = [
        session.respond(text)
        for text in ("Hi! How was your weekend?", "Nice. Did you do anything fun?")
    ]
    for result in results:
        assert result.reply and "\n" not in result.reply
        assert 1 <= result.llm_calls <= 2 and result.llm_failed == 0
