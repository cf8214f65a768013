"""The fuzz and fault suite: every reader and parser of governor, the HTTP backend against a
server that answers garbage, and the runtime loop against misbehaving plug-ins.

The property is the same everywhere: only errors of governor's own tree come out, in bounded
time, and no unchecked action is ever executed. ``GOVERNOR_FUZZ_SCALE`` multiplies the number of
inputs (1 by default: about 6,000 in under a minute here; 20 gives more than 100,000). The
terminal summary (:mod:`fuzzing`, a plugin) says how many inputs were tried and how long it took.
"""

from __future__ import annotations

import time

import pytest
from fuzzing import SECONDS


@pytest.fixture(autouse=True)
def _timed() -> object:
    start = time.perf_counter()
    yield
    SECONDS[0] += time.perf_counter() - start
