"""A key's rate limit and session quota are one budget for all the workers of ``governor serve
--workers N`` (:class:`governor.serve.limits.SharedBuckets`): processes racing on the file take
exactly the burst between them, a full table gives a slot to a new key, a damaged count gives
no tokens, and a file another process holds too long refuses the request instead of waiving
the limit. Also: damaged times keep a key in its window, the file has its blocks when opened,
openers in one process take turns, a rate whose wait overflows is refused when made, and a
worker does not make a file removed while serving."""

from __future__ import annotations

import math
import multiprocessing
import os
import struct
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from fake_openai_server import API_KEY
from serve_helpers import TOOLS_POLICY
from test_serve_durability import EchoServer, free_port

from governor.errors import ConfigError
from governor.guard import Guard
from governor.serve import create_app, limits
from governor.serve.api_errors import ApiError
from governor.serve.app import Limits
from governor.serve.limits import Buckets, SharedBuckets


def taken(buckets: SharedBuckets, key: str | None, n: int) -> int:
    """How many of ``n`` takes of ``key`` were let through."""
    ok = 0
    for _ in range(n):
        try:
            buckets.take(key)
            ok += 1
        except ApiError as exc:
            assert exc.status == 429, exc
    return ok


def test_two_openers_of_one_file_spend_one_budget(tmp_path: Path) -> None:
    path = tmp_path / "requests.buckets"
    a = SharedBuckets(path, 1e-6, 5, "5 requests")
    b = SharedBuckets(path, 1e-6, 5, "5 requests")
    try:
        assert taken(a, "alice", 3) == 3
        assert taken(b, "alice", 4) == 2  # two left of alice's five, whichever opener asks
        with pytest.raises(ApiError) as err:
            a.take("alice")
        assert err.value.status == 429 and "retry in" in str(err.value)
        assert taken(b, "bob", 5) == 5 and taken(a, None, 5) == 5  # each key its own
    finally:
        a.close()
        b.close()


def test_tokens_come_back_at_the_rate(tmp_path: Path) -> None:
    buckets = SharedBuckets(tmp_path / "b", 50.0, 1, "50 a second")
    try:
        assert taken(buckets, "k", 3) == 1
        time.sleep(0.05)
        assert taken(buckets, "k", 1) == 1
    finally:
        buckets.close()


def _spend(path: str, n: int, out: Any) -> None:
    buckets = SharedBuckets(path, 1e-6, 50, "50 requests")
    out.put(taken(buckets, "same key", n))


def test_processes_racing_take_exactly_the_burst(tmp_path: Path) -> None:
    """Four processes take as fast as they can from one key's bucket of 50: 50 in all (a lost
    update between two processes would let more through)."""
    ctx = multiprocessing.get_context("fork" if sys.platform == "linux" else "spawn")
    out = ctx.Queue()
    procs = [ctx.Process(target=_spend, args=(str(tmp_path / "b"), 400, out)) for _ in range(4)]
    for p in procs:
        p.start()
    got = [out.get(timeout=60) for _ in procs]
    for p in procs:
        p.join(30)
    assert sum(got) == 50, got


def test_a_full_window_gives_the_oldest_slot_to_a_new_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(limits, "SHARED_SLOTS", limits.SHARED_PROBES)  # one window: all slots
    buckets = SharedBuckets(tmp_path / "b", 1e-6, 2, "2 requests")
    try:
        keys = [f"k{i}" for i in range(limits.SHARED_PROBES)]
        for key in keys:
            assert taken(buckets, key, 3) == 2
        assert taken(buckets, "newcomer", 3) == 2  # k0, counted longest ago, gave its slot
        # k0 starts full again (one burst more, no more), in the slot of k1, now the oldest
        assert taken(buckets, "k0", 3) == 2
        for key in ["newcomer", "k0", *keys[2:]]:  # keys that kept their slots are still spent
            assert taken(buckets, key, 1) == 0
    finally:
        buckets.close()


def test_a_damaged_count_gives_no_tokens(tmp_path: Path) -> None:
    path = tmp_path / "b"
    buckets = SharedBuckets(path, 1e-6, 3, "3 requests")
    try:
        assert taken(buckets, "k", 1) == 1
        raw = bytearray(path.read_bytes())
        slot = raw.find(struct.pack("<Q", limits._tag("k")))
        assert slot >= 0 and slot % 24 == 0
        raw[slot + 8 : slot + 16] = struct.pack("<d", math.nan)
        path.write_bytes(bytes(raw))
        assert taken(buckets, "k", 2) == 0
    finally:
        buckets.close()


