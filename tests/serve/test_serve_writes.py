"""The service's connections send what one turn of the event loop writes in one system call (a
response's head and body together), in order, and nothing is lost or sent after a close."""

from __future__ import annotations

import asyncio
import socket
from typing import Any

from governor.serve.connections import _Coalesced


class Recorder:
    def __init__(self) -> None:
        self.writes: list[bytes] = []
        self.closed = False

    def write(self, data: bytes) -> None:
        assert not self.closed, "written after close"
        self.writes.append(data)

    def is_closing(self) -> bool:
        return self.closed

    def close(self) -> None:
        self.closed = True

    def get_extra_info(self, name: str) -> Any:
        return f"extra {name}"


def test_writes_of_one_turn_leave_as_one_and_in_order() -> None:
    async def main() -> Recorder:
        raw = Recorder()
        t = _Coalesced(raw, asyncio.get_running_loop())  # type: ignore[arg-type]
        t.write(b"HTTP/1.1 200 OK\r\n\r\n")
        t.write(b"body")
        assert raw.writes == []  # held until the end of the turn
        await asyncio.sleep(0)
        t.write(b"next")
        await asyncio.sleep(0)
        assert t.get_extra_info("peername") == "extra peername"  # the rest is the transport's
        return raw

    raw = asyncio.run(main())
    assert raw.writes == [b"HTTP/1.1 200 OK\r\n\r\nbody", b"next"]


def test_a_close_sends_what_is_held_first_and_nothing_after() -> None:
    async def main() -> Recorder:
        raw = Recorder()
        t = _Coalesced(raw, asyncio.get_running_loop())  # type: ignore[arg-type]
        t.write(b"last words")
        t.close()
        await asyncio.sleep(0)  # the scheduled send finds the transport closing: nothing more
        return raw

    raw = asyncio.run(main())
    assert raw.writes == [b"last words"] and raw.closed


def test_a_served_answer_arrives_whole_in_one_read(base: str) -> None:
    host, port = base.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=5) as s:
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        first = s.recv(65536)
    head, _, body = first.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200") and body == b'{"status":"alive"}'
