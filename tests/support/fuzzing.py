"""Helpers of the fuzz suite (tests/fuzz): the input budget and the count of inputs tried.

Also a plugin (registered by ``tests/conftest.py``): the terminal summary says how many inputs
were tried and how long it took; under pytest-xdist each worker hands its counts to the
controller, which sums them.
"""

from __future__ import annotations

import os
from collections import Counter

import pytest
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


def pytest_sessionfinish(session: pytest.Session) -> None:
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:  # an xdist worker: the controller prints the summary
        workeroutput["governor_fuzz"] = {"inputs": dict(INPUTS), "seconds": SECONDS[0]}


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: object, error: object) -> None:
    counts = getattr(node, "workeroutput", {}).get("governor_fuzz")
    if counts:
        INPUTS.update(counts["inputs"])
        SECONDS[0] += counts["seconds"]


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if INPUTS:
        parts = ", ".join(f"{k} {v:,}" for k, v in sorted(INPUTS.items()))
        terminalreporter.write_line(
            f"fuzz: {sum(INPUTS.values()):,} inputs in {SECONDS[0]:.0f} s (scale {SCALE}): {parts}"
        )