def _hold_file(path: str, held: Any, release: Any) -> None:
    import fcntl

    fd = os.open(path, os.O_RDWR)
    fcntl.lockf(fd, fcntl.LOCK_EX)
    held.set()
    release.wait(20)


def test_a_file_held_too_long_refuses_the_request(tmp_path: Path) -> None:
    path = tmp_path / "b"
    buckets = SharedBuckets(path, 1e-6, 3, "3 requests")
    ctx = multiprocessing.get_context("fork" if sys.platform == "linux" else "spawn")
    held, release = ctx.Event(), ctx.Event()
    other = ctx.Process(target=_hold_file, args=(str(path), held, release))
    other.start()
    try:
        assert held.wait(30)
        start = time.monotonic()
        with pytest.raises(ApiError) as err:
            buckets.take("k")
        assert err.value.status == 503 and "rather than let past the limit" in str(err.value)
        assert time.monotonic() - start < 1.0
        release.set()
        other.join(20)
        assert taken(buckets, "k", 1) == 1  # free again once the other let go
    finally:
        release.set()
        other.join(5)
        buckets.close()


def test_two_workers_share_one_rate_limit(tmp_path: Path) -> None:
    """``governor serve --workers 2 --rate-burst 3``: requests on new connections, answered by
    both workers, get three 200s in all, then 429s."""
    port = free_port()
    upstream = EchoServer().start()
    argv = [
        sys.executable, "-m", "governor.cli", "serve", "--policy", str(TOOLS_POLICY),
        "--upstream", upstream.url, "--model", "fake-model", "--store",
        f"sqlite:{tmp_path / 's.db'}", "--port", str(port), "--workers", "2",
        "--rate-limit", "0.001", "--rate-burst", "3",
    ]  # fmt: skip
    log = tmp_path / "serve.log"
    env = {**os.environ, "OPENAI_API_KEY": API_KEY}
    try:
        with log.open("ab") as out:
            proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, env=env)
        base = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 60
            while True:  # both workers up: /health answers from each
                try:
                    up = {
                        httpx.get(f"{base}/healthz").headers["x-governor-worker"] for _ in range(8)
                    }
                    if up == {"0", "1"}:
                        break
                except httpx.TransportError:
                    pass
                assert proc.poll() is None and time.monotonic() < deadline, log.read_text()
                time.sleep(0.2)
            codes, workers = [], set()
            for i in range(12):  # a new connection each: the kernel spreads them
                body = {
                    "model": "m",
                    "messages": [{"role": "user", "content": "hi"}],
                    "metadata": {"governor_session": f"s{i}"},
                }
                r = httpx.post(f"{base}/v1/chat/completions", json=body, timeout=30)
                codes.append(r.status_code)
                workers.add(r.headers.get("x-governor-worker"))
        finally:
            proc.terminate()
            assert proc.wait(30) == 0
    finally:
        upstream.stop()
    assert workers == {"0", "1"}, workers
    assert codes.count(200) == 3 and codes.count(429) == 9, codes


def test_a_window_of_damaged_times_still_keeps_the_key_in_its_window(tmp_path: Path) -> None:
    """Every slot a key may sit in holds another key counted at a non-finite time (a damaged
    file): the key still takes a slot of its window, so its next take finds its spent bucket
    (it was written outside the window, to the last slot of the file, and every take started a
    full bucket again: no limit at all)."""
    path = tmp_path / "b"
    buckets = SharedBuckets(path, 1e-6, 2, "2 requests")
    try:
        key = next(
            k
            for k in (f"k{i}" for i in range(100))
            if limits._tag(k) % limits.SHARED_SLOTS < limits.SHARED_SLOTS - limits.SHARED_PROBES
        )
        home = limits._tag(key) % limits.SHARED_SLOTS
        for at in (math.nan, math.inf):
            for k in range(limits.SHARED_PROBES):  # other keys' tags (odd, never the key's)
                struct.pack_into("<Qdd", buckets._map, (home + k) * 24, 2 * k + 3, 1.0, at)
            assert taken(buckets, key, 4) == 2, at
            assert struct.unpack_from("<Q", buckets._map, (limits.SHARED_SLOTS - 1) * 24) == (0,)
    finally:
        buckets.close()


