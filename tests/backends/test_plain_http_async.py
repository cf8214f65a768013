""":class:`~governor.backends.plain_http.AsyncPlainHttp` against a scripted HTTP/1.1 server on
127.0.0.1: the three ways a body ends, kept-alive connections (reused, replaced when closed while
idle, never reused after an unclean answer, one pool per event loop), the bounds (body, head,
header count, deadline) and a cancelled caller."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import http.client
import socket
import struct
import threading
import time
import weakref
from collections.abc import Awaitable, Callable, Iterator
from typing import TypeVar

import pytest

from governor.backends import plain_http
from governor.backends.plain_http import (
    KEPT_STARTS,
    AsyncPlainHttp,
    PlainBadAnswer,
    PlainHttp,
    PlainTimeout,
    PlainTooLarge,
)

T = TypeVar("T")
Answer = tuple[int, list[tuple[str, str]], bytes]

OK = b'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 11\r\n\r\n{"a": "hi"}'


class Peer:
    """The server's end of one connection."""

    def __init__(self, upstream: Upstream, conn: socket.socket) -> None:
        self.upstream = upstream
        self.conn = conn
        self.buffer = b""

    def read_request(self) -> bool:
        """Read one request (head and ``Content-Length`` body) and record it; False at EOF."""
        while b"\r\n\r\n" not in self.buffer:
            data = self.conn.recv(65536)
            if not data:
                return False
            self.buffer += data
        head, _, rest = self.buffer.partition(b"\r\n\r\n")
        length = 0
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        while len(rest) < length:
            data = self.conn.recv(65536)
            if not data:
                return False
            rest += data
        self.buffer = rest[length:]
        self.upstream.record(head + b"\r\n\r\n" + rest[:length])
        return True

    def send(self, data: bytes) -> None:
        self.conn.sendall(data)

    def wait_eof(self, timeout: float = 5.0) -> bool:
        """Whether the client closes the connection within ``timeout`` seconds."""
        self.conn.settimeout(timeout)
        try:
            while self.conn.recv(65536):
                pass
        except (TimeoutError, OSError):
            return False
        return True


Script = Callable[[Peer], None]


class Upstream:
    """HTTP on 127.0.0.1: each connection is run by ``script`` in its own thread; counts
    connections and ended connections, records requests."""

    def __init__(self, script: Script) -> None:
        self.script = script
        self.connections = 0
        self.ended = 0
        self.requests: list[bytes] = []
        self.client_closed = threading.Event()
        self.unasked_sent = threading.Event()
        self._lock = threading.Lock()
        self._conns: list[socket.socket] = []
        self._threads: list[threading.Thread] = []
        self._sock = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._sock.getsockname()[1]}/v1"
        accept = threading.Thread(target=self._accept, daemon=True)
        accept.start()
        self._threads.append(accept)

    def record(self, request: bytes) -> None:
        with self._lock:
            self.requests.append(request)

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            with self._lock:
                self.connections += 1
                self._conns.append(conn)
            thread = threading.Thread(target=self._run, args=(conn,), daemon=True)
            self._threads.append(thread)
            thread.start()

    def _run(self, conn: socket.socket) -> None:
        try:
            with conn:
                self.script(Peer(self, conn))
        except OSError:
            pass
        finally:
            with self._lock:
                self.ended += 1

    def wait_ended(self, count: int) -> None:
        deadline = time.monotonic() + 5
        while self.ended < count and time.monotonic() < deadline:
            time.sleep(0.002)
        assert self.ended >= count

    def close(self) -> None:
        with self._lock:
            conns = [self._sock, *self._conns]
        for conn in conns:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)  # wakes a thread waiting in accept() or recv()
        self._sock.close()
        for thread in self._threads:
            thread.join(timeout=5)


@pytest.fixture(autouse=True, params=["asyncio", "uvloop"])
def event_loops(request: pytest.FixtureRequest) -> Iterator[None]:
    """Every test on asyncio's event loop and on uvloop's (what ``governor serve`` runs on)."""
    if request.param == "asyncio":
        yield
        return
    uvloop = pytest.importorskip("uvloop")
    before = asyncio.get_event_loop_policy()
    asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())
    try:
        yield
    finally:
        asyncio.set_event_loop_policy(before)


@pytest.fixture
def serve() -> Iterator[Callable[[Script], Upstream]]:
    made: list[Upstream] = []

    def make(script: Script) -> Upstream:
        made.append(Upstream(script))
        return made[-1]

    yield make
    for upstream in made:
        upstream.close()


