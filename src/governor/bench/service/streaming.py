"""The streaming row of `governor bench serve`: time to first token, direct and through governor.

The stub streams its fixed text one word per ``token_ms`` after its latency
(:mod:`.stub`); the same streamed request goes straight to the stub and through
``governor serve`` (each governed one a new session), from the bench's driver process, with
``concurrency`` in flight. Per request: the time to the first event that carries text (the
upstream's first token; governor's first released token) and to the end of the stream. Per
check set: ``prefix`` (the ten LTL rules and two overlays on growing features, markup and length,
all judged on every prefix: text is released as it passes) and ``overlays`` (the shipped
small-talk overlays, which judge only a whole reply: nothing is released before the end). Each
row: p50 and p99 of both first-token times, the p50 of both whole-reply times, and their ratios.
Imports the bench's setup, its driver's statistics and the guard's policy reader.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Iterator
from typing import Any

from governor.bench.service.driver import Driver, percentile
from governor.bench.service.stub import Stub
from governor.bench.service.workload import CELL_SECONDS, PROPOSITIONS, RULES, USER_TEXT
from governor.guard import Guard, GuardPolicy, SessionStore, policy_from_mapping

STREAM_SETS = ("prefix", "overlays")
GROWING = [
    {"name": "no_markup", "feature": "markup", "bounds": {"max": 0}, "epsilon": 0,
     "kind": "prohibitory"},
    {"name": "short_enough", "feature": "word_count", "bounds": {"max": 120}, "epsilon": 0,
     "kind": "prohibitory"},
]  # fmt: skip


def stream_policy(
    checks: str, upstream_url: str, folder: str, chunk_tokens: int | None = None
) -> GuardPolicy:
    """The policy of a streaming check set in front of the stub (see the module doc);
    ``chunk_tokens`` None: the policy's default."""
    from pathlib import Path

    import yaml

    from governor.serve.served_policy import SMALLTALK

    data: dict[str, Any] = {
        "upstream": {**SMALLTALK["upstream"], "base_url": upstream_url, "model": "stub",
                     "api_key_env": None, "max_retries": 0, "timeout_s": 30},
        "observer": {"n_candidates": 1, "max_regenerations": 1, "time_budget_s": 30},
        "fallbacks": {"default": "Oh nice. How about you?"},
        "stream": {} if chunk_tokens is None else {"chunk_tokens": chunk_tokens},
    }  # fmt: skip
    if checks == "overlays":
        data |= {"overlays": "smalltalk", "checks": {"assistant": ["overlays"]}}
    else:
        (Path(folder) / "growing.yaml").write_text(yaml.safe_dump({"overlays": GROWING}))
        data |= {
            "overlays": "growing.yaml",
            "propositions": PROPOSITIONS,
            "ltl": [{"name": n, "formula": f, "verified": True} for n, f in RULES],
            "checks": {"assistant": ["overlays", "ltl"], "tool_calls": ["ltl"]},
        }
    return policy_from_mapping(data, source=f"<bench serve stream: {checks}>", base_dir=folder)


def stream_body(session: str | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"model": "stub", "stream": True}
    body["messages"] = [{"role": "user", "content": USER_TEXT}]
    return body if session is None else {**body, "metadata": {"governor_session": session}}


async def _timed(client: Any, url: str, body: dict[str, Any]) -> tuple[float, float, str]:
    """(ms to the first text, ms to the end, the text) of one streamed request."""
    start, first, text = time.perf_counter(), None, []
    async with client.stream("POST", url, json=body) as response:
        if response.status_code != 200:
            await response.aread()
            raise RuntimeError(f"{url}: HTTP {response.status_code}: {response.text[:200]}")
        async for line in response.aiter_lines():
            data = line.removeprefix("data:").strip()
            if not line.startswith("data:") or data == "[DONE]":
                continue
            for choice in json.loads(data).get("choices") or ():
                piece = (choice.get("delta") or {}).get("content")
                if piece:
                    first = first or time.perf_counter()
                    text.append(piece)
    end = time.perf_counter()
    return 1000.0 * ((first or end) - start), 1000.0 * (end - start), "".join(text)


async def _drive(url: str, bodies: list[dict[str, Any]], concurrency: int) -> list[Any]:
    import httpx

    out: list[Any] = []
    queue = list(reversed(bodies))
    deadline = time.monotonic() + CELL_SECONDS
    limits = httpx.Limits(max_connections=concurrency)
    async with httpx.AsyncClient(timeout=60, limits=limits) as client:

        async def worker() -> None:
            while queue and time.monotonic() < deadline:
                out.append(await _timed(client, url, queue.pop()))

        await asyncio.gather(*(worker() for _ in range(concurrency)))
    return out


