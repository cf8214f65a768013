"""The driver of `governor bench serve`: the service served on a loopback port, requests driven
at a concurrency by a lean HTTP/1.1 client (:mod:`.client`), and the cells measured from them (latency percentiles,
throughput, upstream calls per turn, `/v1/checks` decisions per second).

The client runs in a process of its own (:class:`Driver`), as a load generator does: in the
service's process it would take the service's interpreter lock and CPU and be measured as
service time."""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing
import statistics
import time
from collections.abc import Callable, Coroutine
from concurrent.futures import ProcessPoolExecutor
from typing import Any, TypeVar

from governor.bench.service.client import encoded, run_batch
from governor.bench.service.stub import Stub
from governor.bench.service.workload import CELL_SECONDS, TEXT_REPLY, USER_TEXT, request_body
from governor.errors import ConfigError

T = TypeVar("T")


async def drive(
    url: str,
    bodies: list[dict[str, Any]],
    concurrency: int,
    *,
    warmup: int,
    read_answers: bool = True,
) -> dict[str, Any]:
    """POST each body to ``url`` with ``concurrency`` in flight (after ``warmup`` untimed ones);
    the latencies (ms), the seconds, the governor fields of the answers (``read_answers``)."""
    requests = [encoded(url, body) for body in bodies]
    for batch, keep in ((requests[:warmup], False), (requests[warmup:], True)):
        run = await run_batch(
            url,
            batch,
            concurrency,
            keep=keep,
            read_answers=read_answers,
            deadline_s=CELL_SECONDS,
        )
        if run.failures:
            found = f"{len(run.failures)} requests failed, first: {run.failures[0]}"
            raise ConfigError(f"bench serve: expected every request answered, found {found}")
    return {"latencies": run.latencies, "seconds": run.seconds, "answers": run.answers}


def _drive_here(
    url: str, bodies: list[dict[str, Any]], concurrency: int, warmup: int, read_answers: bool
) -> dict[str, Any]:
    runner: Callable[[Coroutine[Any, Any, dict[str, Any]]], dict[str, Any]] = asyncio.run
    with contextlib.suppress(ImportError):  # the load generator must not be the limit
        import uvloop

        runner = uvloop.run
    return runner(drive(url, bodies, concurrency, warmup=warmup, read_answers=read_answers))


class Driver:
    """Drives requests from a separate process (started once, reused for every cell)."""

    def __enter__(self) -> Driver:
        self._pool = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"))
        return self

    def __exit__(self, *exc: object) -> None:
        self._pool.shutdown(wait=True)

    def drive(
        self,
        url: str,
        bodies: list[dict[str, Any]],
        concurrency: int,
        *,
        warmup: int,
        read_answers: bool = True,
    ) -> dict[str, Any]:
        """:func:`drive`, in the driver's process."""
        job = self._pool.submit(_drive_here, url, bodies, concurrency, warmup, read_answers)
        return job.result()

    def call(self, fn: Callable[..., T], *args: Any) -> T:
        """``fn(*args)`` in the driver's process (``fn`` importable by name)."""
        return self._pool.submit(fn, *args).result()


def percentile(values: list[float], q: float) -> float:
    """The ``q`` quantile (0..1) of ``values``, linearly interpolated."""
    ordered = sorted(values)
    if len(ordered) == 1:
        return ordered[0]
    return statistics.quantiles(ordered, n=1000, method="inclusive")[round(q * 1000) - 1]


