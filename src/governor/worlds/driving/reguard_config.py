"""The settings of `governor bench reguard`."""

from __future__ import annotations

import dataclasses
from typing import Literal

from governor.config import check_range, option
from governor.errors import ConfigError, expected

TABLES = ("all", "driving", "commerce", "backseat")
OBS: tuple[Literal["state", "text"], ...] = ("state", "text")


@dataclasses.dataclass(frozen=True)
class ReGuardBenchConfig:
    """What `governor bench reguard` runs."""

    tables: Literal["all", "driving", "commerce", "backseat"] = option("all", "which tables")
    episodes: int = option(100, "driving: start states per (base policy, guard)")
    seed: int = option(0, "seed of the starts, the erratic policy and the baselines")
    erratic_p: float = option(0.3, "probability that the erratic policy acts at random")
    checkpoints: str = option(
        "reguard-checkpoints",
        "folder of the learned values: driving-state/, driving-text/, commerce-text/",
    )
    learned: str = option("state,text", "learned values to use: state, text, or both (a,b)")
    llm_checkpoint: str | None = option(
        None, "an LLM-backbone value (train safety-value --obs llm) for a ReGuard (LLM) row"
    )
    model_path: str | None = option(None, "its model folder (default: where it was trained)")
    train_minutes: float = option(
        0.0, "train a missing learned value for this many minutes (0: leave its rows out)"
    )
    train_steps: int | None = option(
        None, "bound that training by gradient steps instead of minutes (reproducible runs)"
    )
    margin: float | None = option(None, "filter margin (default: the grid's resolution margin)")
    monitor_steps: int = option(600, "proposed actions scored per guard for the monitor metrics")
    zero_shot: bool = option(False, "add the zero-shot LLM guard (needs an endpoint)")
    false_safe: float = option(
        0.005,
        "learned filters: margin calibrated so that at most this share of admitted "
        "held-out (state, action) pairs is doomed",
    )

    def __post_init__(self) -> None:
        if self.margin is not None:  # below 0 the filter admits actions that fail
            check_range("margin", self.margin, 0.0, 1e6)
        if self.tables not in TABLES:
            raise ConfigError(f"tables: {expected(', '.join(TABLES), self.tables)}")
        check_range("episodes", self.episodes, 1, 1_000_000)
        check_range("erratic_p", self.erratic_p, 0.0, 1.0)
        check_range("train_minutes", self.train_minutes, 0.0, 1e4)
        if self.train_steps is not None:
            check_range("train_steps", self.train_steps, 1, 100_000_000)
        check_range("monitor_steps", self.monitor_steps, 1, 10_000_000)
        check_range("false_safe", self.false_safe, 0.0, 1.0)
        unknown = set(self.observations) - set(OBS)
        if unknown:
            raise ConfigError(f"learned: {expected('state, text or state,text', self.learned)}")

    @property
    def observations(self) -> tuple[str, ...]:
        """The learned values asked for, in the order state, text."""
        asked = {o.strip() for o in self.learned.split(",") if o.strip()}
        return tuple(o for o in OBS if o in asked) + tuple(sorted(asked - set(OBS)))

    def wants(self, table: str) -> bool:
        return self.tables in ("all", table)
