"""`governor bench serve`: the latency the guard service adds in front of a model.

Measured the way NeMo Guardrails measured theirs: an upstream stub that answers a fixed chat
completion after a fixed latency (default 50 ms; an asyncio HTTP server on 127.0.0.1 in a process
of its own, :mod:`.stub`), and the same request driven directly to the stub and through
``governor serve`` (the app of :func:`governor.serve.create_app` under uvicorn on a free loopback
port, in a thread of this process) by a lean HTTP/1.1 client in a third process
(:mod:`.client`) at each concurrency, so that neither the stub nor the load generator takes
the service's CPU. Each governed request is a new session (no session lock is shared). Three check sets: ``overlays`` (the shipped small-talk
overlays on a text reply), ``ltl`` (ten LTL rules over eight tool propositions, on a tool-call
reply) and ``both`` (overlays and the ten rules on a text reply). Sessions are kept in SQLite
(``--store sqlite``, the default: a file in a temporary folder, as ``governor serve`` keeps them)
or in memory (``--store memory``). Per row: the p50 and p99 of
governor's latency minus the same percentile of the direct latency at that concurrency; the p50
of the guard's own time inside the step (the reply's ``latency_ms`` total minus its upstream
``propose`` stage: checks, bookkeeping, the store); the throughput through governor; and the
upstream calls per turn counted at the stub (1 when every turn is accepted at once; a turn is
accepted when it executed the first proposal). Then ``/v1/checks`` (no upstream, the ``both``
set) in decisions per second: check-only on one session per request in flight
(``checks_per_s``), and check-and-commit, each on a new session whose decision is written to the
store (``commits_per_s``). Then the streaming rows (``stream``, :mod:`.streaming`): with the
stub streaming a word every ``token_ms``, the time to the first token straight from the stub
against the time to the first token governor released, and the whole-reply times. Everything
stays on the loopback interface and is bounded in requests per cell and seconds per cell.

With ``--workers`` (or ``--compare``) the rows are services in processes of their own
(:func:`run_processes`); ``--repeat K`` measures each of them K times, every service started
afresh each time round, and gives each cell's median with the range of its added latencies, CPU
and throughput: on a shared machine one run of a cell at 32 in flight moves by more than most
changes do.
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import math
import os
import statistics
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from rich.console import Console

from governor.bench.service.driver import Driver, cell, checks_per_second, commits_per_second
from governor.bench.service.streaming import STREAM_SETS, plot_stream, stream_lines, stream_rows
from governor.bench.service.stub import Stub
from governor.bench.service.workload import CHECK_SETS, bench_policy, policy_data, request_body
from governor.config import check_range, option
from governor.errors import ConfigError, expected
from governor.files import write_json
from governor.flags import Subcommands, add_dataclass_args, dataclass_from_args
from governor.guard import Guard, MemoryStore, SessionStore, SqliteStore

STORES = ("sqlite", "memory")


@dataclasses.dataclass(frozen=True)
class ServeBenchConfig:
    """What `governor bench serve` runs."""

    requests: int = option(200, "timed requests per cell (each governed one a new session)")
    concurrency: str = option("1,8,32,64", "comma-separated numbers of requests in flight")
    latency_ms: float = option(50.0, "the upstream stub's fixed latency in milliseconds")
    quick: bool = option(False, "leave out concurrency 64")
    store: str = option("sqlite", "session store: sqlite (a file in a temporary folder) or memory")
    token_ms: float = option(20.0, "the stub's delay between streamed words in milliseconds")
    stream_requests: int = option(50, "timed streamed requests per streaming cell")
    stream_concurrency: str = option("1,8", "comma-separated numbers of streams in flight")
    chunk_tokens: int = option(0, "the streaming policies' chunk_tokens (0: the policy default)")
    checks: str = option(",".join(CHECK_SETS), "comma-separated check sets to measure")
    workers: str = option(
        "",
        "comma-separated worker counts, each served by `governor serve --workers N` in processes"
        " of its own with a SQLite store (empty: the app in a thread of this process)",
    )
    compare: str = option("", "nemo: NeMo Guardrails' server on the same stub, side by side")
    nemo_python: str = option(
        "", "the interpreter with nemoguardrails[server] (default: .venv-nemo/bin/python)"
    )
    repeat: int = option(
        1,
        "with --workers or --compare: measure every cell this many times (all the service's"
        " services started afresh each time round); each row gives the median and the range",
    )

    def __post_init__(self) -> None:
        if self.store not in STORES:
            raise ConfigError(f"store: {expected(' or '.join(STORES), self.store)}")
        check_range("requests", self.requests, 1, 100_000)
        check_range("latency_ms", self.latency_ms, 0, 10_000)
        check_range("token_ms", self.token_ms, 0, 10_000)
        check_range("stream_requests", self.stream_requests, 1, 100_000)
        check_range("chunk_tokens", self.chunk_tokens, 0, 4096)
        check_range("repeat", self.repeat, 1, 20)
        concurrencies(self.concurrency)
        concurrencies(self.stream_concurrency)
        self.worker_counts()
        if not self.check_sets() or not set(self.check_sets()) <= set(CHECK_SETS):
            raise ConfigError(f"checks: {expected(' or '.join(CHECK_SETS), self.checks)}")
        if self.repeat > 1 and not (self.workers or self.compare):
            raise ConfigError(
                f"repeat: expected --workers or --compare with a repeat of {self.repeat}, found"
                " neither (the rows in this process are measured once)"
            )
        if self.compare not in ("", "nemo"):
            raise ConfigError(f"compare: {expected('nemo or nothing', self.compare)}")
        if (self.compare or self.workers) and self.store != "sqlite":
            what = "--workers" if self.workers else "--compare"
            raise ConfigError(
                f"{what}: {expected('the sqlite store (processes share it)', self.store)}"
            )

    def check_sets(self) -> list[str]:
        """The ``--checks`` sets, in the order given."""
        return [c for c in self.checks.split(",") if c]

    def worker_counts(self) -> list[int]:
        """The ``--workers`` counts (none: the app in this process)."""
        if not self.workers:
            return []
        try:
            out = [int(x) for x in self.workers.split(",")]
        except ValueError:
            out = []
        if not out or not all(1 <= n <= 64 for n in out):
            raise ConfigError(
                f"workers: {expected('comma-separated integers in 1..64', self.workers)}"
            )
        return out

    def levels(self) -> list[int]:
        levels = concurrencies(self.concurrency)
        return [c for c in levels if c < 64] if self.quick else levels


def concurrencies(text: str) -> list[int]:
    """The levels of ``1,8,32``: each an integer in 1..256."""
    try:
        out = [int(x) for x in text.split(",")]
    except ValueError:
        out = []
    if not out or not all(1 <= n <= 256 for n in out):
        raise ConfigError(f"concurrency: {expected('comma-separated integers in 1..256', text)}")
    return out


def _store(kind: str, folder: str, checks: str) -> SessionStore:
    return SqliteStore(Path(folder) / f"{checks}.db") if kind == "sqlite" else MemoryStore()


def run(cfg: ServeBenchConfig) -> dict[str, Any]:
    """``{"config", "rows": [...], "checks_per_s", "commits_per_s", "stream": {"rows": [...]}}``
    (see the module doc); with ``workers`` or ``compare``, only the rows
    (:func:`run_processes`)."""
    if cfg.worker_counts() or cfg.compare:
        return run_processes(cfg)
    from governor.serve import create_app  # the [serve] extra: only when the bench runs
    from governor.serve.local import serving

    rows: list[dict[str, Any]] = []
    tag = f"{time.time_ns():x}"
    checks_rate = commits_rate = 0.0
    with (
        tempfile.TemporaryDirectory(prefix="governor-bench-serve-") as folder,
        Stub(cfg.latency_ms / 1000.0, cfg.token_ms / 1000.0) as stub,
        Driver() as driver,
    ):
        for checks in cfg.check_sets():
            store = _store(cfg.store, folder, checks)
            guard = Guard.from_policy(bench_policy(checks, stub.url), store=store)
            try:
                app = create_app(guard)
                gc.collect()
                gc.freeze()  # as governor serve does with what it loaded at start
                with serving(app) as base:
                    for c in cfg.levels():
                        rows.append(cell(driver, stub, base, checks, c, cfg.requests, tag))
                    if checks == "both":
                        checks_rate = checks_per_second(driver, base, cfg.requests)
                        commits_rate = commits_per_second(driver, base, cfg.requests, tag)
            finally:
                gc.unfreeze()
                _close(guard)
        levels = concurrencies(cfg.stream_concurrency)
        streamed = []
        for checks in STREAM_SETS:
            store = _store(cfg.store, folder, f"stream-{checks}")
            setup = (driver, stub, store, folder, tag)
            chunk = cfg.chunk_tokens or None
            streamed += stream_rows(checks, setup, cfg.stream_requests, levels, _close, chunk)
    return {
        "config": dataclasses.asdict(cfg),
        "rows": rows,
        "checks_per_s": checks_rate,
        "commits_per_s": commits_rate,
        "stream": {"token_ms": cfg.token_ms, "rows": streamed},
    }


def run_processes(cfg: ServeBenchConfig) -> dict[str, Any]:
    """The latency rows of services in processes of their own: ``governor serve --workers N``
    for each count (1 when none is given), sessions in SQLite, each check set; then, with
    ``compare`` = nemo, NeMo Guardrails' server (:mod:`.served`), on the same stub, in the same
    run. Each row's ``cpu_ms_per_request`` is the CPU time of the service's processes (all its
    workers) per timed request."""
    from governor.bench.service.served import (
        NEMO_CONFIG_ID,
        governor_served,
        nemo_python,
        nemo_served,
    )

    python = nemo_python(cfg.nemo_python) if cfg.compare == "nemo" else ""
    before = machine_ms()
    rows: list[dict[str, Any]] = []
    tag = f"{time.time_ns():x}"
    with (
        tempfile.TemporaryDirectory(prefix="governor-bench-serve-") as name,
        Stub(cfg.latency_ms / 1000.0, cfg.token_ms / 1000.0) as stub,
        Driver() as driver,
    ):
        folder = Path(name)
        for k in range(cfg.repeat):  # every service started afresh each time round
            for workers in cfg.worker_counts() or [1]:
                for checks in cfg.check_sets():
                    policy = policy_data(checks, stub.url)
                    name = f"{checks}-{workers}-{k}"
                    with governor_served(policy, folder, name, workers) as service:
                        _warm(driver, service.base, checks, workers, f"{tag}-{k}")
                        for c in cfg.levels():
                            got = cell(driver, stub, service.base, checks, c, cfg.requests,
                                       f"{tag}-{k}", cpu=service.cpu_s, workers=workers)  # fmt: skip
                            rows.append(got)
            if python:
                with nemo_served(python, folder, stub.url) as service:
                    extra = {"guardrails": {"config_id": NEMO_CONFIG_ID}}
                    _warm(driver, service.base, "rules", 1, f"{tag}-{k}", extra)
                    for c in cfg.levels():
                        got = cell(driver, stub, service.base, "rules", c, cfg.requests,
                                   f"{tag}-{k}", cpu=service.cpu_s, system="nemo", extra=extra)  # fmt: skip
                        rows.append(got)
    rows = repeated(rows, len(rows) // cfg.repeat)
    return {
        "config": dataclasses.asdict(cfg),
        "rows": rows,
        "uptime": _load_average(),
        "machine_ms": [before, machine_ms()],
    }


SPREAD = ("added_ms_p50", "added_ms_p99", "cpu_ms_per_request", "throughput_rps")
"""The figures a repeated row gives the range of (besides its median)."""


def repeated(runs: list[dict[str, Any]], cells: int) -> list[dict[str, Any]]:
    """One row per cell from ``runs`` (the ``cells`` in order, then again as often as the
    bench was repeated): a cell measured once as it is;
    else each number the median of its runs, ``FIELD_range`` ``[min, max]`` for the
    :data:`SPREAD` figures, and ``runs``, every run's row."""
    rows = []
    for i in range(cells):
        same = runs[i::cells]
        if len(same) == 1:
            rows.append(same[0])
            continue
        row = dict(same[0])
        for key in same[0]:
            values = [r[key] for r in same]
            if not all(isinstance(v, float | int) and not isinstance(v, bool) for v in values):
                continue  # (text, None where a system has no figure, flags)
            row[key] = statistics.median(values)
            if key in SPREAD:
                row[f"{key}_range"] = [min(values), max(values)]
        row["runs"] = same
        rows.append(row)
    return rows