def cell(
    driver: Driver,
    stub: Stub,
    base: str,
    checks: str,
    concurrency: int,
    requests: int,
    tag: str,
    *,
    cpu: Callable[[], float | None] = time.process_time,
    system: str = "governor",
    workers: int | None = None,
    extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """One row: direct and governed latencies at ``concurrency``, paired by percentile, and the
    service's CPU per governed request (``cpu()``: its CPU seconds so far, read before and after
    the timed requests; the warm-up ones are not counted). ``system``: ``governor`` (its answers'
    ``governor`` fields are read) or another guard service (``nemo``), whose requests carry
    ``extra`` in their bodies."""
    warmup = min(concurrency, requests)
    body = {**request_body(checks), **(extra or {})}
    direct = driver.drive(
        f"{stub.url}/chat/completions", [request_body(checks)] * (warmup + requests), concurrency,
        warmup=warmup,
    )  # fmt: skip
    sessions = [
        {
            **body,
            "metadata": {
                "governor_session": f"bench-{tag}-{system}-{workers}-{checks}-{concurrency}-{i}"
            },
        }
        for i in range(warmup + requests)
    ]
    calls_before = stub.calls
    ours = system == "governor"
    governed = driver.drive(
        f"{base}/v1/chat/completions", sessions[:warmup], concurrency, warmup=warmup
    )
    cpu_before = cpu()
    governed = driver.drive(
        f"{base}/v1/chat/completions", sessions[warmup:], concurrency, warmup=0, read_answers=ours
    )
    cpu_after = cpu()
    turns = warmup + requests
    answers = governed["answers"] if ours else []
    accepted = [
        a
        for a in answers
        if str(a.get("kind", "")).startswith("execute") and not a.get("regenerations")
    ]
    guard_ms = [a["latency_ms"]["total"] - a["latency_ms"].get("propose", 0.0) for a in answers]
    calls = stub.calls - calls_before
    d, g = direct["latencies"], governed["latencies"]
    spent = None if cpu_before is None or cpu_after is None else cpu_after - cpu_before
    return {
        "system": system,
        "workers": workers,
        "checks": checks,
        "concurrency": concurrency,
        "requests": len(g),
        "direct_ms_p50": percentile(d, 0.5),
        "direct_ms_p99": percentile(d, 0.99),
        "governor_ms_p50": percentile(g, 0.5),
        "governor_ms_p99": percentile(g, 0.99),
        "added_ms_p50": percentile(g, 0.5) - percentile(d, 0.5),
        "added_ms_p99": percentile(g, 0.99) - percentile(d, 0.99),
        "guard_ms_p50": percentile(guard_ms, 0.5) if guard_ms else None,
        "cpu_ms_per_request": None if spent is None else 1000.0 * spent / len(g),
        "throughput_rps": len(g) / governed["seconds"],
        "direct_throughput_rps": len(d) / direct["seconds"],
        "upstream_calls_per_turn": calls / turns,
        "upstream_calls_per_accepted_turn": (
            statistics.fmean(a["llm"]["calls"] for a in accepted) if accepted else None
        ),
        "accepted": len(accepted) / len(answers) if answers else None,
    }


def checks_per_second(driver: Driver, base: str, requests: int, concurrency: int = 8) -> float:
    """Decisions per second on ``/v1/checks`` (no upstream): a text candidate, one session per
    worker."""
    bodies = [
        {
            "session": f"checks-{i % concurrency}",
            "candidate": TEXT_REPLY,
            "messages": [{"role": "user", "content": USER_TEXT}],
        }
        for i in range(min(concurrency, requests) + requests)
    ]
    warmup = min(concurrency, requests)
    result = driver.drive(
        f"{base}/v1/checks", bodies, concurrency, warmup=warmup, read_answers=False
    )
    return len(result["latencies"]) / result["seconds"]


def commits_per_second(
    driver: Driver, base: str, requests: int, tag: str, concurrency: int = 8
) -> float:
    """Decisions per second on ``/v1/checks`` with ``commit``: a text candidate after one user
    message, each on a new session, so each decision is judged and written to the store."""
    bodies = [
        {
            "session": f"commits-{tag}-{i}",
            "candidate": TEXT_REPLY,
            "messages": [{"role": "user", "content": USER_TEXT}],
            "commit": True,
        }
        for i in range(min(concurrency, requests) + requests)
    ]
    warmup = min(concurrency, requests)
    result = driver.drive(
        f"{base}/v1/checks", bodies, concurrency, warmup=warmup, read_answers=False
    )
    return len(result["latencies"]) / result["seconds"]
