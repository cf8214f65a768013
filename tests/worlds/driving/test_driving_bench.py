"""The driving benchmark's pieces, on a coarse grid so they run in seconds."""

from __future__ import annotations

from pathlib import Path

import pytest

from governor.backends.scripted import ScriptedBackend
from governor.errors import BackendTimeout
from governor.trace import open_trace, read_trace
from governor.worlds.driving import bench as driving
from governor.worlds.driving.controllers import LLMDrivingPolicy
from governor.worlds.driving.env import DrivingParams
from governor.worlds.driving.grid_value import GridSpec, GridValue, load_or_compute


@pytest.fixture(scope="module")
def grid(tmp_path_factory: pytest.TempPathFactory) -> GridValue:
    cache = tmp_path_factory.mktemp("cache")
    gv, _, _ = load_or_compute(
        DrivingParams(), GridSpec(nx=51, ny=41, ntheta=32), cache_dir=cache, progress=False
    )
    return gv


def test_start_states_lie_inside_the_safe_set(grid: GridValue):
    starts = driving.start_states(grid, 20, seed=3, margin=0.05)
    assert len(starts) == 20 and len(set(starts)) == 20
    assert all(grid.value(__import__("numpy").asarray(s)) > 0.05 for s in starts)
    assert starts == driving.start_states(grid, 20, seed=3, margin=0.05)


def test_backend_failing_mid_episode_is_a_fallback_in_the_trace(grid: GridValue, tmp_path: Path):
    replies: list[str | BaseException] = [
        "B",
        "B",
        BackendTimeout("no answer within 1 s"),
        *["B"] * 80,
    ]
    policy = LLMDrivingPolicy(ScriptedBackend(replies), grid.params)
    start = driving.start_states(grid, 1, seed=0, margin=grid.resolution)
    with open_trace(tmp_path / "t.jsonl") as trace:
        row = driving.run_pair(policy, "exact_filter", grid, grid.resolution, start, trace=trace)
    assert row.episodes == 1 and row.llm_calls >= 3
    decisions, episodes = read_trace(tmp_path / "t.jsonl")
    third = decisions[2]
    assert third["kind"] == "fallback" and "no answer within 1 s" in " ".join(third["errors"])
    assert len(decisions) > 3  # the episode went on after the failure
    assert next(iter(episodes.values()))["outcome"] in {"success", "truncated", "failure"}


def test_unguarded_rows_never_intervene_and_the_filter_does(grid: GridValue):
    cfg = driving.DrivingBenchConfig(episodes=6, erratic_p=0.5)
    starts = driving.start_states(grid, 6, seed=1, margin=grid.resolution)
    policy = driving.make_policy("erratic", cfg, grid.params, None)
    bare = driving.run_pair(policy, "none", grid, grid.resolution, starts)
    guarded = driving.run_pair(policy, "exact_filter", grid, grid.resolution, starts)
    assert bare.intervention_rate == 0 and guarded.intervention_rate > 0
    assert guarded.failure_rate <= bare.failure_rate


@pytest.mark.parametrize("margin", [-5.0, -0.001])
def test_a_negative_filter_margin_is_refused(margin: float) -> None:
    from governor.errors import ConfigError

    with pytest.raises(ConfigError, match=r"margin: expected a number in \[0, 1e\+06\]"):
        driving.DrivingBenchConfig(margin=margin)