def _warm(
    driver: Driver,
    base: str,
    checks: str,
    workers: int,
    tag: str,
    extra: dict[str, Any] | None = None,
) -> None:
    """Untimed requests on 8 connections per worker, so that every worker has loaded what it
    loads on first use before a cell is timed."""
    body = {**request_body(checks), **(extra or {})}
    n = 8 * workers
    bodies = [
        {**body, "metadata": {"governor_session": f"warm-{tag}-{workers}-{checks}-{i}"}}
        for i in range(2 * n)
    ]
    driver.drive(f"{base}/v1/chat/completions", bodies, n, warmup=len(bodies), read_answers=False)


def machine_ms() -> float:
    """The CPU milliseconds of a fixed piece of pure Python (a dict updated 200,000 times), the
    best of five: a shared machine's speed of the moment. Runs measured when it differs are not
    comparable (on the 2-core machine of ``docs/scaling.md`` one command's CPU per request has
    moved by a quarter from one hour to the next with the same code)."""
    best = math.inf
    for _ in range(5):
        start = time.process_time()
        counts: dict[int, int] = {}
        for i in range(200_000):
            counts[i & 1023] = counts.get(i & 1023, 0) + i * i
        best = min(best, time.process_time() - start)
    return round(1000.0 * best, 1)


