from pathlib import Path

import pytest

from governor.envs.driving import DrivingParams
from governor.filters.grid_value import GridSpec, GridValue, load_or_compute

SMALL = GridSpec(nx=31, ny=31, ntheta=16)


@pytest.fixture(scope="session")
def small_grid(tmp_path_factory: pytest.TempPathFactory) -> GridValue:
    cache: Path = tmp_path_factory.mktemp("grid-cache")
    gv, _, _ = load_or_compute(DrivingParams(), SMALL, cache_dir=cache, progress=False)
    return gv