def drive_streams(url: str, bodies: list[dict[str, Any]], concurrency: int) -> list[Any]:
    """Each body streamed from ``url`` with ``concurrency`` in flight: (first ms, end ms, text)
    per request (run in the driver's process)."""
    return asyncio.run(_drive(url, bodies, concurrency))


def _timed_streams(
    driver: Driver, url: str, bodies: list[dict[str, Any]], concurrency: int, warmup: int
) -> list[Any]:
    """:func:`drive_streams` in the driver's process, the first ``warmup`` requests untimed."""
    driver.call(drive_streams, url, bodies[:warmup], concurrency)
    return driver.call(drive_streams, url, bodies[warmup:], concurrency)


def stream_row(
    checks: str, concurrency: int, direct: list[Any], governed: list[Any]
) -> dict[str, Any]:
    """One row from the timed requests (see the module doc)."""

    def at(rows: list[Any], i: int, q: float) -> float:
        return percentile([r[i] for r in rows], q)

    up_first, gov_first = at(direct, 0, 0.5), at(governed, 0, 0.5)
    up_whole, gov_whole = at(direct, 1, 0.5), at(governed, 1, 0.5)
    return {
        "checks": checks,
        "concurrency": concurrency,
        "requests": len(governed),
        "upstream_ttft_ms_p50": up_first,
        "upstream_ttft_ms_p99": at(direct, 0, 0.99),
        "governor_ttft_ms_p50": gov_first,
        "governor_ttft_ms_p99": at(governed, 0, 0.99),
        "upstream_whole_ms_p50": up_whole,
        "governor_whole_ms_p50": gov_whole,
        "ttft_ratio_p50": gov_first / up_first if up_first else None,
        "whole_ratio_p50": gov_whole / up_whole if up_whole else None,
        "same_text": all(g[2] == direct[0][2] for g in governed),
    }


def stream_rows(
    checks: str,
    setup: tuple[Driver, Stub, SessionStore, str, str],
    requests: int,
    levels: list[int],
    close: Callable[[Guard], None],
    chunk_tokens: int | None = None,
) -> list[dict[str, Any]]:
    """The rows of one streaming check set: ``setup`` is the driver, the stub, the session
    store, a scratch folder and the run's tag; ``requests`` timed streams per level."""
    from governor.serve import create_app
    from governor.serve.local import serving

    driver, stub, store, folder, tag = setup
    policy = stream_policy(checks, stub.url, folder, chunk_tokens)
    guard = Guard.from_policy(policy, store=store)
    rows = []
    try:
        with serving(create_app(guard)) as base:
            for c in levels:
                warmup = min(c, requests)
                n = warmup + requests
                direct_url = f"{stub.url}/chat/completions"
                direct = _timed_streams(driver, direct_url, [stream_body()] * n, c, warmup)
                bodies = [stream_body(f"stream-{tag}-{checks}-{c}-{i}") for i in range(n)]
                url = f"{base}/v1/chat/completions"
                governed = _timed_streams(driver, url, bodies, c, warmup)
                rows.append(stream_row(checks, c, direct, governed))
    finally:
        close(guard)
    return rows


def stream_lines(result: dict[str, Any]) -> Iterator[list[str]]:
    """Header and one row per streaming check set and concurrency."""
    yield ["checks", "in flight", "upstream TTFT p50/p99", "governor TTFT p50/p99", "whole ratio"]
    for r in result["stream"]["rows"]:
        yield [
            r["checks"],
            str(r["concurrency"]),
            f"{r['upstream_ttft_ms_p50']:.0f} / {r['upstream_ttft_ms_p99']:.0f} ms",
            f"{r['governor_ttft_ms_p50']:.0f} / {r['governor_ttft_ms_p99']:.0f} ms",
            f"{r['whole_ratio_p50']:.2f}",
        ]


def plot_stream(ax: Any, result: dict[str, Any]) -> None:
    """Time to first token (p50) straight from the stub and through governor, per streaming
    set and concurrency, on ``ax``."""
    rows = result.get("stream", {}).get("rows", [])
    at = list(range(len(rows)))
    ups = [r["upstream_ttft_ms_p50"] for r in rows]
    ax.bar([x - 0.2 for x in at], ups, 0.4, label="upstream")
    ax.bar([x + 0.2 for x in at], [r["governor_ttft_ms_p50"] for r in rows], 0.4, label="governor")
    ax.set_xticks(at, [f"{r['checks']}\n{r['concurrency']} in flight" for r in rows], fontsize=8)
    ax.set_ylabel("time to first token, p50 (ms)")
    token = result.get("stream", {}).get("token_ms", 0)
    ax.set_title(f"streaming, a word every {token:g} ms")
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize=8)