def answering(
    *answers: bytes, then_close: bool = False, pause: float = 0.0, unasked: bytes = b""
) -> Script:
    """A script answering each request (of any connection) with the next of ``answers`` (the
    last one repeated); ``then_close``: closing the connection after the first, ``pause`` seconds
    later; ``unasked``: bytes sent ``pause`` seconds after each answer."""
    sent = [0]

    def script(peer: Peer) -> None:
        while peer.read_request():
            n = sent[0]
            sent[0] += 1  # before the answer goes: a request it leads to is answered by the next
            peer.send(answers[min(n, len(answers) - 1)])
            if pause:
                time.sleep(pause)
            if unasked:
                peer.send(unasked)
                peer.upstream.unasked_sent.set()
            if then_close:
                return

    return script


def run(upstream: Upstream, body: Callable[[AsyncPlainHttp], Awaitable[T]]) -> T:
    """``body(client)`` on a fresh event loop, the client closed after it."""

    async def main() -> T:
        client = AsyncPlainHttp(upstream.url, {"Authorization": "Bearer k"})
        try:
            return await body(client)
        finally:
            await client.aclose()

    return asyncio.run(main())


def soon(seconds: float = 2.0) -> float:
    return time.monotonic() + seconds


async def get(client: AsyncPlainHttp, max_bytes: int = 1000, seconds: float = 2.0) -> Answer:
    return await client.request("GET", "/models", None, soon(seconds), max_bytes)


def test_a_content_length_body(serve: Callable[[Script], Upstream]) -> None:
    upstream = serve(answering(OK))
    status, headers, content = run(upstream, get)
    assert status == 200
    assert headers == [("Content-Type", "application/json"), ("Content-Length", "11")]
    assert content == b'{"a": "hi"}'


def test_a_chunked_body_with_a_trailer(serve: Callable[[Script], Upstream]) -> None:
    chunked = (
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
        b"5\r\nhello\r\n6;ext=1\r\n world\r\n0\r\nX-Trailer: t\r\n\r\n"
    )
    upstream = serve(answering(chunked))

    async def twice(client: AsyncPlainHttp) -> list[bytes]:
        return [(await get(client))[2] for _ in range(2)]

    assert run(upstream, twice) == [b"hello world"] * 2
    assert (upstream.connections, len(upstream.requests)) == (1, 2)  # kept alive


def test_a_body_ended_by_the_connection(serve: Callable[[Script], Upstream]) -> None:
    upstream = serve(answering(b"HTTP/1.1 200 OK\r\nX-A: b\r\n\r\nuntil the end", then_close=True))

    async def twice(client: AsyncPlainHttp) -> list[Answer]:
        return [await get(client) for _ in range(2)]

    assert run(upstream, twice) == [(200, [("X-A", "b")], b"until the end")] * 2
    assert upstream.connections == 2


def test_a_body_ended_by_the_connection_is_bounded(serve: Callable[[Script], Upstream]) -> None:
    upstream = serve(answering(b"HTTP/1.1 200 OK\r\n\r\n" + b"x" * 5000, then_close=True))
    with pytest.raises(PlainTooLarge):
        run(upstream, lambda c: get(c, max_bytes=4999))


def test_a_body_ended_by_a_reset_is_an_error(serve: Callable[[Script], Upstream]) -> None:
    def reset(peer: Peer) -> None:
        peer.read_request()
        peer.send(b"HTTP/1.1 200 OK\r\n\r\ncut sho")
        time.sleep(0.05)
        peer.conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))

    upstream = serve(reset)
    with pytest.raises(ConnectionResetError):  # not a complete body of 7 bytes
        run(upstream, get)


def test_sequential_requests_share_one_connection(serve: Callable[[Script], Upstream]) -> None:
    upstream = serve(answering(OK))

    async def three(client: AsyncPlainHttp) -> None:
        for _ in range(3):
            assert (await client.request("POST", "/chat", b"{}", soon(), 1000))[2] == b'{"a": "hi"}'

    run(upstream, three)
    assert (upstream.connections, len(upstream.requests)) == (1, 3)


def test_the_request_bytes_are_those_of_plain_http(serve: Callable[[Script], Upstream]) -> None:
    upstream = serve(answering(OK))
    blocking = PlainHttp(upstream.url, {"Authorization": "Bearer k"})
    try:
        for method, body in (("POST", b'{"x":1}'), ("GET", None), ("POST", None)):
            blocking.request(method, "/chat/completions", body, soon(), 1000)
    finally:
        blocking.close()

    async def same(client: AsyncPlainHttp) -> None:
        for method, body in (("POST", b'{"x":1}'), ("GET", None), ("POST", None)):
            await client.request(method, "/chat/completions", body, soon(), 1000)

    run(upstream, same)
    assert len(upstream.requests) == 6
    assert upstream.requests[:3] == upstream.requests[3:]
    assert upstream.requests[0].startswith(
        b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1:"
    )


