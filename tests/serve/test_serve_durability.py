"""The service as users run it (``governor serve`` in a subprocess, SQLite store, loopback only):
killed with SIGKILL mid-load and restarted on the same file, every session resumes from its last
committed decision with no half-written record; 50 sessions of 10 turns at once each get every
decision stored exactly once, with no session's messages mixed into another's. And two instances
on one PostgreSQL database (``--store postgres:DSN``) serve sessions whose turns alternate between
them, with the same guarantees."""

from __future__ import annotations

import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from fake_openai_server import API_KEY, FakeOpenAIServer, Reply
from serve_helpers import TOOLS_POLICY, text

from governor.guard import SqliteStore


class EchoServer(FakeOpenAIServer):
    """Answers each chat request with the last user message echoed, after ``delay_s``."""

    def __init__(self, delay_s: float = 0.0) -> None:
        super().__init__()
        self.delay_s = delay_s

    def answer(self, method: str, path: str, headers: dict[str, str], raw: bytes) -> Reply:
        default = super().answer(method, path, headers, raw)  # recorded there
        if not path.endswith("/chat/completions"):
            return default
        body = json.loads(raw)
        last = [m for m in body["messages"] if m["role"] == "user"][-1]["content"]
        reply = text(f"echo {last}.")
        return Reply(body=reply.body, delay_s=self.delay_s)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def service(
    db: Path | str, upstream: str, log: Path
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """``governor serve`` on ``db`` in a subprocess; yields its base URL and the process."""
    port = free_port()
    argv = [
        sys.executable, "-m", "governor.cli", "serve", "--policy", str(TOOLS_POLICY),
        "--upstream", upstream, "--model", "fake-model", "--store", db if isinstance(db, str) else f"sqlite:{db}",
        "--port", str(port),
    ]  # fmt: skip
    env = {**os.environ, "OPENAI_API_KEY": API_KEY}
    with log.open("ab") as out:
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, env=env)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"{base}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"governor serve did not start:\n{log.read_text()[-3000:]}")
            time.sleep(0.1)
        yield base, proc
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(10)


def ask(client: httpx.Client, base: str, session: str, messages: list[Any]) -> str:
    """One turn of ``session``; the reply's text (raises on any failure)."""
    body = {"model": "m", "messages": messages, "metadata": {"governor_session": session}}
    r = client.post(f"{base}/v1/chat/completions", json=body, timeout=30)
    r.raise_for_status()
    return str(r.json()["choices"][0]["message"]["content"])


