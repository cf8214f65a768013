"""Helpers of the fuzz suite (tests/fuzz): the input budget and the count of inputs tried."""

from __future__ import annotations

import os
from collections import Counter

from hypothesis import HealthCheck, settings

SCALE = max(1, int(os.environ.get("GOVERNOR_FUZZ_SCALE", "1")))
INPUTS: Counter[str] = Counter()
SECONDS = [0.0]  # time spent in the fuzz tests


def fuzz_settings(examples: int) -> settings:
    """``examples`` inputs times the scale; no per-input deadline (the tests bound time
    themselves), derandomised so that a failure reproduces."""
    return settings(
        max_examples=examples * SCALE,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


def counted(target: str) -> None:
    INPUTS[target] += 1