def test_hostile_request_parts_are_refused_before_sending(
    serve: Callable[[Script], Upstream],
) -> None:
    upstream = serve(answering(OK))
    with pytest.raises(http.client.InvalidURL, match="control characters"):
        run(upstream, lambda c: c.request("GET", "/m HTTP/1.1\r\nX: y", None, soon(), 10))
    with pytest.raises(ValueError, match="header value without line breaks"):
        AsyncPlainHttp(upstream.url, {"X-Key": "k\r\nInjected: 1"})
    assert upstream.requests == []


def test_a_connection_closed_while_idle_is_replaced(serve: Callable[[Script], Upstream]) -> None:
    upstream = serve(answering(OK, then_close=True, pause=0.05))

    async def after_close(client: AsyncPlainHttp) -> None:
        await get(client)
        # wait without yielding to the loop: the connection's end is only seen by polling it
        upstream.wait_ended(1)
        time.sleep(0.02)
        await get(client)
        upstream.wait_ended(2)
        await asyncio.sleep(0.05)  # now the loop sees it
        await get(client)

    run(upstream, after_close)
    assert (upstream.connections, len(upstream.requests)) == (3, 3)  # each request sent once


@pytest.mark.parametrize("pause", [0.0, 0.05])
def test_bytes_nobody_asked_for_retire_a_connection(
    serve: Callable[[Script], Upstream], pause: float
) -> None:
    unasked = b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nbad"
    upstream = serve(answering(OK, pause=pause, unasked=unasked))

    async def two(client: AsyncPlainHttp) -> list[bytes]:
        first = (await get(client))[2]
        assert upstream.unasked_sent.wait(5)  # with the answer or while the connection is idle
        await asyncio.sleep(0.05)
        return [first, (await get(client))[2]]

    assert run(upstream, two) == [b'{"a": "hi"}'] * 2  # never the unasked answer
    assert upstream.connections == 2


@pytest.mark.parametrize(
    "closing",
    [
        b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok",
        b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok",
    ],
)
def test_an_answer_ending_the_connection_is_not_reused(
    serve: Callable[[Script], Upstream], closing: bytes
) -> None:
    upstream = serve(answering(closing))

    async def two(client: AsyncPlainHttp) -> list[bytes]:
        return [(await get(client))[2] for _ in range(2)]

    assert run(upstream, two) == [b"ok", b"ok"]
    assert upstream.connections == 2


@pytest.mark.parametrize(
    "answer",
    [
        b"HTTP/1.1 200 OK\r\nContent-Length: 5000\r\n\r\n" + b"x" * 5000,
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
        + (b"3e8\r\n" + b"x" * 1000 + b"\r\n") * 5
        + b"0\r\n\r\n",
    ],
)
def test_a_body_past_the_limit(serve: Callable[[Script], Upstream], answer: bytes) -> None:
    upstream = serve(answering(answer, OK))

    async def too_large_then_ok(client: AsyncPlainHttp) -> bytes:
        with pytest.raises(PlainTooLarge, match="more than 4,999 bytes"):
            await get(client, max_bytes=4999)
        return (await get(client))[2]

    assert run(upstream, too_large_then_ok) == b'{"a": "hi"}'
    assert upstream.connections == 2  # the half-read connection was not reused


def stalling(first: bytes) -> Script:
    """Sends ``first`` to the first request and then nothing until the client closes; answers
    every request of later connections with OK."""
    calls = []

    def script(peer: Peer) -> None:
        calls.append(1)
        if len(calls) == 1:
            peer.read_request()
            peer.send(first)
            if peer.wait_eof():
                peer.upstream.client_closed.set()
            return
        answering(OK)(peer)

    return script


