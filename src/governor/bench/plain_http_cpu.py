"""`governor bench plain-http`: the CPU one request to a plain-http upstream costs the caller's
process, per client.

The upstream is the stub of `governor bench serve` (:mod:`.service.stub`: a chat completion
answered at once, kept-alive HTTP/1.1, in a process of its own, so its work is not counted). Each
client makes ``requests`` sequential chat-completion requests per round, the clients taking turns
round after round so that all see the same machine load:

- ``AsyncPlainHttp, awaited on the loop``: :class:`~governor.backends.plain_http.AsyncPlainHttp`;
- ``PlainHttp in a worker thread``: :class:`~governor.backends.plain_http.PlainHttp` called
  through ``loop.run_in_executor`` (one worker thread), as a coroutine must call blocking code;
- ``PlainHttp, blocking``: the same client called directly, with no event loop (for reference).

The event loop is uvloop's when it is installed. The figures are, over rounds, the median of
the process's CPU time (every thread) and of the wall time per request.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import json
import statistics
import time
from collections.abc import Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console

from governor.config import check_range, option
from governor.errors import ConfigError
from governor.files import write_json
from governor.flags import Subcommands, add_dataclass_args, dataclass_from_args

if TYPE_CHECKING:
    from governor.backends.plain_http import AsyncPlainHttp, PlainHttp

BODY = json.dumps(
    {"model": "stub", "messages": [{"role": "user", "content": "Which trails are open today?"}]},
    separators=(",", ":"),
).encode()
MAX_BYTES = 1 << 20
TIMEOUT_S = 10.0

ASYNC = "AsyncPlainHttp, awaited on the loop"
THREAD = "PlainHttp in a worker thread"
BLOCKING = "PlainHttp, blocking (no event loop)"


@dataclasses.dataclass(frozen=True)
class PlainHttpBenchConfig:
    """What `governor bench plain-http` runs."""

    requests: int = option(2000, "sequential requests per client and round")
    rounds: int = option(3, "rounds (the clients take turns in each)")

    def __post_init__(self) -> None:
        check_range("requests", self.requests, 1, 10_000_000)
        check_range("rounds", self.rounds, 1, 1000)


def _check(status: int) -> None:
    if status != 200:
        raise RuntimeError(f"the upstream stub answered {status}, expected 200")


async def _awaited(client: AsyncPlainHttp, count: int) -> None:
    for _ in range(count):
        deadline = time.monotonic() + TIMEOUT_S
        status, _, _ = await client.request("POST", "/chat/completions", BODY, deadline, MAX_BYTES)
        _check(status)


async def _in_thread(client: PlainHttp, pool: ThreadPoolExecutor, count: int) -> None:
    loop = asyncio.get_running_loop()
    for _ in range(count):
        deadline = time.monotonic() + TIMEOUT_S
        status, _, _ = await loop.run_in_executor(
            pool, client.request, "POST", "/chat/completions", BODY, deadline, MAX_BYTES
        )
        _check(status)


def _blocking(client: PlainHttp, count: int) -> None:
    for _ in range(count):
        status, _, _ = client.request(
            "POST", "/chat/completions", BODY, time.monotonic() + TIMEOUT_S, MAX_BYTES
        )
        _check(status)


def _runner() -> tuple[str, Callable[[Coroutine[Any, Any, None]], None]]:
    with contextlib.suppress(ImportError):
        import uvloop

        return "uvloop", uvloop.run
    return "asyncio", asyncio.run


def run(cfg: PlainHttpBenchConfig) -> dict[str, Any]:
    """``{"config", "loop", "rows": [{"client", "cpu_us", "wall_us"}]}``: per request, the
    median over rounds."""
    from governor.backends.plain_http import AsyncPlainHttp, PlainHttp
    from governor.bench.service.stub import Stub

    if not AsyncPlainHttp.available():
        raise ConfigError("bench plain-http: expected httptools (the [serve] extra), found none")
    loop_name, runner = _runner()
    cpu: dict[str, list[float]] = {ASYNC: [], THREAD: [], BLOCKING: []}
    wall: dict[str, list[float]] = {name: [] for name in cpu}
    with Stub(latency_s=0.0) as stub:
        awaited = AsyncPlainHttp(stub.url, {"Accept": "application/json"})
        blocking = PlainHttp(stub.url, {"Accept": "application/json"})
        pool = ThreadPoolExecutor(max_workers=1)

        async def rounds() -> None:
            await _awaited(awaited, 50)  # warm: connections open, code paths taken
            await _in_thread(blocking, pool, 50)
            for _ in range(cfg.rounds):
                for name, work in (
                    (ASYNC, lambda: _awaited(awaited, cfg.requests)),
                    (THREAD, lambda: _in_thread(blocking, pool, cfg.requests)),
                ):
                    start, start_cpu = time.perf_counter(), time.process_time()
                    await work()
                    cpu[name].append((time.process_time() - start_cpu) / cfg.requests * 1e6)
                    wall[name].append((time.perf_counter() - start) / cfg.requests * 1e6)
            await awaited.aclose()

        try:
            runner(rounds())
            for _ in range(cfg.rounds):
                start, start_cpu = time.perf_counter(), time.process_time()
                _blocking(blocking, cfg.requests)
                cpu[BLOCKING].append((time.process_time() - start_cpu) / cfg.requests * 1e6)
                wall[BLOCKING].append((time.perf_counter() - start) / cfg.requests * 1e6)
        finally:
            pool.shutdown()
            blocking.close()
            awaited.close()
    rows = [
        {
            "client": name,
            "cpu_us": statistics.median(cpu[name]),
            "wall_us": statistics.median(wall[name]),
        }
        for name in cpu
    ]
    return {"config": dataclasses.asdict(cfg), "loop": loop_name, "rows": rows}


def add_parser(bench: Subcommands) -> None:
    """`governor bench plain-http`."""
    p = bench.add_parser(
        "plain-http",
        help="CPU per request to a plain-http upstream: AsyncPlainHttp vs PlainHttp in a thread",
    )
    add_dataclass_args(p, PlainHttpBenchConfig)
    p.add_argument("--json", type=Path, help="write the results here")
    p.set_defaults(handler=run_command)


def run_command(args: argparse.Namespace, console: Console) -> int:
    from governor.report import print_table

    result = run(dataclass_from_args(PlainHttpBenchConfig, args))
    rows = [["client", "CPU per request (µs)", "wall per request (µs)"]] + [
        [r["client"], f"{r['cpu_us']:.0f}", f"{r['wall_us']:.0f}"] for r in result["rows"]
    ]
    title = (
        f"One request to a local keep-alive upstream ({result['loop']}; "
        f"{result['config']['requests']:,} sequential requests x {result['config']['rounds']} rounds)"
    )
    print_table(console, title, rows)
    if args.json is not None:
        write_json(args.json, result)
    return 0
