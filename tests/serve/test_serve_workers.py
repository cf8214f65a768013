"""``governor serve --workers N``: N processes on one port and one SQLite file. A session's
turns, each on a new connection, are answered by both workers in turn and continue one history
(every decision stored once, in order), and a scrape of ``/metrics`` on either counts every
worker's decisions, never fewer than the scrape before; a session's lock holds across processes;
the memory store is refused."""

from __future__ import annotations

import multiprocessing
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from fake_openai_server import API_KEY
from serve_helpers import TOOLS_POLICY
from test_serve_durability import EchoServer, check_consistent, free_port

from governor.cli import main
from governor.guard import SqliteStore
from governor.guard.stores import StoreError


def test_two_workers_serve_one_session_in_turn(tmp_path: Path) -> None:
    db, log, port = tmp_path / "s.db", tmp_path / "serve.log", free_port()
    argv = [
        sys.executable, "-m", "governor.cli", "serve", "--policy", str(TOOLS_POLICY),
        "--upstream", "", "--model", "fake-model", "--store", f"sqlite:{db}",
        "--port", str(port), "--workers", "2",
    ]  # fmt: skip
    upstream = EchoServer().start()
    try:
        argv[argv.index("--upstream") + 1] = upstream.url
        env = {**os.environ, "OPENAI_API_KEY": API_KEY}
        with log.open("ab") as out:
            proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, env=env)
        base = f"http://127.0.0.1:{port}"
        try:
            seen: list[str] = []
            messages: list[dict[str, Any]] = []
            deadline = time.monotonic() + 60
            while len(seen) < 40 and (len(set(seen)) < 2 or len(seen) < 4):
                turn = {"role": "user", "content": f"s turn {len(seen)}"}
                body = {
                    "model": "m",
                    "messages": [*messages, turn],
                    "metadata": {"governor_session": "s"},
                }
                try:  # a new connection each turn: the kernel hands it to either worker
                    r = httpx.post(f"{base}/v1/chat/completions", json=body, timeout=30)
                except httpx.TransportError:
                    assert proc.poll() is None and time.monotonic() < deadline, log.read_text()
                    time.sleep(0.1)
                    continue
                assert r.status_code == 200, r.text
                seen.append(r.headers["x-governor-worker"])
                messages += [turn, r.json()["choices"][0]["message"]]
            scraped = _scrapes(f"{base}/metrics", len(seen))
        finally:
            proc.terminate()
            assert proc.wait(30) == 0
    finally:
        upstream.stop()
    assert set(seen) == {"0", "1"}, f"answered by workers {seen}"
    history, t = check_consistent(db, "s")
    assert t == len(seen) and len(history) == 2 * t
    totals = [total for _, total, _ in scraped]
    assert totals == sorted(totals) and totals[-4:] == [len(seen)] * 4, scraped
    assert {reporting for _, _, reporting in scraped} == {2}, scraped


def _scrapes(url: str, decisions: int) -> list[tuple[str, int, int]]:
    """Scrapes of ``url`` on new connections (worker, decisions counted, workers reporting)
    until the decisions are all counted (the other worker's written every second), then 3 more."""
    scraped: list[tuple[str, int, int]] = []
    deadline = time.monotonic() + 10
    while not scraped or scraped[-1][1] != decisions:
        assert time.monotonic() < deadline, scraped
        if scraped:
            time.sleep(0.1)
        scraped.append(_scrape(url))
    return scraped + [_scrape(url) for _ in range(3)]


def _scrape(url: str) -> tuple[str, int, int]:
    r = httpx.get(url, timeout=10)
    assert r.status_code == 200, r.text
    total = sum(int(n) for n in re.findall(r"^governor_decisions_total\{.*\} (\d+)$", r.text, re.M))
    reporting = re.findall(r"^governor_workers_reporting (\d+)$", r.text, re.M)
    return r.headers["x-governor-worker"], total, int(reporting[0])


def _hold(path: str, held: Any, release: Any) -> None:
    store = SqliteStore(path, shared=True)
    with store.locked("s"):
        held.set()
        release.wait(20)


def test_a_sessions_lock_holds_across_processes(tmp_path: Path) -> None:
    db = str(tmp_path / "s.db")
    ctx = multiprocessing.get_context("spawn")
    held, release = ctx.Event(), ctx.Event()
    other = ctx.Process(target=_hold, args=(db, held, release))
    other.start()
    try:
        assert held.wait(30)
        store = SqliteStore(db, shared=True, lock_timeout_s=0.2)
        with pytest.raises(StoreError, match=r"expected its lock within 0\.2 s"), store.locked("s"):
            pass
        with store.locked("another session"):  # other sessions do not wait
            pass
        release.set()
        other.join(20)
        with store.locked("s"):  # free once the other process let go
            pass
    finally:
        release.set()
        other.join(5)
        if other.is_alive():
            other.kill()


def test_a_removed_or_replaced_lock_file_fails_closed(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    store = SqliteStore(db, shared=True, lock_timeout_s=0.2)
    with store.locked("s"):
        pass
    lock_file = Path(f"{db}.locks")
    lock_file.unlink()  # a cleaner removed it: another process would open a new one
    with pytest.raises(StoreError, match="removed or replaced"), store.locked("s"):
        pass
    fresh = SqliteStore(db, shared=True, lock_timeout_s=0.2)  # (a restarted worker)
    with fresh.locked("s"):  # opened the new file: its locks are the ones that count
        pass
    with pytest.raises(StoreError, match="removed or replaced"), store.locked("s"):
        pass


def test_workers_refuse_the_memory_store(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "--store", "memory", "--workers", "2"]) == 2
    err = capsys.readouterr().err
    assert "--workers 2: expected a store the processes share" in err and "found memory" in err