@pytest.mark.parametrize("first", [b"", b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhalf"])
def test_a_slow_server_past_the_deadline(serve: Callable[[Script], Upstream], first: bytes) -> None:
    upstream = serve(stalling(first))

    async def late_then_ok(client: AsyncPlainHttp) -> bytes:
        start = time.monotonic()
        with pytest.raises(PlainTimeout):
            await get(client, seconds=0.2)
        assert time.monotonic() - start < 1.0
        return (await get(client))[2]

    assert run(upstream, late_then_ok) == b'{"a": "hi"}'
    assert upstream.client_closed.wait(2)  # the late connection was closed, not reused
    assert upstream.connections == 2


def test_a_head_trickled_a_byte_at_a_time_is_bounded_by_the_deadline(
    serve: Callable[[Script], Upstream],
) -> None:
    def drip(peer: Peer) -> None:
        peer.read_request()
        peer.send(b"HTTP/1.1 200 OK\r\n")
        for _ in range(200):
            peer.send(b"X")
            time.sleep(0.01)

    upstream = serve(drip)
    start = time.monotonic()
    with pytest.raises(PlainTimeout):
        run(upstream, lambda c: get(c, seconds=0.3))
    assert time.monotonic() - start < 1.5


def test_a_past_deadline_sends_nothing(serve: Callable[[Script], Upstream]) -> None:
    upstream = serve(answering(OK))
    with pytest.raises(PlainTimeout, match="no time left"):
        run(upstream, lambda c: c.request("GET", "/models", None, time.monotonic() - 1, 10))
    assert upstream.connections == 0


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        (b"HTTP/1.1 abc OK\r\nContent-Length: 0\r\n\r\n", "malformed answer"),
        (b"SMTP ready\r\n\r\n", "malformed answer"),
        (b"HTTP/1.1 200 OK\r\nBad Header\r\nContent-Length: 0\r\n\r\n", "malformed answer"),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nokk", "malformed"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", "malformed answer"),
        (
            b"HTTP/1.1 200 OK\r\n" + b"X-H: v\r\n" * 101 + b"Content-Length: 0\r\n\r\n",
            "more than 100 header lines",
        ),
        (
            b"HTTP/1.1 200 OK\r\nX-Long: " + b"v" * 70_000 + b"\r\nContent-Length: 0\r\n\r\n",
            "head longer than 65,536 bytes",
        ),
        (
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX-T: "
            + b"v" * 300_000
            + b"\r\n\r\n",
            "a line after the answer's head longer",
        ),
        (b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\n\r\n", "switching protocols"),
    ],
)
def test_a_malformed_or_unbounded_answer(
    serve: Callable[[Script], Upstream], answer: bytes, message: str
) -> None:
    upstream = serve(answering(answer))
    with pytest.raises(PlainBadAnswer, match=message) as caught:
        run(upstream, lambda c: get(c, max_bytes=1_000_000))
    assert isinstance(caught.value, http.client.HTTPException)  # mapped like http.client's


def test_a_hundred_headers_and_an_interim_answer_are_read(
    serve: Callable[[Script], Upstream],
) -> None:
    answer = (
        b"HTTP/1.1 100 Continue\r\n\r\n"
        + b"HTTP/1.1 200 OK\r\n"
        + b"X-H: v\r\n" * 99
        + b"Content-Length: 2\r\n\r\nok"
    )
    upstream = serve(answering(answer))
    status, headers, content = run(upstream, get)
    assert (status, len(headers), content) == (200, 100, b"ok")


@pytest.mark.parametrize(
    ("answer", "error"),
    [
        (b"", http.client.RemoteDisconnected),
        (b"HTTP/1.1 200 OK\r\nContent-Le", PlainBadAnswer),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhalf", http.client.IncompleteRead),
    ],
)
def test_a_connection_ended_early(
    serve: Callable[[Script], Upstream], answer: bytes, error: type[Exception]
) -> None:
    upstream = serve(answering(answer, then_close=True))
    with pytest.raises(error):
        run(upstream, get)


def test_a_head_request_reads_no_body(serve: Callable[[Script], Upstream]) -> None:
    upstream = serve(answering(b"HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\n", OK))

    async def head_then_get(client: AsyncPlainHttp) -> list[Answer]:
        head = await client.request("HEAD", "/models", None, soon(), 1000)
        return [head, await get(client)]

    head, after = run(upstream, head_then_get)
    assert head == (200, [("Content-Length", "11")], b"")
    assert after[2] == b'{"a": "hi"}'
    assert upstream.connections == 2  # not reused: the parser would wait for a body