def _load_average() -> list[float] | None:
    """The machine's load averages (1, 5, 15 minutes) at the end of the run, where known."""
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except (AttributeError, OSError):
        return None


def _close(guard: Guard) -> None:
    guard.close()
    close = getattr(guard.backend, "close", None)
    if close is not None:
        close()


def table_lines(result: dict[str, Any]) -> Iterator[list[str]]:
    """Header and one row per check set and concurrency."""
    processes = any(r.get("workers") or r.get("system") != "governor" for r in result["rows"])
    yield [
        *(["system", "workers"] if processes else []),
        "checks",
        "in flight",
        "+ms p50",
        "+ms p99",
        "direct ms",
        "guard ms",
        "CPU ms/req",
        "req/s",
        "direct req/s",
        "calls/turn",
    ]
    for r in result["rows"]:
        yield [
            *([r["system"], str(r["workers"] or "-")] if processes else []),
            r["checks"],
            str(r["concurrency"]),
            _spread(r, "added_ms_p50", 1),
            _spread(r, "added_ms_p99", 1),
            f"{r['direct_ms_p50']:.1f}",
            _figure(r["guard_ms_p50"], 2),
            _spread(r, "cpu_ms_per_request", 2),
            _spread(r, "throughput_rps", 1),
            f"{r['direct_throughput_rps']:.1f}",
            f"{r['upstream_calls_per_turn']:.2f}",
        ]


