"""What one scenario of ``governor bench supervision`` returns: a primary metric per condition.

Each scenario module (``deescalation``, ``training``, ``tutoring``, ``crisis``, ``ensemble``)
exposes ``run(*, episodes: int, seed: int) -> ScenarioResult``. Every condition of a scenario
runs on the same seeded users, so the treatment and its ablation differ only in the mechanism.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol


@dataclass(frozen=True)
class Curve:
    """A curve beside the time series: each of ``lines`` over the points ``x`` (a threshold sweep,
    say); ``marks`` names points on the x axis worth seeing (the threshold chosen)."""

    name: str
    x_label: str
    y_label: str
    x: tuple[float, ...]
    lines: Mapping[str, tuple[float, ...]]
    marks: Mapping[str, float] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "x_label": self.x_label,
            "y_label": self.y_label,
            "x": list(self.x),
            "lines": {k: list(v) for k, v in self.lines.items()},
            "marks": dict(self.marks),
        }


@dataclass(frozen=True)
class ScenarioResult:
    """One scenario's outcome.

    ``conditions`` holds the primary metric per condition (the treatment and its ablation among
    them); ``table`` one row per condition with every measure, under the same keys in each row;
    ``series`` a curve per condition over turns (mean escalation, running negativity, ...) for the
    plot, labelled by ``series_label``; ``curves`` other curves for the plot (a sweep over a
    setting); ``details`` anything else worth keeping in the JSON (a calibration run); ``notes``
    says what the simulated users are and anything a reader must know to trust the numbers (an
    effect that did not show, a cap that was hit).
    """

    name: str
    metric: str
    lower_is_better: bool
    treatment: str
    ablation: str
    conditions: Mapping[str, float]
    table: tuple[Mapping[str, Any], ...] = ()
    series: Mapping[str, tuple[float, ...]] = field(default_factory=dict)
    series_label: str = ""
    notes: tuple[str, ...] = ()
    curves: tuple[Curve, ...] = ()
    details: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for cond in (self.treatment, self.ablation):
            if cond not in self.conditions:
                raise ValueError(
                    f"scenario {self.name}: condition {cond!r} has no value;"
                    f" found {sorted(self.conditions)}"
                )

    @property
    def effect(self) -> float:
        """Treatment minus ablation, signed so that a positive number is an improvement."""
        diff = self.conditions[self.treatment] - self.conditions[self.ablation]
        return -diff if self.lower_is_better else diff

    def to_json(self) -> dict[str, Any]:
        return {
            "metric": self.metric,
            "lower_is_better": self.lower_is_better,
            "treatment": self.treatment,
            "ablation": self.ablation,
            "conditions": dict(self.conditions),
            "effect": self.effect,
            "table": [dict(row) for row in self.table],
            "series": {k: list(v) for k, v in self.series.items()},
            "series_label": self.series_label,
            "notes": list(self.notes),
            "curves": [c.to_json() for c in self.curves],
            "details": dict(self.details),
        }


class Scenario(Protocol):
    def __call__(self, *, episodes: int, seed: int) -> ScenarioResult: ...


class ModelScenario(Protocol):
    """A scenario whose agents (and simulated users, where it has an LLM persona) can talk to a
    configured model; ``backend`` None keeps the offline stand-ins."""

    def __call__(self, *, episodes: int, seed: int, backend: Any = None) -> ScenarioResult: ...