def test_a_cancelled_caller_closes_the_connection(serve: Callable[[Script], Upstream]) -> None:
    upstream = serve(stalling(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhalf"))

    async def cancel_then_ok(client: AsyncPlainHttp) -> bytes:
        task = asyncio.create_task(get(client, seconds=5))
        while len(upstream.requests) < 1:
            await asyncio.sleep(0.005)
        await asyncio.sleep(0.05)  # mid-body
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return (await get(client))[2]

    assert run(upstream, cancel_then_ok) == b'{"a": "hi"}'
    assert upstream.client_closed.wait(2)
    assert upstream.connections == 2


def test_each_event_loop_has_its_own_connections(serve: Callable[[Script], Upstream]) -> None:
    upstream = serve(answering(OK))
    client = AsyncPlainHttp(upstream.url, {})

    async def one() -> None:
        await get(client)

    async def one_and_close() -> None:
        await get(client)
        await client.aclose()

    first = asyncio.new_event_loop()
    try:
        first.run_until_complete(one())  # leaves an idle connection on the first loop
        asyncio.run(one_and_close())  # another loop does not take it
        assert upstream.connections == 2
        first.run_until_complete(one())  # the first loop does
        assert upstream.connections == 2
        client.close()  # closes every loop's idle connections, this one on its own loop
        first.run_until_complete(asyncio.sleep(0.01))
    finally:
        first.close()
    upstream.wait_ended(2)


def test_the_idle_pool_is_bounded(
    serve: Callable[[Script], Upstream], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(plain_http, "IDLE_PER_LOOP", 2)
    upstream = serve(answering(OK))

    async def four_at_once(client: AsyncPlainHttp) -> int:
        await asyncio.gather(*(get(client) for _ in range(4)))
        idle = sum(len(conns) for conns in client._idle.values())
        await asyncio.gather(*(get(client) for _ in range(2)))
        return idle

    assert run(upstream, four_at_once) == 2
    assert upstream.connections == 4  # the two kept carried the next two requests
    upstream.wait_ended(4)


def test_without_httptools_it_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    assert AsyncPlainHttp.available()
    monkeypatch.setattr(plain_http, "_PARSER_MISSING", True)
    assert not AsyncPlainHttp.available()
    with pytest.raises(RuntimeError, match="expected httptools"):
        AsyncPlainHttp("http://127.0.0.1:9/v1", {})


def test_the_bound_after_the_head_holds_however_the_bytes_arrive() -> None:
    """A trailer past the bound in one read (as uvloop may deliver it) fails as in many reads,
    and a long body in one read is still read whole."""
    from governor.backends.plain_http import _Answer

    trailer = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX-T: " + b"v" * 300_000
    body = b"x" * 200_000

    async def main() -> tuple[BaseException | None, bytes]:
        loop = asyncio.get_running_loop()
        one, two = loop.create_future(), loop.create_future()
        _Answer(one, 1 << 20, False).feed(trailer + b"\r\n\r\n")
        _Answer(two, 1 << 20, False).feed(
            b"HTTP/1.1 200 OK\r\nContent-Length: 200000\r\n\r\n" + body
        )
        return one.exception(), (await two)[2]

    failure, content = asyncio.run(main())
    assert isinstance(failure, PlainBadAnswer) and "after the answer's head" in str(failure)
    assert content == body


def test_request_lines_kept_written_are_the_checked_ones_and_bounded() -> None:
    client = AsyncPlainHttp("http://127.0.0.1:9/v1", {})
    paths = [f"/p{i}" for i in range(3 * KEPT_STARTS)]
    for _ in range(2):  # written, then (for the first KEPT_STARTS) kept
        for path in paths:
            sent = client.request_bytes("POST", path, b"{}")
            assert sent.startswith(f"POST /v1{path} HTTP/1.1\r\nHost: 127.0.0.1:9\r\n".encode())
            assert sent == AsyncPlainHttp("http://127.0.0.1:9/v1", {}).request_bytes(
                "POST", path, b"{}"
            )
    assert len(client._starts) == KEPT_STARTS
    with pytest.raises(http.client.InvalidURL, match="control characters"):
        client.request_bytes("POST", "/p0 HTTP/1.1\r\nX: y", b"{}")
    with pytest.raises(ValueError, match="method without control characters"):
        client.request_bytes("POST\r\n", "/p0", b"{}")


def test_a_settled_answer_is_freed_without_the_cycle_collector(
    serve: Callable[[Script], Upstream], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The parser and the answer it calls back refer to each other; the answer lets go of the
    parser once settled, so each exchange's objects go by reference counting alone."""
    made: list[weakref.ref[object]] = []

    class Watched(plain_http._Answer):
        def __init__(self, *args: object, **kwargs: object) -> None:
            super().__init__(*args, **kwargs)  # type: ignore[arg-type]
            made.append(weakref.ref(self))

    monkeypatch.setattr(plain_http, "_Answer", Watched)
    upstream = serve(answering(OK))

    async def three(client: AsyncPlainHttp) -> list[bytes]:
        return [(await get(client))[2] for _ in range(3)]

    gc.collect()
    gc.disable()
    try:
        assert run(upstream, three) == [b'{"a": "hi"}'] * 3
        assert len(made) == 3 and [ref() for ref in made] == [None] * 3
    finally:
        gc.enable()