def _figure(value: float | None, digits: int) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _spread(row: dict[str, Any], key: str, digits: int) -> str:
    """The row's figure; a repeated row's median with its range, ``12.3 (10.9-15.1)``."""
    text = _figure(row[key], digits)
    span = row.get(f"{key}_range")
    return text if span is None else f"{text} ({span[0]:.{digits}f}-{span[1]:.{digits}f})"


def plot(result: dict[str, Any], path: Path) -> None:
    """Left: added milliseconds (p50, solid; p99, dashed) against concurrency, one colour per
    set. Right: time to first token (p50) straight from the stub and through governor, per
    streaming set and concurrency."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax, right) = plt.subplots(1, 2, figsize=(11, 4))
    for i, checks in enumerate(CHECK_SETS):
        rows = [r for r in result["rows"] if r["checks"] == checks]
        if not rows:
            continue
        xs = [r["concurrency"] for r in rows]
        colour = f"C{i}"
        ax.plot(xs, [r["added_ms_p50"] for r in rows], "o-", color=colour, label=f"{checks} p50")
        ax.plot(xs, [r["added_ms_p99"] for r in rows], "x--", color=colour, label=f"{checks} p99")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("requests in flight")
    ax.set_ylabel("added latency (ms)")
    latency = result["config"]["latency_ms"]
    ax.set_title(f"governor serve: added latency over a {latency:g} ms upstream")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    plot_stream(right, result)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def add_parser(bench: Subcommands) -> None:
    """`governor bench serve`."""
    parser = bench.add_parser(
        "serve", help="latency the guard service adds over a fixed-latency upstream stub"
    )
    add_dataclass_args(parser, ServeBenchConfig)
    parser.add_argument("--json", type=Path, help="write the results here")
    parser.add_argument("--plot", type=Path, help="write added latency vs concurrency here (PNG)")
    parser.set_defaults(handler=run_command)


def run_command(args: argparse.Namespace, console: Console) -> int:
    from governor.report import print_table

    try:
        import httpx  # noqa: F401
        import uvicorn  # noqa: F401

        import governor.serve  # noqa: F401
    except ImportError as exc:
        raise ConfigError(
            f"bench serve: expected the [serve] extra (pip install -e '.[serve]' in the governor checkout), found {exc}"
        ) from None
    result = run(dataclass_from_args(ServeBenchConfig, args))
    cfg = result["config"]
    print_table(
        console,
        f"added latency, {cfg['latency_ms']:g} ms upstream, {cfg['requests']} requests/cell,"
        f" {cfg['store']} store",
        list(table_lines(result)),
    )
    if "checks_per_s" in result:
        console.print(
            f"/v1/checks (no upstream): {result['checks_per_s']:.0f} decisions per second"
            f" check-only, {result['commits_per_s']:.0f} with commit (each stored)"
        )
        print_table(
            console,
            f"streaming: time to first token, a word every {cfg['token_ms']:g} ms,"
            f" {cfg['stream_requests']} streams/cell",
            list(stream_lines(result)),
        )
    else:
        console.print(f"load average at the end (1, 5, 15 min): {result['uptime']}")
        start, end = result["machine_ms"]
        console.print(
            f"this machine's speed: a fixed piece of Python took {start:g} ms of CPU at the start"
            f" and {end:g} ms at the end (compare runs only where these agree)"
        )
    if args.json is not None:
        write_json(args.json, result)
    if args.plot is not None:
        plot(result, args.plot)
        console.print(f"plot written to {args.plot}")
    return 0
