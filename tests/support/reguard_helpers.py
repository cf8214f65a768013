"""The ReGuard driving tables on a small budget, for tests of their plumbing.

The tables train two learned baselines (the LlamaGuard-style one-step classifier and the imitation
recovery, :mod:`governor.worlds.driving.myopic_learned`) before any row runs: 400 rollouts a base
policy and 40 epochs, 15-30 s on one core. Within :func:`small_reguard_baselines` they train on
:data:`SMALL_BASELINES` instead (about 2 s): they reject about the share of actions they reject at
the bench's budget, and the tables' rows and metrics are the same kind; what they are worth is
measured by `governor bench reguard`, not by the tests.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterator

import pytest

SMALL_BASELINES = {"episodes": 200, "epochs": 10, "lr": 2e-2}


@contextlib.contextmanager
def small_reguard_baselines() -> Iterator[None]:
    """Within: the ReGuard driving tables train their baselines at :data:`SMALL_BASELINES`."""
    from governor.worlds.driving import myopic_learned

    small = functools.partial(myopic_learned.MyopicConfig, **SMALL_BASELINES)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(myopic_learned, "MyopicConfig", small)
        yield