def test_the_file_is_given_all_its_blocks_when_opened(tmp_path: Path) -> None:
    """The file's blocks are all had when it is opened (a full disk is an error there), not at
    a take's first write to a page never written: a sparse file on a full disk, or a full
    /tmp, kills the worker (SIGBUS) in the middle of a request."""
    path = tmp_path / "b"
    buckets = SharedBuckets(path, 1e-6, 2, "2 requests")
    try:
        size = limits.SHARED_SLOTS * 24
        assert path.stat().st_size == size
        assert path.stat().st_blocks * 512 >= size, path.stat().st_blocks
    finally:
        buckets.close()


def test_a_rate_too_small_to_wait_for_is_refused_when_made(guard: Guard) -> None:
    """A rate whose wait for one token is more seconds than a float holds (a subnormal rate)
    is refused when the limit is made: it passed the check (> 0), and the take past the burst
    failed computing Retry-After (OverflowError: a 500, not a 429). A service given a rate it
    cannot keep says so as a configuration error, not a traceback."""
    with pytest.raises(ValueError, match="rate"):
        Buckets(1e-309, 1, "tiny")
    for bad in (Limits(requests_per_s=1e-309), Limits(requests_per_s=0.0)):
        with pytest.raises(ConfigError, match="requests a second"):
            create_app(guard, limits=bad)
    with pytest.raises(ConfigError, match="new sessions an hour"):
        create_app(guard, limits=Limits(sessions_per_hour=math.nan))


def test_two_openers_in_one_process_hold_the_file_in_turn(tmp_path: Path) -> None:
    """A POSIX record lock belongs to the process, not to the opener: two openers of one file in
    one process (two apps given one folder) both had it at once, and threads taking through
    them lost updates (more than the burst let through). While one holds the file, a take
    through the other waits, then is refused."""
    import threading

    path = tmp_path / "b"
    a = SharedBuckets(path, 1e-6, 3, "3 requests")
    b = SharedBuckets(path, 1e-6, 3, "3 requests")
    got: list[object] = []

    def take() -> None:
        try:
            b.take("k")
            got.append("let through")
        except ApiError as exc:
            got.append(exc.status)

    try:
        with a._held():
            thread = threading.Thread(target=take)
            thread.start()
            thread.join(10)
            assert got == [503], got  # not let through while the other opener held the file
        assert taken(b, "k", 4) == 3  # and in turn once it let go
    finally:
        a.close()
        b.close()


def test_a_worker_started_after_the_file_was_removed_refuses_to_start(
    guard: Guard, tmp_path: Path
) -> None:
    """The parent makes the folder's files before its workers start; a worker opens them, never
    makes them: one restarted after a file was removed (by hand, or by a cleaner of /tmp)
    would have counted alone, every key's budget split from the other workers' (N workers: up
    to N times the rate). It refuses to start, naming the file."""
    lim = Limits(requests_per_s=1.0, sessions_per_hour=10.0)
    with pytest.raises(ConfigError, match=r"requests\.buckets"):
        create_app(guard, limits=lim, shared_dir=tmp_path)  # (the parent made none)
    limits.make_shared_files(tmp_path)
    app = create_app(guard, limits=lim, shared_dir=tmp_path)
    app.state.service.requests.take("k")  # counted in the parent's file
    (tmp_path / "requests.buckets").unlink()
    with pytest.raises(ConfigError, match=r"requests\.buckets"):
        create_app(guard, limits=lim, shared_dir=tmp_path)
    assert not (tmp_path / "requests.buckets").exists()


def test_the_parent_keeps_the_shared_folder_fresh(tmp_path: Path) -> None:
    """A cleaner of /tmp removes what was not touched for days; the buckets are written through
    a mapping, which changes no time on tmpfs: the parent touches the folder and its files."""
    from governor.cli.serve import _keep_fresh

    limits.make_shared_files(tmp_path)
    old = time.time() - 30 * 86400
    for p in [tmp_path, *tmp_path.iterdir()]:
        os.utime(p, (old, old))
    _keep_fresh(str(tmp_path))
    for p in [tmp_path, *tmp_path.iterdir()]:
        assert p.stat().st_mtime > old + 86400 and p.stat().st_atime > old + 86400, p
    _keep_fresh(str(tmp_path / "gone"))  # a folder removed: nothing to touch, no error
