"""`governor bench store`: the time of one session-store cycle, per store.

A cycle is what a guarded call costs the store: take the session's lock (shared stores), read its
state, write the new state and one decision record, commit. The state holds ten messages. Stores
are given as ``--store`` values; a PostgreSQL store is measured with its connection pool and
without (``pool_size=0``: a connection per call), in alternating rounds so that both see the same
machine load. The figure is the median over rounds of the mean cycle time.
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import tempfile
import time
from collections.abc import Iterator
from contextlib import nullcontext
from pathlib import Path
from typing import Any

from rich.console import Console

from governor.config import check_range, option
from governor.files import write_json
from governor.flags import Subcommands, add_dataclass_args, dataclass_from_args
from governor.guard.stores import SessionStore, shared_lock, store_from

STATE = {
    "t": 1,
    "messages": [{"role": "user", "content": "a message of ordinary length " * 3}] * 10,
}


@dataclasses.dataclass(frozen=True)
class StoreBenchConfig:
    """What `governor bench store` runs."""

    cycles: int = option(50, "cycles per round")
    rounds: int = option(6, "alternating rounds per store")

    def __post_init__(self) -> None:
        check_range("cycles", self.cycles, 1, 1_000_000)
        check_range("rounds", self.rounds, 1, 1000)


def _cycle(store: SessionStore, t: int) -> None:
    lock = shared_lock(store, "bench")
    with lock if lock is not None else nullcontext():
        store.load("bench")
        store.save("bench", {**STATE, "t": t}, {"type": "bench", "t": t})


def _stores(specs: list[str], tmp: Path) -> Iterator[tuple[str, SessionStore]]:
    for spec in specs or [f"sqlite:{tmp / 'bench.sqlite3'}"]:
        if spec.startswith("postgres:"):
            yield "postgres, a connection per call", store_from(spec, pool_size=0)
            yield "postgres, pooled", store_from(spec)
        else:
            yield spec.split(":", 1)[0], store_from(spec)


def run(cfg: StoreBenchConfig, specs: list[str]) -> dict[str, Any]:
    """``{"config", "rows": [{"store", "cycle_ms"}]}`` for the stores ``specs`` names."""
    with tempfile.TemporaryDirectory(prefix="governor-store-bench-") as tmp:
        stores = list(_stores(specs, Path(tmp)))
        means: dict[str, list[float]] = {name: [] for name, _ in stores}
        for _ in range(cfg.rounds):
            for name, store in stores:
                start = time.perf_counter()
                for t in range(cfg.cycles):
                    _cycle(store, t)
                means[name].append((time.perf_counter() - start) / cfg.cycles * 1000)
        for _, store in stores:
            close = getattr(store, "close", None)
            if callable(close):
                close()
    rows = [{"store": name, "cycle_ms": statistics.median(v)} for name, v in means.items()]
    return {"config": dataclasses.asdict(cfg), "rows": rows}


def add_parser(bench: Subcommands) -> None:
    """`governor bench store`."""
    p = bench.add_parser("store", help="time one session-store cycle (lock, read, write, commit)")
    add_dataclass_args(p, StoreBenchConfig)
    p.add_argument(
        "--store",
        action="append",
        default=[],
        metavar="SPEC",
        help="a store to measure: sqlite:PATH, memory or postgres:DSN (repeatable; default:"
        " SQLite in a temporary folder)",
    )
    p.add_argument("--json", type=Path, help="write the results here")
    p.set_defaults(handler=run_command)


def run_command(args: argparse.Namespace, console: Console) -> int:
    from governor.report import print_table

    result = run(dataclass_from_args(StoreBenchConfig, args), args.store)
    rows = [["store", "cycle (ms)"]] + [
        [r["store"], f"{r['cycle_ms']:.2f}"] for r in result["rows"]
    ]
    print_table(console, "Session store cycle", rows)
    if args.json is not None:
        write_json(args.json, result)
    return 0
