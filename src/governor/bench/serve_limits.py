"""`governor bench serve-limits`: what one long request, one long session and many idle sessions
cost the guard service.

Three measurements, each in a fresh process of its own, against the upstream stub of `governor bench serve` (:mod:`.service.stub`, a process of
its own, answering at once) and the ``ltl`` check set (ten LTL rules over tool calls):

- **one request of N short messages** (user and assistant text in turn, a new session), sent to
  the service (:func:`governor.serve.create_app` under uvicorn on a loopback port) by an HTTP
  client in the same process: the request's wall time and the CPU time of the process (the
  service's threads and the client's; on a shared machine the steadier figure), then the peak of the memory Python
  allocates while the same request is answered again on another new session (``tracemalloc``,
  which slows it: that request is not timed; the client's part is small) (about 36 bytes a message: 26,000 fit in the 1 MB body limit);
- **a check at step k of one session**, per check family (``--families``: the ten LTL rules over
  a tool call, the small-talk overlays over a text reply, the checks of calls as calls) and per
  store (``--stores`` memory and SQLite, and PostgreSQL at ``--postgres DSN``): a session driven
  through the guard's facade with check-and-commit calls of the same candidate (no messages
  sent: the session's own history), the time of a check plus a commit at steps 10 to 29 and at
  steps ``--steps`` to ``--steps`` + 19 (medians), and their ratio;
- **idle sessions**: ``--sessions`` sessions made through the guard's facade, one committed
  action each, kept in SQLite; the memory Python still holds for them once they are all idle
  (``tracemalloc``).

Figures vary with the machine; the ratio is the point of the second row. A layer above the
runtime: imports the runtime and the bench's stub only.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import gc
import statistics
import tempfile
import time
import tracemalloc
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path
from typing import Any

from rich.console import Console

from governor.config import check_range, option
from governor.errors import ConfigError, expected
from governor.files import write_json
from governor.flags import Subcommands, add_dataclass_args, dataclass_from_args

CANDIDATE = {
    "role": "assistant",
    "content": None,
    "tool_calls": [
        {
            "id": "call_0",
            "type": "function",
            "function": {"name": "search", "arguments": '{"query": "lake trails", "page": 1}'},
        }
    ],
}
"""What each step of the long session commits: a tool call (the client ran it)."""
TEXT = {"role": "assistant", "content": "That sounds lovely. What did you like most about it?"}
"""What each step commits under the overlays: a text reply."""
FAMILIES = ("ltl", "overlays", "tools")
"""The check families of the step rows: the ten LTL rules over tool calls, the small-talk
overlays over text, the checks of calls as calls (tools offered, calls that run alone)."""


@dataclasses.dataclass(frozen=True)
class ServeLimitsConfig:
    """What `governor bench serve-limits` runs."""

    sizes: str = option("1000,4000,16000,26000", "comma-separated message counts of a request")
    steps: int = option(1000, "the late step of the session whose check is timed")
    sessions: int = option(10_000, "idle sessions whose memory is measured")
    max_messages: int = option(
        30_000, "the service's message limits while measuring (above every size: all are served)"
    )
    families: str = option(
        "ltl,overlays,tools",
        "comma-separated check families of the step rows (ltl, overlays, tools)",
    )
    stores: str = option(
        "memory,sqlite", "comma-separated stores of the step rows (memory, sqlite)"
    )
    postgres: str = option("", "a PostgreSQL DSN: the step rows measure a postgres store there too")

    def __post_init__(self) -> None:
        check_range("steps", self.steps, 20, 100_000)
        check_range("sessions", self.sessions, 1, 1_000_000)
        for size in self.size_list():
            check_range("size", size, 1, 1_000_000)

        for family in self.family_list():
            if family not in FAMILIES:
                raise ConfigError(f"--families: {expected(' or '.join(FAMILIES), family)}")
        for store in self.stores.split(","):
            if store.strip() and store.strip() not in ("memory", "sqlite"):
                raise ConfigError(f"--stores: {expected('memory or sqlite', store)}")

    def size_list(self) -> list[int]:
        return [int(s) for s in self.sizes.split(",") if s.strip()]

    def family_list(self) -> list[str]:
        return [f.strip() for f in self.families.split(",") if f.strip()]

    def store_list(self) -> list[str]:
        """The stores of the step rows: ``memory``, ``sqlite``, ``postgres:DSN``."""
        named = [s.strip() for s in self.stores.split(",") if s.strip()]
        return named + ([f"postgres:{self.postgres}"] if self.postgres else [])


def _guard(url: str, tmp: str, max_messages: int) -> Any:
    import inspect

    from governor.bench.service.workload import bench_policy
    from governor.guard import Guard, SqliteStore

    store = SqliteStore(Path(tmp) / "sessions.sqlite3")
    options: dict[str, Any] = {"max_session_messages": max_messages}
    params = inspect.signature(Guard).parameters
    return Guard(
        bench_policy("ltl", url),
        _backend(url),
        store=store,
        **{k: v for k, v in options.items() if k in params},
    )


def _backend(url: str) -> Any:
    from governor.backends import backend_from_config
    from governor.bench.service.workload import bench_policy

    return backend_from_config(bench_policy("ltl", url).upstream.backend_config())


def _app(guard: Any, max_messages: int) -> Any:
    import inspect

    from governor.serve import create_app

    params = inspect.signature(create_app).parameters
    if "limits" not in params:  # the code before the service had limits
        return create_app(guard)
    from governor.serve.app import Limits

    return create_app(guard, limits=Limits(max_request_messages=max_messages))


def _messages(n: int) -> list[dict[str, str]]:
    roles = ("user", "assistant")
    return [{"role": roles[i % 2], "content": f"m{i}"} for i in range(n - 1)] + [
        {"role": "user", "content": "and now?"}
    ]


def one_request(url: str, size: int, max_messages: int) -> dict[str, Any]:
    """One chat request of ``size`` messages on a new session: seconds, status, peak MB added."""
    import httpx

    from governor.serve.local import serving

    with tempfile.TemporaryDirectory(prefix="governor-limits-") as tmp:
        guard = _guard(url, tmp, max_messages)
        with serving(_app(guard, max_messages)) as base, httpx.Client(timeout=600) as client:
            warm = {
                "model": "m",
                "metadata": {"governor_session": "warm"},
                "messages": _messages(3),
            }
            client.post(f"{base}/v1/chat/completions", json=warm).raise_for_status()
            body = {
                "model": "m",
                "metadata": {"governor_session": "long"},
                "messages": _messages(size),
            }
            payload = httpx.Request("POST", "http://x", json=body).read()  # encoded before
            start, cpu = time.perf_counter(), time.process_time()
            answer = client.post(
                f"{base}/v1/chat/completions",
                content=payload,
                headers={"content-type": "application/json"},
            )
            seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
            # the same request on another new session, its allocations traced (slower: untimed)
            traced = httpx.Request(
                "POST", "http://x", json={**body, "metadata": {"governor_session": "traced"}}
            ).read()
            tracemalloc.start()
            client.post(
                f"{base}/v1/chat/completions",
                content=traced,
                headers={"content-type": "application/json"},
            )
            added = tracemalloc.get_traced_memory()[1] / 1e6
            tracemalloc.stop()
        guard.close()
    return {
        "messages": size,
        "body_kb": len(payload) / 1000,
        "status": answer.status_code,
        "seconds": seconds,
        "cpu_seconds": cpu,
        "peak_mb_added": added,
    }


def _family_guard(url: str, family: str, store: Any) -> Any:
    """A guard of the check family ``family`` in front of the stub, with ``store``."""
    from governor.bench.service.workload import TOOL_NAMES, bench_policy
    from governor.guard import Guard, policy_from_mapping

    policy = bench_policy("overlays" if family == "overlays" else "ltl", url)
    if family == "tools":
        tools = {"offered": list(TOOL_NAMES), "not_in_parallel": ["transfer_funds"]}
        policy = dataclasses.replace(
            policy, ltl=(), tools=policy_from_mapping({"tools": tools}).tools
        )
    return Guard(policy, _backend(url), store=store, max_session_messages=1_000_000)


def _store(spec: str, tmp: str) -> Any:
    from governor.guard.stores import store_from

    return store_from(f"sqlite:{Path(tmp) / 'sessions.sqlite3'}" if spec == "sqlite" else spec)


def session_steps(
    url: str, steps: int, family: str = "ltl", store: str = "sqlite"
) -> dict[str, Any]:
    """A check plus a commit timed around step 10 and around step ``steps`` of one session of
    the check family ``family`` kept in ``store`` (``memory``, ``sqlite``, ``postgres:DSN``)."""
    candidate = TEXT if family == "overlays" else CANDIDATE

    async def drive(guard: Any) -> dict[int, list[float]]:
        session = guard.session(f"long-session-{time.time_ns()}")
        times: dict[int, list[float]] = {10: [], steps: []}
        for t in range(steps + 20):
            start = time.perf_counter()
            await session.check(candidate)
            await session.commit(candidate)
            took = time.perf_counter() - start
            if 10 <= t < 30:
                times[10].append(took)
            elif steps <= t < steps + 20:
                times[steps].append(took)
        return times

    with tempfile.TemporaryDirectory(prefix="governor-limits-") as tmp:
        guard = _family_guard(url, family, _store(store, tmp))
        times = asyncio.run(drive(guard))
        guard.close()
    early, late = statistics.median(times[10]) * 1000, statistics.median(times[steps]) * 1000
    shown = "postgres" if store.startswith("postgres:") else store  # never the DSN
    return {
        "family": family,
        "store": shown,
        "steps": steps,
        "step10_ms": early,
        "late_ms": late,
        "ratio": late / early,
    }


def idle_sessions(url: str, count: int) -> dict[str, Any]:
    """``count`` sessions, one commit each, then idle: the peak MB they added."""

    async def make(guard: Any) -> None:
        for i in range(count):
            await guard.session(f"idle-{i}").commit(CANDIDATE)

    with tempfile.TemporaryDirectory(prefix="governor-limits-") as tmp:
        guard = _guard(url, tmp, 1000)
        asyncio.run(guard.session("warm").commit(CANDIDATE))
        gc.collect()
        tracemalloc.start()
        start = time.perf_counter()
        asyncio.run(make(guard))
        seconds = time.perf_counter() - start
        gc.collect()
        added = tracemalloc.get_traced_memory()[0] / 1e6  # what the idle sessions still hold
        tracemalloc.stop()
        guard.close()
    return {"sessions": count, "seconds": seconds, "peak_mb_added": added}


def _in_fresh_process(fn: Any, *args: Any) -> dict[str, Any]:
    with ProcessPoolExecutor(1, mp_context=get_context("spawn"), max_tasks_per_child=1) as pool:
        result: dict[str, Any] = pool.submit(fn, *args).result()
        return result


def run(cfg: ServeLimitsConfig) -> dict[str, Any]:
    """``{"config", "requests": [...], "sessions": [...], "idle": {...}}``."""
    from governor.bench.service.stub import Stub

    with Stub(latency_s=0.0) as stub:
        url = stub.url
        requests = [
            _in_fresh_process(one_request, url, size, cfg.max_messages) for size in cfg.size_list()
        ]
        sessions = [
            _in_fresh_process(session_steps, url, cfg.steps, family, store)
            for family in cfg.family_list()
            for store in cfg.store_list()
        ]
        idle = _in_fresh_process(idle_sessions, url, cfg.sessions)
    config = dataclasses.asdict(cfg)
    config["postgres"] = bool(cfg.postgres)  # never the DSN
    return {"config": config, "requests": requests, "sessions": sessions, "idle": idle}


def add_parser(bench: Subcommands) -> None:
    """`governor bench serve-limits`."""
    p = bench.add_parser(
        "serve-limits",
        help="time and memory of long requests, a long session and many idle sessions",
    )
    add_dataclass_args(p, ServeLimitsConfig)
    p.add_argument("--json", type=Path, help="write the results here")
    p.set_defaults(handler=run_command)


def run_command(args: argparse.Namespace, console: Console) -> int:
    from governor.report import print_table

    result = run(dataclass_from_args(ServeLimitsConfig, args))
    rows = [
        ["messages", "body (KB)", "status", "time (s)", "CPU (s)", "peak memory allocated (MB)"]
    ]
    rows += [
        [
            str(r["messages"]),
            f"{r['body_kb']:.0f}",
            str(r["status"]),
            f"{r['seconds']:.2f}",
            f"{r['cpu_seconds']:.2f}",
            f"{r['peak_mb_added']:.0f}",
        ]
        for r in result["requests"]
    ]
    print_table(console, "One request of N short messages (a new session)", rows)
    steps = result["config"]["steps"]
    rows = [["checks", "store", "at step 10 (ms)", f"at step {steps} (ms)", "ratio"]]
    rows += [
        [
            s["family"],
            s["store"],
            f"{s['step10_ms']:.2f}",
            f"{s['late_ms']:.2f}",
            f"{s['ratio']:.2f}",
        ]
        for s in result["sessions"]
    ]
    print_table(console, "A check plus a commit within one session", rows)
    i = result["idle"]
    print_table(
        console,
        "Idle sessions (SQLite store)",
        [
            ["sessions", "time to make (s)", "memory they hold (MB)"],
            [str(i["sessions"]), f"{i['seconds']:.1f}", f"{i['peak_mb_added']:.0f}"],
        ],
    )
    if args.json is not None:
        write_json(args.json, result)
    return 0
