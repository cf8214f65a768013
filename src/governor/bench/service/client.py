"""The load generator of `governor bench serve`: a lean HTTP/1.1 client over asyncio streams.

Each worker keeps one kept-alive connection to 127.0.0.1 and sends the next body as soon as the
previous answer is read; the request bytes are encoded before the clock starts, and an answer's
JSON is read only when its ``governor`` field is wanted. A general-purpose client (httpx) spends
about a millisecond of CPU per request, which on a small machine made the load generator, not
the service, the limit near 600 requests per second. Answers must carry a ``Content-Length``
(every JSON answer of the service and the stub does). Imports nothing of governor.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

MAX_ANSWER_BYTES = 16 * 2**20
"""The largest answer body read."""


def encoded(url: str, body: dict[str, Any]) -> bytes:
    """The bytes of a ``POST url`` with ``body`` as JSON (HTTP/1.1, kept alive)."""
    parts = urlsplit(url)
    payload = json.dumps(body).encode("utf-8")
    head = (
        f"POST {parts.path or '/'} HTTP/1.1\r\nHost: {parts.netloc}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(payload)}\r\n\r\n"
    )
    return head.encode("latin-1") + payload


async def answer(reader: asyncio.StreamReader) -> tuple[int, bytes]:
    """The status and body of the next answer on ``reader``."""
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split(" ", 2)[1])
    length = None
    for line in lines[1:]:
        name, _, value = line.partition(":")
        if name.strip().lower() == "content-length":
            length = int(value.strip())
    if length is None or not 0 <= length <= MAX_ANSWER_BYTES:
        raise ValueError(f"expected an answer with a Content-Length, found {lines[:4]!r}")
    return status, await reader.readexactly(length)


@dataclass
class Run:
    """What one timed batch gave: latencies (ms), governor fields, failures, seconds."""

    latencies: list[float] = field(default_factory=list)
    answers: list[dict[str, Any]] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    seconds: float = 0.0


async def run_batch(
    url: str,
    requests: list[bytes],
    concurrency: int,
    *,
    keep: bool,
    read_answers: bool,
    deadline_s: float,
) -> Run:
    """Send ``requests`` with ``concurrency`` in flight, one connection per worker; stop early
    past ``deadline_s``. ``keep``: record latencies (and, with ``read_answers``, the answers'
    ``governor`` fields)."""
    parts = urlsplit(url)
    host, port = parts.hostname or "127.0.0.1", parts.port or 80
    out = Run()
    queue = list(reversed(requests))
    deadline = time.monotonic() + deadline_s

    async def worker() -> None:
        if not queue:
            return
        reader, writer = await asyncio.open_connection(host, port)
        try:
            while queue and time.monotonic() < deadline:
                data = queue.pop()
                start = time.perf_counter()
                writer.write(data)
                status, raw = await answer(reader)
                elapsed = 1000.0 * (time.perf_counter() - start)
                if status != 200:
                    out.failures.append(f"{status}: {raw[:200].decode('utf-8', 'replace')}")
                    continue
                if keep:
                    out.latencies.append(elapsed)
                    if read_answers:
                        out.answers.append(json.loads(raw).get("governor") or {})
        except (OSError, asyncio.IncompleteReadError, ValueError) as exc:
            out.failures.append(f"{type(exc).__name__}: {exc}")
        finally:
            writer.close()

    start = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    out.seconds = time.perf_counter() - start
    return out
