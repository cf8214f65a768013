"""The driver of `governor bench serve`: the service served on a loopback port, requests driven
at a concurrency by an async httpx client, and the cells measured from them (latency percentiles,
throughput, upstream calls per turn, `/v1/checks` decisions per second).

The client runs in a process of its own (:class:`Driver`), as a load generator does: in the
service's process it would take the service's interpreter lock and CPU and be measured as
service time."""

from __future__ import annotations

import asyncio
import multiprocessing
import statistics
import time
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from governor.bench.serve_setup import CELL_SECONDS, TEXT_REPLY, USER_TEXT, request_body
from governor.bench.serve_stub import Stub
from governor.errors import ConfigError


async def drive(
    url: str, bodies: list[dict[str, Any]], concurrency: int, *, warmup: int
) -> dict[str, Any]:
    """POST each body to ``url`` with ``concurrency`` in flight (after ``warmup`` untimed ones);
    the latencies (ms), the seconds, the governor fields of the answers."""
    import httpx

    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    latencies: list[float] = []
    answers: list[dict[str, Any]] = []
    failures: list[str] = []
    async with httpx.AsyncClient(limits=limits, timeout=30.0) as client:

        async def one(body: dict[str, Any], keep: bool) -> None:
            start = time.perf_counter()
            try:
                response = await client.post(url, json=body)
            except httpx.HTTPError as exc:
                failures.append(f"{type(exc).__name__}: {exc}")
                return
            elapsed = 1000.0 * (time.perf_counter() - start)
            if response.status_code != 200:
                failures.append(f"{response.status_code}: {response.text[:200]}")
                return
            if keep:
                latencies.append(elapsed)
                answers.append(response.json().get("governor") or {})

        async def worker(queue: list[dict[str, Any]], keep: bool, deadline: float) -> None:
            while queue and time.monotonic() < deadline:
                await one(queue.pop(), keep)

        async def run(batch: list[dict[str, Any]], keep: bool) -> float:
            queue = list(reversed(batch))
            deadline = time.monotonic() + CELL_SECONDS
            start = time.perf_counter()
            await asyncio.gather(*(worker(queue, keep, deadline) for _ in range(concurrency)))
            return time.perf_counter() - start

        await run(bodies[:warmup], False)
        seconds = await run(bodies[warmup:], True)
    if failures:
        raise ConfigError(f"bench serve: {len(failures)} requests failed, first: {failures[0]}")
    return {"latencies": latencies, "seconds": seconds, "answers": answers}


def _drive_here(
    url: str, bodies: list[dict[str, Any]], concurrency: int, warmup: int
) -> dict[str, Any]:
    return asyncio.run(drive(url, bodies, concurrency, warmup=warmup))


class Driver:
    """Drives requests from a separate process (started once, reused for every cell)."""

    def __enter__(self) -> Driver:
        self._pool = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"))
        return self

    def __exit__(self, *exc: object) -> None:
        self._pool.shutdown(wait=True)

    def drive(
        self, url: str, bodies: list[dict[str, Any]], concurrency: int, *, warmup: int
    ) -> dict[str, Any]:
        """:func:`drive`, in the driver's process."""
        return self._pool.submit(_drive_here, url, bodies, concurrency, warmup).result()


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
) -> dict[str, Any]:
    """One row: direct and governed latencies at ``concurrency``, paired by percentile."""
    warmup = min(concurrency, requests)
    body = request_body(checks)
    direct = driver.drive(
        f"{stub.url}/chat/completions", [body] * (warmup + requests), concurrency, warmup=warmup
    )
    sessions = [
        {**body, "user": f"bench-{tag}-{checks}-{concurrency}-{i}"}
        for i in range(warmup + requests)
    ]
    calls_before = stub.calls
    governed = driver.drive(f"{base}/v1/chat/completions", sessions, concurrency, warmup=warmup)
    turns = warmup + requests
    answers = governed["answers"]
    accepted = [
        a
        for a in answers
        if str(a.get("kind", "")).startswith("execute") and not a.get("regenerations")
    ]
    guard_ms = [a["latency_ms"]["total"] - a["latency_ms"].get("propose", 0.0) for a in answers]
    calls = stub.calls - calls_before
    d, g = direct["latencies"], governed["latencies"]
    return {
        "checks": checks,
        "concurrency": concurrency,
        "requests": len(g),
        "direct_ms_p50": percentile(d, 0.5),
        "direct_ms_p99": percentile(d, 0.99),
        "governor_ms_p50": percentile(g, 0.5),
        "governor_ms_p99": percentile(g, 0.99),
        "added_ms_p50": percentile(g, 0.5) - percentile(d, 0.5),
        "added_ms_p99": percentile(g, 0.99) - percentile(d, 0.99),
        "guard_ms_p50": percentile(guard_ms, 0.5),
        "throughput_rps": len(g) / governed["seconds"],
        "direct_throughput_rps": len(d) / direct["seconds"],
        "upstream_calls_per_turn": calls / turns,
        "upstream_calls_per_accepted_turn": (
            statistics.fmean(a["llm"]["calls"] for a in accepted) if accepted else None
        ),
        "accepted": len(accepted) / len(answers) if answers else 0.0,
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
    result = driver.drive(f"{base}/v1/checks", bodies, concurrency, warmup=warmup)
    return len(result["latencies"]) / result["seconds"]
