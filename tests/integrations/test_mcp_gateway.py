"""The MCP gateway, driven by the ``mcp`` SDK's own client, in front of a real stdio MCP server
(``refund_server.py``, FastMCP) that writes down every call it receives.

Over stdio the gateway is ``governor mcp`` itself, started as the client's server; over
streamable HTTP it is ``governor mcp --http``; in-process (one event loop) it is the
:class:`Gateway` on the SDK's memory streams, to check sessions kept in a store and a failing
store. The policy is ``examples/policies/refunds.yaml``.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx
import mcp.types as types
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.memory import create_connected_server_and_client_session

from governor.cli import main
from governor.guard import MemoryStore, SqliteStore, StoreError
from governor.integrations.mcp_gateway import UpstreamServer, gateway_to
from governor.integrations.tool_judge import judging_guard

ROOT = Path(__file__).resolve().parents[2]
POLICY = ROOT / "examples" / "policies" / "refunds.yaml"
SERVER = Path(__file__).resolve().parent / "refund_server.py"


def env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT / "src")}


def seen(calls: Path) -> list[dict[str, Any]]:
    """The calls that reached the server."""
    if not calls.exists():
        return []
    return [json.loads(line) for line in calls.read_text().splitlines()]


def text(result: types.CallToolResult) -> str:
    return " ".join(b.text for b in result.content if isinstance(b, types.TextContent))


def governor_meta(result: types.CallToolResult) -> dict[str, Any]:
    return (result.meta or {})["governor"]


async def the_refund_story(client: ClientSession, calls: Path) -> None:
    """A forbidden refund is refused naming its rule; after verify_identity, a refund goes
    through; one over the cap and a hidden tool are refused; only the allowed calls reached the
    server."""
    listed = await client.list_tools()
    assert sorted(t.name for t in listed.tools) == ["lookup_order", "refund", "verify_identity"]

    first = await client.call_tool("refund", {"customer": "alice", "amount": 20})
    assert first.isError
    assert "verify_before_refund" in text(first)
    assert governor_meta(first)["rules"] == ["verify_before_refund"]
    assert seen(calls) == []

    ok = await client.call_tool("verify_identity", {"customer": "alice"})
    assert not ok.isError and text(ok) == "alice is verified"
    assert governor_meta(ok)["allowed"] is True
    paid = await client.call_tool("refund", {"customer": "alice", "amount": 20})
    assert not paid.isError and text(paid) == "refunded 20.0 to alice"

    big = await client.call_tool("refund", {"customer": "alice", "amount": 900})
    assert big.isError and "refund_cap" in text(big)
    hidden = await client.call_tool("delete_account", {"customer": "alice"})
    assert hidden.isError and governor_meta(hidden)["rules"] == ["tools"]

    assert seen(calls) == [
        {"tool": "verify_identity", "args": {"customer": "alice"}},
        {"tool": "refund", "args": {"customer": "alice", "amount": 20.0}},
    ]


@pytest.mark.slow  # starts processes: the server, or the gateway and the server
def test_the_cli_gateway_over_stdio_refuses_a_forbidden_call_before_the_server(
    tmp_path: Path,
) -> None:
    calls = tmp_path / "calls.jsonl"
    command = [sys.executable, "-m", "governor.cli", "mcp", "--policy", str(POLICY), "--"]
    command += [sys.executable, str(SERVER), str(calls)]
    params = StdioServerParameters(command=command[0], args=command[1:], env=env())

    async def main() -> None:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
            init = await client.initialize()
            assert init.serverInfo.name == "governor gateway to refund-desk"
            await the_refund_story(client, calls)

    asyncio.run(main())


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.slow  # starts processes: the server, or the gateway and the server
def test_the_http_gateway_keeps_one_governor_session_per_mcp_session(tmp_path: Path) -> None:
    calls, port = tmp_path / "calls.jsonl", free_port()
    command = [sys.executable, "-m", "governor.cli", "mcp", "--policy", str(POLICY)]
    command += ["--http", f"127.0.0.1:{port}", "--", sys.executable, str(SERVER), str(calls)]
    log = tmp_path / "gateway.log"
    url = f"http://127.0.0.1:{port}/mcp"

    async def client(work: Callable[[ClientSession], Awaitable[None]]) -> None:
        async with (
            streamable_http_client(url) as (read, write, _),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            await work(session)

    async def verified_then_paid(session: ClientSession) -> None:
        assert not (await session.call_tool("verify_identity", {"customer": "bob"})).isError
        paid = await session.call_tool("refund", {"customer": "bob", "amount": 5})
        assert not paid.isError

    async def not_verified(session: ClientSession) -> None:
        refused = await session.call_tool("refund", {"customer": "eve", "amount": 5})
        assert refused.isError and "verify_before_refund" in text(refused)

    async def main() -> None:
        rebound = httpx.post(url, headers={"Host": "evil.example:80"}, json={}, timeout=5)
        assert rebound.status_code == 421  # DNS rebinding protection on a loopback address
        await client(verified_then_paid)
        await client(not_verified)  # another MCP session: bob's verification is not hers

    with log.open("w") as out, subprocess.Popen(command, env=env(), stderr=out) as process:
        try:
            started(url, process, log)
            asyncio.run(main())
        finally:
            process.terminate()
            process.wait(30)
    assert [c["tool"] for c in seen(calls)] == ["verify_identity", "refund"]


def started(url: str, process: subprocess.Popen[bytes], log: Path) -> None:
    """Wait until ``url`` answers (any status) while ``process`` runs."""
    deadline = time.monotonic() + 60
    while True:
        assert process.poll() is None, log.read_text()
        try:
            httpx.get(url, timeout=1)
            return
        except httpx.TransportError:
            assert time.monotonic() < deadline, f"{url} did not start"
            time.sleep(0.2)


def run_in_process(
    store: Any,
    session: str,
    calls: Path,
    work: Callable[[ClientSession], Awaitable[None]],
    server: UpstreamServer | None = None,
) -> None:
    guard = judging_guard(POLICY, store=store)
    server = server or UpstreamServer((sys.executable, str(SERVER), str(calls)))

    async def main() -> None:
        async with (
            gateway_to(guard, server, session_id=session) as gateway,
            create_connected_server_and_client_session(gateway.server) as client,
        ):
            await work(client)

    try:
        asyncio.run(main())
    finally:
        guard.executor.shutdown(wait=True)


@pytest.mark.slow  # starts processes: the server, or the gateway and the server
def test_a_session_continues_from_the_store_across_gateways(tmp_path: Path) -> None:
    calls = tmp_path / "calls.jsonl"
    store = SqliteStore(tmp_path / "sessions.db")
    results: dict[str, types.CallToolResult] = {}

    async def verify(client: ClientSession) -> None:
        await client.call_tool("verify_identity", {"customer": "carol"})
        await client.call_tool("lookup_order", {"order": "A1"})  # saves the result before it

    def refund_as(key: str) -> Callable[[ClientSession], Awaitable[None]]:
        async def work(client: ClientSession) -> None:
            results[key] = await client.call_tool("refund", {"customer": "carol", "amount": 1})

        return work

    try:
        run_in_process(store, "desk-1", calls, verify)
        run_in_process(store, "desk-1", calls, refund_as("same"))  # a new gateway, same session
        run_in_process(store, "desk-2", calls, refund_as("other"))
        saved = store.load("desk-1")
    finally:
        store.close()
    assert not results["same"].isError
    assert results["other"].isError and "verify_before_refund" in text(results["other"])
    assert [c["tool"] for c in seen(calls)] == ["verify_identity", "lookup_order", "refund"]
    assert saved is not None
    kept = saved["messages"]  # each call, then its result (saved with the next call)
    assert [m["role"] for m in kept] == ["assistant", "tool", "assistant", "assistant"]
    assert kept[1]["content"] == "carol is verified"


class BrokenStore(MemoryStore):
    """A store whose writes fail."""

    def save(self, session_id: str, state: Any, record: Any, **parts: Any) -> None:
        raise StoreError("the disk is full")


def test_a_call_that_cannot_be_recorded_is_refused_and_never_sent(tmp_path: Path) -> None:
    calls = tmp_path / "calls.jsonl"
    results: list[types.CallToolResult] = []

    async def work(client: ClientSession) -> None:
        results.append(await client.call_tool("lookup_order", {"order": "A1"}))

    run_in_process(BrokenStore(), "s", calls, work)
    assert results[0].isError
    assert governor_meta(results[0])["rules"] == ["judge_failed"]
    assert "the disk is full" in text(results[0])
    assert seen(calls) == []


def test_the_command_without_a_server_says_what_it_expected(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["mcp", "--policy", str(POLICY)]) == 2
    assert "expected a command or a URL" in capsys.readouterr().err
    assert main(["mcp", "--policy", str(POLICY), "--http", "nowhere", "--", "true"]) == 2
    assert "--http: expected HOST:PORT" in capsys.readouterr().err


@pytest.mark.slow  # starts processes: the server, or the gateway and the server
def test_a_server_behind_a_url_is_guarded_the_same_way(tmp_path: Path) -> None:
    calls, port, log = tmp_path / "calls.jsonl", free_port(), tmp_path / "server.log"
    command = [sys.executable, str(SERVER), str(calls), str(port)]
    url = f"http://127.0.0.1:{port}/mcp"
    results: list[types.CallToolResult] = []

    async def work(client: ClientSession) -> None:
        results.append(await client.call_tool("refund", {"customer": "dan", "amount": 3}))
        results.append(await client.call_tool("verify_identity", {"customer": "dan"}))

    with log.open("w") as out, subprocess.Popen(command, env=env(), stderr=out) as process:
        try:
            started(url, process, log)
            run_in_process(MemoryStore(), "s", calls, work, UpstreamServer(url=url))
        finally:
            process.terminate()
            process.wait(30)
    assert results[0].isError and "verify_before_refund" in text(results[0])
    assert text(results[1]) == "dan is verified"
    assert seen(calls) == [{"tool": "verify_identity", "args": {"customer": "dan"}}]
