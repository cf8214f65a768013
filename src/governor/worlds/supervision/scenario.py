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
class ScenarioResult:
    """One scenario's outcome.

    ``conditions`` holds the primary metric per condition (the treatment and its ablation among
    them); ``table`` one row per condition with every measure, under the same keys in each row;
    ``series`` a curve per condition over turns (mean escalation, running negativity, ...) for the
    plot, labelled by ``series_label``; ``notes`` says what the simulated users are and anything a
    reader must know to trust the numbers (an effect that did not show, a cap that was hit).
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
        }


class Scenario(Protocol):
    def __call__(self, *, episodes: int, seed: int) -> ScenarioResult: ...
