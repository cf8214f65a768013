"""The driving table recomputed without the runtime loop: the environment stepped by hand, the
filter's switching rule written out, and the rows of ``run_pair`` compared with the result.

``governor bench driving`` builds its rows through the observer, the arbiter, the fallback and
the episode runner; here the same seeded episodes are played by a plain loop over
:class:`DrivingEnv` (the base controller's action runs iff the grid Q of it exceeds the margin,
otherwise the action of highest Q), so a fault anywhere in that machinery shows as a different
row.
"""

from __future__ import annotations

import numpy as np
import pytest

from governor.worlds.driving import bench as driving
from governor.worlds.driving.controllers import NominalController
from governor.worlds.driving.env import DrivingEnv, DrivingParams
from governor.worlds.driving.grid_value import GridSpec, GridValue, load_or_compute

EPISODES = 12


@pytest.fixture(scope="module")
def grid(tmp_path_factory: pytest.TempPathFactory) -> GridValue:
    cache = tmp_path_factory.mktemp("cache")
    gv, _, _ = load_or_compute(
        DrivingParams(), GridSpec(nx=51, ny=41, ntheta=32), cache_dir=cache, progress=False
    )
    return gv


def by_hand(
    grid: GridValue, start: tuple[float, float, float], filtered: bool
) -> tuple[str, int, int]:
    """One episode played by a plain loop: (outcome, steps, interventions)."""
    env, controller = DrivingEnv(grid.params), NominalController(grid.params)
    env.reset(options={"state": start})
    steps = interventions = 0
    while True:
        state = env.state
        action = controller.action(state)
        if filtered:
            q = grid.q(state)
            if not q[action] > grid.resolution:
                action, interventions = int(np.argmax(q)), interventions + 1
        _, _, terminated, truncated, info = env.step(action)
        steps += 1
        if terminated or truncated:
            outcome = "failure" if info["failed"] else "success" if info["success"] else "truncated"
            return outcome, steps, interventions


@pytest.mark.parametrize("guard", ["none", "exact_filter"])
def test_the_rows_match_episodes_played_by_hand(grid: GridValue, guard: str) -> None:
    starts = driving.start_states(grid, EPISODES, seed=0, margin=grid.resolution)
    played = [by_hand(grid, s, filtered=guard == "exact_filter") for s in starts]
    row = driving.run_pair(NominalController(grid.params), guard, grid, grid.resolution, starts)
    outcomes = [o for o, _, _ in played]
    assert row.episodes == EPISODES
    assert row.success_rate == outcomes.count("success") / EPISODES
    assert row.failure_rate == outcomes.count("failure") / EPISODES
    assert row.intervention_rate == pytest.approx(
        sum(i for _, _, i in played) / sum(n for _, n, _ in played)
    )


def test_by_hand_the_filter_prevents_the_failures_the_controller_makes(grid: GridValue) -> None:
    """The table's claim on the same episodes: the bare controller fails on some, the filtered
    one on none, and the filter intervenes only where it must."""
    starts = driving.start_states(grid, EPISODES, seed=0, margin=grid.resolution)
    bare = [by_hand(grid, s, filtered=False)[0] for s in starts]
    guarded = [by_hand(grid, s, filtered=True) for s in starts]
    assert "failure" in bare
    assert all(o != "failure" for o, _, _ in guarded)
    assert sum(i for _, _, i in guarded) < sum(n for _, n, _ in guarded) / 4
