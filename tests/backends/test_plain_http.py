"""The plain-http path of the OpenAI backend (:mod:`governor.backends.plain_http`): a kept-alive
connection carries one call after another; one the server closed while idle is replaced before
use (no request sent twice, no error); proxies, https and test transports go through httpx."""

from __future__ import annotations

import json
import os
import resource
import socket
import threading
import time
from collections.abc import Callable, Iterator

import httpx
import pytest

from governor.backends import OpenAIBackend
from governor.backends.plain_http import _readable, plain_http_usable
from governor.config import BackendConfig

ANSWER = {
    "choices": [{"index": 0, "message": {"role": "assistant", "content": "hi"}}],
    "usage": {"prompt_tokens": 1, "completion_tokens": 1},
}


class OneShotServer:
    """HTTP/1.1 on 127.0.0.1 answering ``per_connection`` requests on each connection (kept
    alive: no ``Connection: close``), then closing it; counts connections and requests."""

    def __init__(self, per_connection: int) -> None:
        self.per_connection = per_connection
        self.connections = 0
        self.requests = 0
        self.closed = 0
        self._sock = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._sock.getsockname()[1]}/v1"
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            self.connections += 1
            with conn, conn.makefile("rb") as reader:
                for _ in range(self.per_connection):
                    head = b""
                    while not head.endswith(b"\r\n\r\n"):
                        line = reader.readline()
                        if not line:
                            break
                        head += line
                    if not head:
                        break
                    length = next(
                        int(h.split(b":")[1])
                        for h in head.split(b"\r\n")
                        if h.lower().startswith(b"content-length")
                    )
                    reader.read(length)
                    self.requests += 1
                    body = json.dumps(ANSWER).encode()
                    conn.sendall(
                        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                        + f"Content-Length: {len(body)}\r\n\r\n".encode()
                        + body
                    )
            self.closed += 1

    def close(self) -> None:
        self._sock.close()


Make = Callable[[int], tuple[OneShotServer, OpenAIBackend]]


@pytest.fixture
def backend_on() -> Iterator[Make]:
    made: list[tuple[OneShotServer, OpenAIBackend]] = []

    def make(per_connection: int) -> tuple[OneShotServer, OpenAIBackend]:
        server = OneShotServer(per_connection)
        config = BackendConfig(server.url, "m", timeout_s=5.0, max_retries=0)
        made.append((server, OpenAIBackend(config)))
        return made[-1]

    yield make
    for server, backend in made:
        backend.close()
        server.close()


def test_calls_share_a_kept_alive_connection(backend_on: Make) -> None:
    server, backend = backend_on(10)
    assert backend._plain is not None  # a plain http URL, no proxy, no test transport
    for _ in range(3):
        assert backend.chat("hi").completions[0].text == "hi"
    assert (server.connections, server.requests) == (1, 3)


def test_a_connection_closed_while_idle_is_replaced(backend_on: Make) -> None:
    server, backend = backend_on(1)  # the server closes each connection after one answer
    for i in range(3):
        assert backend.chat("hi").completions[0].text == "hi"
        deadline = time.monotonic() + 5
        while server.closed <= i and time.monotonic() < deadline:
            time.sleep(0.005)  # closed while the client's connection is idle
    assert (server.connections, server.requests) == (3, 3)  # each request sent once


def test_proxies_https_and_transports_go_through_httpx(monkeypatch: pytest.MonkeyPatch) -> None:
    assert plain_http_usable("http://127.0.0.1:9/v1")
    assert not plain_http_usable("https://api.example.com/v1")
    assert not plain_http_usable("http://user:pw@127.0.0.1:9/v1")
    config = BackendConfig("http://127.0.0.1:9/v1", "m")
    with OpenAIBackend(config, transport=httpx.MockTransport(lambda r: httpx.Response(500))) as b:
        assert b._plain is None
    monkeypatch.setenv("HTTP_PROXY", "http://proxy.example:3128")
    assert not plain_http_usable("http://127.0.0.1:9/v1")
    with OpenAIBackend(config) as b:
        assert b._plain is None


def test_an_idle_socket_past_descriptor_1024_is_read_as_idle() -> None:
    """A kept connection numbered past ``select``'s limit is not taken for a closed one (which
    would open a new connection for every request of a busy process)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < 2048:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(2048, hard), hard))
    ours, theirs = socket.socketpair()
    high = socket.socket(fileno=os.dup2(ours.fileno(), 1500))
    try:
        assert not _readable(high)
        theirs.sendall(b"x")
        assert _readable(high)
    finally:
        high.close()
        ours.close()
        theirs.close()
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