def committed(db: Any, session: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The saved state and decision records of ``session``, read from the file (or store)."""
    store = SqliteStore(db) if isinstance(db, Path) else db
    state = store.load(session)
    assert state is not None, f"session {session}: nothing committed"
    return dict(state), store.records(session)


def check_consistent(db: Any, session: str) -> tuple[list[dict[str, Any]], int]:
    """A session's committed history (its messages) and step count, checked whole: one record per
    step, t = 1..T, each the echo of its own user turn, nothing of another session."""
    state, records = committed(db, session)
    messages, t = state["messages"], state["t"]
    assert [r["t"] for r in records] == list(range(1, t + 1))
    assert len(messages) == 2 * t
    for k in range(t):
        user, assistant = messages[2 * k], messages[2 * k + 1]
        assert user == {"role": "user", "content": f"{session} turn {k}"}
        assert assistant["content"] == f"echo {session} turn {k}."
        assert records[k]["kind"] == "execute"
        assert records[k]["extra"]["reply"]["content"] == assistant["content"]
    return messages, t


def test_a_killed_service_resumes_every_session_from_its_last_commit(tmp_path: Path) -> None:
    db, log = tmp_path / "sessions.sqlite3", tmp_path / "serve.log"
    upstream = EchoServer(delay_s=0.02).start()
    sessions = [f"k{i}" for i in range(6)]
    acked = {s: 0 for s in sessions}  # turns whose reply the client received
    stop = threading.Event()

    def drive(base: str, session: str) -> None:
        messages: list[Any] = []
        with httpx.Client() as client:
            for turn in range(1000):
                if stop.is_set():
                    return
                messages.append({"role": "user", "content": f"{session} turn {turn}"})
                try:
                    said = ask(client, base, session, messages)
                except httpx.HTTPError:
                    return  # the service died under this request
                messages.append({"role": "assistant", "content": said})
                acked[session] = turn + 1

    try:
        with service(db, upstream.url, log) as (base, proc):
            threads = [threading.Thread(target=drive, args=(base, s)) for s in sessions]
            for th in threads:
                th.start()
            deadline = time.monotonic() + 60
            while min(acked.values()) < 3 and time.monotonic() < deadline:
                time.sleep(0.02)
            os.kill(proc.pid, signal.SIGKILL)  # mid-load: every client has a request in flight
            proc.wait(10)
            stop.set()
            for th in threads:
                th.join(30)
        assert min(acked.values()) >= 3

        with sqlite3.connect(db) as conn:
            assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        conn.close()
        history = {}
        for s in sessions:
            messages, t = check_consistent(db, s)
            # a reply the client received was committed first; at most one more was committed
            assert acked[s] <= t <= acked[s] + 1, (s, acked[s], t)
            history[s] = messages

        with service(db, upstream.url, log) as (base, _), httpx.Client() as client:
            for s in sessions:
                t = len(history[s]) // 2
                messages = [*history[s], {"role": "user", "content": f"{s} turn {t}"}]
                assert ask(client, base, s, messages) == f"echo {s} turn {t}."
                sent = upstream.requests_to("/chat/completions")[-1].body["messages"]
                assert [m for m in sent if m["role"] != "system"] == messages  # the whole history
                bad = [*history[s][:-2], {"role": "user", "content": "another past"}]
                r = client.post(f"{base}/v1/chat/completions", json={"model": "m", "messages": bad, "metadata": {"governor_session": s}})  # fmt: skip
                assert r.status_code == 400  # a history that differs from the committed one
        for s in sessions:
            assert check_consistent(db, s)[1] == len(history[s]) // 2 + 1
    finally:
        stop.set()
        upstream.stop()


def test_fifty_sessions_of_ten_turns_at_once(tmp_path: Path) -> None:
    db, log = tmp_path / "sessions.sqlite3", tmp_path / "serve.log"
    upstream = EchoServer().start()
    sessions = [f"s{i:02d}" for i in range(50)]

    def conversation(base: str, session: str) -> list[str]:
        messages: list[Any] = []
        said = []
        with httpx.Client() as client:
            for turn in range(10):
                messages.append({"role": "user", "content": f"{session} turn {turn}"})
                content = ask(client, base, session, messages)
                said.append(content)
                messages.append({"role": "assistant", "content": content})
        return said

    try:
        with service(db, upstream.url, log) as (base, _), ThreadPoolExecutor(50) as pool:
            start = time.perf_counter()
            said = dict(zip(sessions, pool.map(lambda s: conversation(base, s), sessions), strict=True))  # fmt: skip
            seconds = time.perf_counter() - start
    finally:
        upstream.stop()
    for s in sessions:
        assert said[s] == [f"echo {s} turn {t}." for t in range(10)]
        assert check_consistent(db, s)[1] == 10
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT count(*) FROM decisions").fetchone()[0] == 500
        assert conn.execute("SELECT count(DISTINCT session || ':' || t) FROM decisions").fetchone()[0] == 500  # fmt: skip
    conn.close()
    assert seconds < 120


@pytest.mark.postgres
def test_two_instances_on_one_postgres_database_serve_sessions_in_turn(
    postgres_dsn: str, tmp_path: Path
) -> None:
    from governor.guard.stores.postgres import PostgresStore

    upstream = EchoServer().start()
    sessions = [f"p{i:02d}" for i in range(20)]
    spec, log = f"postgres:{postgres_dsn}", tmp_path / "serve.log"

    def conversation(bases: list[str], session: str) -> list[str]:
        messages: list[Any] = []
        said = []
        with httpx.Client() as client:
            for turn in range(6):  # turn k through instance k % 2
                messages.append({"role": "user", "content": f"{session} turn {turn}"})
                content = ask(client, bases[turn % 2], session, messages)
                said.append(content)
                messages.append({"role": "assistant", "content": content})
        return said

    try:
        with (
            service(spec, upstream.url, log) as (a, _),
            service(spec, upstream.url, log) as (b, _),
            ThreadPoolExecutor(20) as pool,
        ):
            said = dict(zip(sessions, pool.map(lambda s: conversation([a, b], s), sessions), strict=True))  # fmt: skip
    finally:
        upstream.stop()
    store = PostgresStore(postgres_dsn)
    for s in sessions:
        assert said[s] == [f"echo {s} turn {t}." for t in range(6)]
        assert check_consistent(store, s)[1] == 6
