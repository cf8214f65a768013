"""`governor bench ltl-speed`: how fast the LTL monitors step as constraints are added.

Runs :func:`governor.ltl.speed.ltl_speed` (n jointly satisfiable pattern constraints over the
Four Room alphabet, one monitor per constraint) and reports, per n, the median microseconds of
one step and the milliseconds of the first step on empty memo tables.
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

from rich.console import Console

from governor.config import check_range, option
from governor.errors import ConfigError, expected
from governor.files import write_json
from governor.flags import Subcommands, add_dataclass_args, dataclass_from_args
from governor.ltl.speed import ltl_speed


@dataclasses.dataclass(frozen=True)
class LTLSpeedConfig:
    """What `governor bench ltl-speed` runs."""

    sizes: str = option("1,5,10,20,50", "comma-separated numbers of constraints")
    seed: int = option(0, "seed of the constraints and of the walk")
    steps: int = option(3000, "timed monitor steps per size")
    mode: Literal["set", "conjoined"] = option(
        "set", "one monitor per constraint (set) or one of their conjunction"
    )

    def __post_init__(self) -> None:
        sizes(self.sizes)
        check_range("steps", self.steps, 1, 10_000_000)


def sizes(text: str) -> list[int]:
    """The sizes of ``1,5,10``: each an integer in 1..500."""
    try:
        out = [int(x) for x in text.split(",")]
    except ValueError:
        out = []
    if not out or not all(1 <= n <= 500 for n in out):
        raise ConfigError(f"sizes: {expected('comma-separated integers in 1..500', text)}")
    return out


def run(cfg: LTLSpeedConfig) -> dict[str, Any]:
    """``{"config", "rows": [{"n_constraints", "step_us_p50", "first_step_ms"}, ...]}``."""
    rows = ltl_speed(sizes(cfg.sizes), seed=cfg.seed, steps=cfg.steps, mode=cfg.mode)
    return {"config": dataclasses.asdict(cfg), "rows": rows}


def table_lines(result: dict[str, Any]) -> Iterator[list[str]]:
    """Header and one row per number of constraints."""
    yield ["constraints", "step (µs, median)", "first step (ms)"]
    for r in result["rows"]:
        yield [str(r["n_constraints"]), f"{r['step_us_p50']:.1f}", f"{r['first_step_ms']:.2f}"]


def add_parser(bench: Subcommands) -> None:
    """`governor bench ltl-speed`."""
    speed = bench.add_parser("ltl-speed", help="LTL monitor step time for 1 to 50 constraints")
    add_dataclass_args(speed, LTLSpeedConfig)
    speed.add_argument("--json", type=Path, help="write the results here")
    speed.set_defaults(handler=run_command)


def run_command(args: argparse.Namespace, console: Console) -> int:
    from governor.report import print_table

    result = run(dataclass_from_args(LTLSpeedConfig, args))
    print_table(
        console, f"LTL monitor speed ({result['config']['mode']})", list(table_lines(result))
    )
    if args.json is not None:
        write_json(args.json, result)
    return 0
