"""`governor bench ltl-speed`: how fast the LTL monitors step as constraints are added.

:func:`ltl_speed` steps n jointly satisfiable pattern constraints over the Four Room alphabet
(one monitor per constraint, or one of their conjunction). Each episode (30 positions) walks
between rooms while a fridge and a light change at random. Before each move the walk checks
candidate next states with what-if steps until one violates no further constraint, as a guarded
agent does; every step call, what-if or kept, is timed. The first step of each size runs on
emptied memo tables; the median covers every later step. In ``conjoined`` mode a violated
conjunction restarts the episode (the start is timed too). The command reports, per n, the
median microseconds of one step and the milliseconds of the first step on empty memo tables.
Imports the LTL logic and the runtime's config, files and flags.
"""

from __future__ import annotations

import argparse
import dataclasses
import random
import statistics
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, Literal

from rich.console import Console

from governor.config import check_range, option
from governor.errors import ConfigError, expected
from governor.files import write_json
from governor.flags import Subcommands, add_dataclass_args, dataclass_from_args
from governor.ltl import patterns as p
from governor.ltl.monitor import MonitorSet, MonitorVerdict
from governor.ltl.progression import clear_caches
from governor.ltl.satisfiability import one_hot, search
from governor.ltl.simplify import conj
from governor.ltl.syntax import Formula

ROOMS = ("bathroom", "bedroom", "kitchen", "living_room")
OBJECTS = ("is_open(fridge)", "is_switchedon(light)")
_AT = {r: f"agent_at({r})" for r in ROOMS}


def _random_constraint(rng: random.Random) -> Formula:
    a, b = rng.sample([_AT[r] for r in ROOMS], 2)
    o = rng.choice(OBJECTS)
    makers: list[Callable[[], Formula]] = [
        lambda: p.future_avoidance(a, b),
        lambda: p.delayed_reaction(a, b),
        lambda: p.delayed_reaction(o, f"!{o}"),
        lambda: p.prompt_reaction(a, b),
        lambda: p.past_avoidance(a, b),
        lambda: p.precedence(a, b),
        lambda: p.upper_restricted_avoidance(a, rng.randint(1, 3)),
        lambda: p.lower_restricted_avoidance(a, rng.randint(1, 2)),
        lambda: p.instantaneous_reaction(o, a),
        lambda: p.global_avoidance(o) if rng.random() < 0.3 else p.visit(a),
    ]
    return rng.choice(makers)()


def constraints(n: int, rng: random.Random) -> list[Formula]:
    """``n`` random pattern constraints that one trace over the rooms can satisfy together."""
    alphabet = one_hot([_AT[r] for r in ROOMS], OBJECTS)
    out: list[Formula] = []
    for _ in range(100 * n):
        if len(out) == n:
            break
        f = _random_constraint(rng)
        if search(conj(*out, f), alphabet, max_depth=30, max_states=5000).trace is not None:
            out.append(f)
    return out


def _random_labels(rng: random.Random, room: str | None = None) -> frozenset[str]:
    room = room or rng.choice(ROOMS)
    return frozenset({_AT[room], *(o for o in OBJECTS if rng.random() < 0.3)})


def ltl_speed(
    n_constraints_list: Sequence[int] = (1, 5, 10, 20, 50),
    seed: int = 0,
    steps: int = 3000,
    mode: Literal["set", "conjoined"] = "set",
) -> list[dict[str, float]]:
    """Rows ``{"n_constraints", "step_us_p50", "first_step_ms"}``, one per size.

    ``mode="set"`` steps a :class:`MonitorSet` of one monitor per constraint; ``"conjoined"``
    steps one monitor of their conjunction.
    """
    rows = []
    for n in n_constraints_list:
        rng = random.Random(f"{seed}-{n}")
        formulas = constraints(n, rng)
        specs = [(f"c{i}", "", f) for i, f in enumerate(formulas)]
        if mode == "conjoined":
            specs = [("all", "", conj(*formulas))]
        monitors = MonitorSet.from_specs(specs)
        clear_caches()
        first = time.perf_counter_ns()
        state = monitors.start(_random_labels(rng))
        first_ns = time.perf_counter_ns() - first
        timings: list[int] = []
        while len(timings) < steps:
            if state.t >= 30 or (mode == "conjoined" and state.verdict is MonitorVerdict.VIOLATED):
                t0 = time.perf_counter_ns()
                state = monitors.start(_random_labels(rng))
                timings.append(time.perf_counter_ns() - t0)
                continue
            broken = len(state.violated)
            for room in rng.sample(ROOMS, len(ROOMS)):
                t0 = time.perf_counter_ns()
                nxt = monitors.step(state, _random_labels(rng, room))
                timings.append(time.perf_counter_ns() - t0)
                if len(nxt.violated) == broken:  # no new violation: a guarded agent's move
                    break
            state = nxt  # when every candidate violates something, the last one is forced
        rows.append(
            {
                "n_constraints": n,
                "step_us_p50": statistics.median(timings) / 1e3,
                "first_step_ms": first_ns / 1e6,
            }
        )
    return rows


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
