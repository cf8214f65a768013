"""What `governor bench safety-chip` runs: :class:`SafetyChipBenchConfig` and its constraint counts.

Imports only the runtime's configuration helpers and errors (the agents, the runner and the report
of the Safety Chip benchmark all read it).
"""

from __future__ import annotations

import dataclasses
from typing import Literal

from governor.config import check_range, option
from governor.errors import ConfigError, expected

EXPERIMENTS = {"rooms": "Four Room", "mobile_manip": "Mobile Manip"}
"""The experiments of the task data and their titles in Table I."""


@dataclasses.dataclass(frozen=True)
class SafetyChipBenchConfig:
    """What `governor bench safety-chip` runs."""

    experiment: Literal["rooms", "mobile_manip", "all"] = option("all", "task set")
    constraints: str = option("1-5", "constraint counts k: a range such as 1-5 or a list 1,3")
    agent: Literal["simulated", "llm"] = option("simulated", "planner: simulated or llm")
    diverse: bool = option(
        False, "agents get the non-experts' paraphrases; safety is judged on the experts' ones"
    )
    repeats: int = option(3, "episodes per task and k (seeds of the simulated planner)")
    seed: int = option(0, "first seed")
    max_steps: int = option(30, "actions before an episode is truncated")
    max_regenerations: int = option(6, "re-prompts per step before the episode halts")
    deviation_rate: float = option(0.2, "simulated planner: probability of each deviation")
    tasks: str = option("", "comma-separated task keys (default: all of the experiment)")
    include_known_issues: bool = option(False, "also run the tasks whose data misses the goal")
    spec: str | None = option(
        None, "spec file (ltl translate --accept); entries marked verified count as person-verified"
    )
    temperature: float = option(0.0, "LLM sampling temperature")

    def __post_init__(self) -> None:
        counts(self.constraints)
        check_range("repeats", self.repeats, 1, 1000)
        check_range("max_steps", self.max_steps, 1, 1000)
        check_range("max_regenerations", self.max_regenerations, 0, 32)
        check_range("deviation_rate", self.deviation_rate, 0.0, 1.0)


def counts(text: str) -> list[int]:
    """Constraint counts from ``1-5`` or ``1,3``; each in 1..5."""
    try:
        if "-" in text:
            low, high = (int(x) for x in text.split("-"))
            out = list(range(low, high + 1))
        else:
            out = [int(x) for x in text.split(",")]
    except ValueError:
        out = []
    if not out or not all(1 <= k <= 5 for k in out):
        raise ConfigError(
            f"constraints: {expected('a range such as 1-5 or a list 1,3 in 1..5', text)}"
        )
    return out
