"""Mode-selection policies: the base policy of the supervisor's observer proposes modes.

A selector is a :class:`~governor.core.Policy` whose actions are mode names, ranked most
preferred first; it reads the :class:`~governor.supervision.mode_rules.Snapshot` in the trajectory's
observation. The supervisor's observer asks for every mode at once, so the arbiter executes the
best-ranked admissible one. Shipped:

- :class:`ConditionSelector`: ordered ``(condition, mode)`` pairs over features; the first that
  holds ranks its mode first, then the current mode (modes are sticky), then ``default``, then
  the rest in graph order; a mode may be time-boxed with ``max_steps``;
- :class:`FixedSelector`: always the same mode (the fixed-mode ablation).

:class:`ForcedFirst` wraps a selector so that an override's or operator's mode is the only
proposal; :class:`SafeModeFallback` proposes the safe mode when nothing ranked is admissible.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from governor.core import Candidate, Fallback, Feedback, Policy, Trajectory, Verdict
from governor.errors import ConfigError, expected
from governor.overlays.rules import Condition
from governor.supervision.mode_rules import Snapshot


def _snapshot(traj: Trajectory) -> Snapshot:
    snap = traj.observation
    if not isinstance(snap, Snapshot):
        raise TypeError(f"mode selection: expected a Snapshot, found {type(snap).__name__}")
    return snap


class ModeSelector(Policy):
    """Ranks modes for a snapshot; ``modes`` is every mode it may propose."""

    name = "mode selector"

    def __init__(self, modes: Sequence[str]) -> None:
        self.modes = tuple(modes)

    def rank(self, snap: Snapshot) -> list[str]:
        """The modes, most preferred first (the default: the current mode, then graph order)."""
        return [*([snap.mode] if snap.mode else []), *self.modes]

    def propose(
        self, traj: Trajectory, feedback: Feedback | None, n: int
    ) -> Sequence[Candidate[Any]]:
        ranked = list(dict.fromkeys(self.rank(_snapshot(traj))))
        return [Candidate(m, m) for m in ranked[:n]]


class ConditionSelector(ModeSelector):
    """The first holding condition's mode first, then stickiness, then ``default``."""

    name = "condition selector"

    def __init__(
        self,
        modes: Sequence[str],
        choices: Sequence[tuple[str, str]],
        default: str,
        *,
        max_steps: Mapping[str, int] | None = None,
    ) -> None:
        super().__init__(modes)
        self.choices: list[tuple[Condition, str]] = []
        for text, mode in choices:
            try:
                self.choices.append((Condition.parse(text), mode))
            except ValueError as exc:
                raise ConfigError(f"mode choice {text!r}: {exc}") from None
        for mode in (default, *(m for _, m in choices), *(max_steps or {})):
            if mode not in self.modes:
                raise ConfigError(f"mode selector: {expected(f'one of {self.modes}', mode)}")
        self.default = default
        self.max_steps = dict(max_steps or {})

    @property
    def features(self) -> tuple[str, ...]:
        return tuple(c.feature for c, _ in self.choices)

    def rank(self, snap: Snapshot) -> list[str]:
        first = [
            mode
            for cond, mode in self.choices
            if cond.feature in snap.features and cond.holds(snap.features[cond.feature])
        ][:1]
        current = [snap.mode] if snap.mode else []
        limit = self.max_steps.get(snap.mode or "")
        if limit is not None and snap.mode_steps >= limit:
            current = []  # time-boxed: the activity is over, unless a condition asks for it
        return [*first, *current, self.default, *self.modes]


class FixedSelector(ModeSelector):
    """Always ``mode``."""

    name = "fixed mode"

    def __init__(self, mode: str) -> None:
        super().__init__((mode,))

    def rank(self, snap: Snapshot) -> list[str]:
        return [self.modes[0]]


class ForcedFirst(Policy):
    """Proposes only the snapshot's ``forced`` mode when it has one, else what ``inner`` does."""

    def __init__(self, inner: Policy) -> None:
        self.inner = inner
        self.name = inner.name

    def propose(
        self, traj: Trajectory, feedback: Feedback | None, n: int
    ) -> Sequence[Candidate[Any]]:
        snap = _snapshot(traj)
        if snap.forced is not None:
            return [Candidate(snap.forced, snap.forced)]
        return self.inner.propose(traj, feedback, n)


class SafeModeFallback(Fallback):
    """The safe mode (e.g. silence) when no ranked mode is admissible; the hard rules judge it."""

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.name = f"safe mode {mode}"

    def act(self, traj: Trajectory, verdicts: Sequence[Verdict]) -> Any:
        return self.mode
