"""Stages under a deadline: overrunning threads are abandoned, counted and capped."""

from __future__ import annotations

import threading
import time

import pytest

from governor.deadline import MAX_ABANDONED, abandoned_stages, call_with_deadline
from governor.errors import GuardTimeout


def test_a_fast_stage_returns_and_a_raising_one_raises() -> None:
    assert call_with_deadline(lambda: 3, 1.0, "fast") == 3
    with pytest.raises(KeyError):
        call_with_deadline(lambda: {}["x"], 1.0, "raising")


def test_overrunning_stages_are_capped_and_counted() -> None:
    release = threading.Event()
    try:
        for _ in range(MAX_ABANDONED):
            with pytest.raises(GuardTimeout, match="abandoned"):
                call_with_deadline(release.wait, 0.01, "slow")
        assert abandoned_stages() == MAX_ABANDONED
        start = time.perf_counter()
        with pytest.raises(GuardTimeout, match="not started: 8 earlier stages"):
            call_with_deadline(lambda: 1, 5.0, "next")
        assert time.perf_counter() - start < 0.5
    finally:
        release.set()
    deadline = time.monotonic() + 5
    while abandoned_stages() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert abandoned_stages() == 0
    assert call_with_deadline(lambda: 1, 1.0, "after") == 1
