"""The learned one-step baseline as a guard: the classifier as a monitor, with the imitation
recovery policy or the implicit stop as its fallback (see :mod:`.myopic_learned` for the models).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from governor.core import Constraint, Fallback, Trajectory, Verdict
from governor.errors import ConfigError, expected
from governor.worlds.driving.env import LABELS, action_index
from governor.worlds.driving.filter import state_of
from governor.worlds.driving.myopic import StopFallback
from governor.worlds.driving.myopic_learned import KINDS, MyopicModel


class LearnedOneStepMonitor(Constraint):
    """Admits action a iff the classifier's p(safe | z, a) >= its threshold (0.5 by default)."""

    def __init__(self, classifier: MyopicModel, name: str = "myopic_learned") -> None:
        if classifier.kind != KINDS[0]:
            raise ConfigError(f"monitor: {expected('a myopic_classifier', classifier.kind)}")
        self.classifier, self.name = classifier, name
        self.threshold = classifier.cfg.threshold

    def check(self, traj: Trajectory, action: Any) -> Verdict:
        index = action_index(action)
        if index is None:
            return Verdict.failed(self.name, f"expected an action 0, 1 or 2, found {action!r}")
        p = float(self.classifier.p_safe(state_of(traj.observation)[None, :], np.array([index]))[0])
        what, level = LABELS[index].lower(), p - self.threshold
        if p >= self.threshold:
            return Verdict.allow(self.name, margin=level, descriptor=f"{what}: p(safe) {p:.3f}")
        text = f"{what} fails next step by the classifier: p(safe) {p:.3f} < {self.threshold:g}"
        return Verdict.reject(self.name, -level, text, margin=level)


class ImitationFallback(Fallback):
    """The recovery policy's action at the observation's state."""

    def __init__(self, recovery: MyopicModel, name: str = "myopic_privileged") -> None:
        if recovery.kind != KINDS[1]:
            raise ConfigError(f"fallback: {expected('a myopic_recovery', recovery.kind)}")
        self.recovery, self.name = recovery, name

    def act(self, traj: Trajectory, verdicts: Sequence[Verdict]) -> int:
        return int(self.recovery.actions(state_of(traj.observation)[None, :])[0])


def myopic_guard(
    classifier: MyopicModel, recovery: MyopicModel | None = None
) -> tuple[LearnedOneStepMonitor, Fallback]:
    """The learned one-step monitor with the imitation recovery policy, or with stop (None)."""
    fallback = StopFallback() if recovery is None else ImitationFallback(recovery)
    return LearnedOneStepMonitor(classifier), fallback
