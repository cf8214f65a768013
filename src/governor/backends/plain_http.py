"""A lean HTTP/1.1 client for an OpenAI-compatible endpoint over plain ``http://``: the standard
library's :mod:`http.client`, one kept-alive connection per thread.

httpx spends about 0.6 ms of CPU on each request (request building, its connection pool's
bookkeeping, cookies, its own parser); :mod:`http.client` about 0.2 ms for the same exchange.
:class:`PlainHttp` is used by :class:`~governor.backends.openai.OpenAIBackend` for the requests
it reads whole (chat completions, embeddings, ``/models``) when the base URL is plain ``http``,
no proxy is configured in the environment and no test transport replaces the network; streams,
``https`` and proxies go through httpx as before. The same bounds hold: each read waits at most
the time left before the call's deadline, the body is read in pieces of at most 64 KiB (one
``recv`` each) up to a byte limit, a head's lines and count are bounded by :mod:`http.client`
(64 KiB, 100 headers), and the body is asked for without compression. A kept connection the
server closed while idle is noticed before it is used (its socket reads as ready) and replaced;
a request is never sent twice. Errors: :class:`PlainTimeout` for a wait past the deadline,
:class:`PlainTooLarge` past the byte limit, ``OSError`` or :class:`http.client.HTTPException`
for the rest (unreachable, reset, a malformed answer). :class:`PlainHttp` needs only the
standard library.

:class:`AsyncPlainHttp` makes the same requests on an event loop (asyncio transports, answers
parsed by ``httptools``, idle connections kept per loop), for callers that await: a blocking
socket call in a worker thread costs more CPU per request than the same exchange on the loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import http.client
import os
import re
import select
import socket
import threading
import time
import weakref
from collections.abc import AsyncIterator, Coroutine, Mapping
from typing import Any, cast
from urllib.parse import urlsplit

from governor.on_loop import Carried

PIECE_BYTES = 1 << 16
"""The most bytes one read of a body asks for."""

PROXY_VARIABLES = ("http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY")
"""Environment variables that route plain http through a proxy (httpx then serves)."""


class PlainTimeout(Exception):
    """No (complete) answer before the deadline."""


class PlainTooLarge(Exception):
    """An answer longer than the byte limit."""


def plain_http_usable(base_url: str) -> bool:
    """Whether ``base_url`` is plain ``http`` with a host, and no proxy is configured."""
    parts = urlsplit(base_url)
    if parts.scheme != "http" or not parts.hostname or parts.username or parts.password:
        return False
    return not any(os.environ.get(name) for name in PROXY_VARIABLES)


class PlainHttp:
    """Requests to ``base_url`` (plain http) with ``headers`` on every request; a connection per
    thread, kept open between requests. :meth:`close` closes them all."""

    def __init__(self, base_url: str, headers: Mapping[str, str]) -> None:
        self.host, self.port, self.prefix = _endpoint(base_url)
        self.headers, self.json_headers = _request_headers(headers)
        self._local = threading.local()
        self._open: set[http.client.HTTPConnection] = set()
        self._lock = threading.Lock()
        # a client dropped without close() (a guard let go) still closes its connections
        self._finalizer = weakref.finalize(self, _close_all, self._open, self._lock)

    def close(self) -> None:
        _close_all(self._open, self._lock)

    def request(
        self, method: str, path: str, body: bytes | None, deadline: float, max_bytes: int
    ) -> tuple[int, list[tuple[str, str]], bytes]:
        """``method path`` with the JSON ``body`` (None: no body), answered and read whole before
        ``deadline`` (a ``time.monotonic()`` value): the status, the headers and the body."""
        conn = self._connection(deadline)
        answer: http.client.HTTPResponse | None = None
        try:
            _wait_at_most(conn, deadline)
            headers = self.headers if body is None else self.json_headers
            conn.request(method, self.prefix + path, body=body, headers=headers)
            _wait_at_most(conn, deadline)
            answer = conn.getresponse()
            content = bytearray()
            while True:
                _wait_at_most(conn, deadline)
                piece = answer.read1(PIECE_BYTES)
                if not piece:
                    break
                content += piece
                if len(content) > max_bytes:
                    raise PlainTooLarge(f"an answer of more than {max_bytes:,} bytes")
            if answer.will_close:
                self._drop(conn, answer)
            else:
                answer.close()  # read whole: the connection is ready for the next request
            return answer.status, answer.getheaders(), bytes(content)
        except TimeoutError as exc:
            self._drop(conn, answer)
            raise PlainTimeout("no answer in time") from exc
        except BaseException:
            self._drop(conn, answer)
            raise

    def _connection(self, deadline: float) -> http.client.HTTPConnection:
        """This thread's kept connection, unless the server closed it; else a new one."""
        conn: http.client.HTTPConnection | None = getattr(self._local, "conn", None)
        if conn is not None and (conn.sock is None or _readable(conn.sock)):
            self._drop(conn)  # closed by the server while idle (or sent something unasked)
            conn = None
        if conn is None:
            timeout = max(deadline - time.monotonic(), 0.001)
            conn = http.client.HTTPConnection(self.host, self.port, timeout=timeout)
            self._local.conn = conn
            with self._lock:
                self._open.add(conn)
        return conn

    def _drop(
        self, conn: http.client.HTTPConnection, answer: http.client.HTTPResponse | None = None
    ) -> None:
        """Close ``conn`` and forget it (and ``answer``: an answer the server said it would end
        the connection after holds the socket itself)."""
        if getattr(self._local, "conn", None) is conn:
            self._local.conn = None
        with self._lock:
            self._open.discard(conn)
        conn.close()
        if answer is not None:
            answer.close()


def _endpoint(base_url: str) -> tuple[str, int, str]:
    """The host, port and path prefix of a plain http base URL."""
    parts = urlsplit(base_url)
    if parts.scheme != "http" or not parts.hostname:
        raise ValueError(f"expected a plain http URL with a host, found {base_url!r}")
    return parts.hostname, parts.port or 80, parts.path.rstrip("/")


def _request_headers(headers: Mapping[str, str]) -> tuple[dict[str, str], dict[str, str]]:
    """The headers of a request without a body and of one with a JSON body."""
    plain = {**headers, "Accept-Encoding": "identity"}
    return plain, {**plain, "Content-Type": "application/json"}


def _close_all(open_: set[http.client.HTTPConnection], lock: threading.Lock) -> None:
    """Close and forget every connection in ``open_``."""
    with lock:
        conns = list(open_)
        open_.clear()
    for conn in conns:
        conn.close()


def _wait_at_most(conn: http.client.HTTPConnection, deadline: float) -> None:
    """Bound the connection's next waits by the time left before ``deadline``."""
    left = deadline - time.monotonic()
    if left <= 0:
        raise PlainTimeout("no time left")
    conn.timeout = left
    if conn.sock is not None:
        conn.sock.settimeout(left)


def _readable(sock: socket.socket) -> bool:
    """Whether an idle socket has something to read (for a kept connection: the server closed
    it, or sent bytes nobody asked for; either way it cannot carry the next request). ``poll``,
    not ``select``: a process with many connections has descriptors past ``select``'s 1024."""
    try:
        poller = select.poll()
        poller.register(sock, select.POLLIN)
        return bool(poller.poll(0))
    except (OSError, ValueError):
        return True


# --- the same requests, awaited on an event loop -------------------------------------------------

HEAD_BYTES = 1 << 16
"""The most bytes an answer's head (status line and headers) may take; as :mod:`http.client`'s
longest line, but for the whole head."""

MAX_HEADERS = 100
"""The most header lines an answer may have (as :mod:`http.client`); trailers count apart."""

IDLE_PER_LOOP = 64
"""The most idle kept-alive connections :class:`AsyncPlainHttp` keeps per event loop."""

KEPT_STARTS = 16
"""The most request lines (method and path) :class:`AsyncPlainHttp` keeps written."""

_METHODS_EXPECTING_BODY = frozenset({"PATCH", "POST", "PUT"})
_DISALLOWED_IN_PATH = re.compile("[\x00-\x20\x7f]")
_DISALLOWED_IN_METHOD = re.compile("[\x00-\x1f]")
_LEGAL_HEADER_NAME = re.compile(rb"[^:\s][^:\r\n]*").fullmatch
_ILLEGAL_HEADER_VALUE = re.compile(rb"\n(?![ \t])|\r(?![ \t\n])").search

try:
    import httptools
except ImportError:  # the [serve] extra is not installed
    _PARSER_MISSING = True
else:
    _PARSER_MISSING = False


class PlainBadAnswer(http.client.HTTPException):
    """An answer that is not well-formed HTTP/1.1, or past the bounds of its head."""


class AsyncPlainHttp:
    """Requests to ``base_url`` (plain http) with ``headers`` on every request, awaited on the
    running event loop: the same requests, bounds, answers and errors as :class:`PlainHttp`.

    Each event loop has its own idle connections (at most :data:`IDLE_PER_LOOP`, kept alive between
    requests; a connection is only used on the loop that opened it). A connection that is closed,
    or has something to read, while idle is closed and never reused; one that did not end an
    answer cleanly (a wait past the deadline, a cancelled caller, an error, an answer the server
    ends the connection after) is closed, never put back. A request is never sent twice.

    Answers are parsed by ``httptools`` (the ``[serve]`` extra; :meth:`available` says whether it is
    installed): a body delimited by ``Content-Length``, chunks or the end of the connection; a head
    of at most 64 KiB and 100 headers; a body of at most ``max_bytes``; every other line of an
    answer (a chunk's size, a trailer) at most 64 KiB, counted per read. Connecting and the whole
    answer are each bounded by the time left before the deadline. :meth:`aclose` closes the
    running loop's idle connections (await it before a loop ends: a closed loop's connections can
    only be forgotten), :meth:`close` those of every loop.
    """

    def __init__(self, base_url: str, headers: Mapping[str, str]) -> None:
        if _PARSER_MISSING:
            raise RuntimeError(
                "AsyncPlainHttp: expected httptools (pip install 'governor[serve]'), found it "
                "missing"
            )
        self.host, self.port, self.prefix = _endpoint(base_url)
        plain, with_json = _request_headers(headers)
        self._host_line = _header_line("Host", _host_header(self.host, self.port))
        if any(name.lower() == "host" for name in headers):
            self._host_line = b""
        self._add_length = not any(name.lower() == "content-length" for name in headers)
        self._lines = b"".join(_header_line(k, v) for k, v in plain.items())
        self._json_lines = b"".join(_header_line(k, v) for k, v in with_json.items())
        self._idle: dict[asyncio.AbstractEventLoop, list[_Connection]] = {}
        self._starts: dict[tuple[str, str], bytes] = {}
        self._finalizer = weakref.finalize(self, _close_idle, self._idle)

    @classmethod
    def available(cls) -> bool:
        """Whether ``httptools`` (which parses the answers) is installed."""
        return not _PARSER_MISSING

    def request_bytes(self, method: str, path: str, body: bytes | None) -> bytes:
        """What :meth:`request` sends: the bytes :class:`PlainHttp` (``http.client``) sends."""
        head = self._starts.get((method, path))
        if head is None:
            head = self._start(method, path)
        if self._add_length:
            if body is not None:
                head += b"Content-Length: %d\r\n" % len(body)
            elif method.upper() in _METHODS_EXPECTING_BODY:
                head += b"Content-Length: 0\r\n"
        head += self._lines if body is None else self._json_lines
        return head + b"\r\n" + (body or b"")

    def _start(self, method: str, path: str) -> bytes:
        """The request line and ``Host`` header of ``method path``, checked (and kept for the
        next request, for the first :data:`KEPT_STARTS` pairs)."""
        if _DISALLOWED_IN_METHOD.search(method):
            raise ValueError(f"expected a method without control characters, found {method!r}")
        target = self.prefix + path
        if _DISALLOWED_IN_PATH.search(target):
            raise http.client.InvalidURL(
                f"expected a path without spaces or control characters, found {target!r}"
            )
        head = f"{method} {target} HTTP/1.1\r\n".encode("ascii") + self._host_line
        if len(self._starts) < KEPT_STARTS:
            self._starts[method, path] = head
        return head

    async def request(
        self, method: str, path: str, body: bytes | None, deadline: float, max_bytes: int
    ) -> tuple[int, list[tuple[str, str]], bytes]:
        """``method path`` with the JSON ``body`` (None: no body), answered and read whole before
        ``deadline`` (a ``time.monotonic()`` value): the status, the headers and the body."""
        answer = self.start(method, path, body, deadline, max_bytes)
        if answer is None:
            return await self.request_on_new(method, path, body, deadline, max_bytes)
        return await answer

    def start(
        self, method: str, path: str, body: bytes | None, deadline: float, max_bytes: int
    ) -> asyncio.Future[tuple[int, list[tuple[str, str]], bytes]] | None:
        """``method path`` with ``body`` sent now on an idle kept connection of the running loop:
        the future of what :meth:`request` returns (a :class:`~governor.on_loop.Carried` one);
        None, and nothing sent, when no idle connection is fit for it
        (:meth:`request_on_new` connects). Cancelling the future abandons the request (its
        connection is closed)."""
        if deadline - time.monotonic() <= 0:
            raise PlainTimeout("no time left")
        loop = asyncio.get_running_loop()
        if not self._idle.get(loop):
            return None  # (nothing idle: the request is made on a new connection)
        data = self.request_bytes(method, path, body)
        conn = self._take(loop)
        return None if conn is None else self._send(loop, conn, data, method, deadline, max_bytes)

    async def request_on_new(
        self, method: str, path: str, body: bytes | None, deadline: float, max_bytes: int
    ) -> tuple[int, list[tuple[str, str]], bytes]:
        """:meth:`request` on a connection opened for it (kept afterwards when it can be)."""
        data = self.request_bytes(method, path, body)
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(deadline - time.monotonic()):
                conn = await self._connect(loop)
        except TimeoutError as exc:
            raise PlainTimeout("not connected in time") from exc
        return await self._send(loop, conn, data, method, deadline, max_bytes)

    def _send(
        self,
        loop: asyncio.AbstractEventLoop,
        conn: _Connection,
        data: bytes,
        method: str,
        deadline: float,
        max_bytes: int,
    ) -> asyncio.Future[tuple[int, list[tuple[str, str]], bytes]]:
        """``data`` sent on ``conn``: the future of its answer; once it is settled, ``conn`` is
        put back when it can carry the next request, else closed (never reused half-read)."""
        try:
            answer = conn.send(data, max_bytes, method.upper() == "HEAD", deadline)
        except BaseException:
            conn.drop()
            raise

        def settled(done: asyncio.Future[Any]) -> None:
            conn.settled()
            if not done.cancelled() and done.exception() is None and conn.reusable():
                self._put_back(loop, conn)
            else:
                conn.drop()

        answer.add_done_callback(settled)
        return answer

    async def aclose(self) -> None:
        """Close the running loop's idle connections."""
        for conn in list(self._idle.pop(asyncio.get_running_loop(), [])):
            conn.drop()  # which takes it out of the list

    def close(self) -> None:
        """Close every loop's idle connections (those of a loop running in another thread on
        that loop; a closed loop's are only forgotten)."""
        _close_idle(self._idle)

    def _take(self, loop: asyncio.AbstractEventLoop) -> _Connection | None:
        """An idle connection of ``loop`` fit for a request (the latest put back), or None."""
        idle = self._idle.get(loop)
        while idle:
            conn = idle.pop()
            if conn.fit():
                return conn
            conn.drop()
        return None

    def _put_back(self, loop: asyncio.AbstractEventLoop, conn: _Connection) -> None:
        idle = self._idle.get(loop)
        if idle is None:
            for other, _ in list(self._idle.items()):  # a snapshot: loops in other threads
                if other.is_closed():
                    self._idle.pop(other, None)  # a loop that ended without aclose()
            idle = self._idle[loop] = []
            _close_with_loop(idle)
        if len(idle) >= IDLE_PER_LOOP:
            conn.drop()
            return
        conn.idle_in = idle
        idle.append(conn)

    async def _connect(self, loop: asyncio.AbstractEventLoop) -> _Connection:
        _, conn = await loop.create_connection(_Connection, self.host, self.port)
        return conn


class _Connection(asyncio.Protocol):
    """One kept-alive connection: an answer at a time, parsed as its bytes arrive."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.answer: _Answer | None = None
        self.lost = False
        self.idle_in: list[_Connection] | None = None
        self._poll = select.poll()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's is not a subclass
        sock = transport.get_extra_info("socket")
        if sock is not None:
            with contextlib.suppress(OSError):  # already closed: fit() will say so
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                self._poll.register(sock.fileno(), select.POLLIN)

    def data_received(self, data: bytes) -> None:
        if self.answer is None:  # bytes nobody asked for: the connection cannot carry a request
            self.drop()
        else:
            self.answer.feed(data)

    def eof_received(self) -> bool:
        return False  # the transport closes itself; connection_lost follows

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost = True
        self._forget()
        if self.answer is not None:
            self.answer.end(exc)

    def send(
        self, data: bytes, max_bytes: int, head_only: bool, deadline: float
    ) -> asyncio.Future[tuple[int, list[tuple[str, str]], bytes]]:
        """Send ``data``: the future of the whole answer, failed with :class:`PlainTimeout` at
        ``deadline``; :meth:`settled` once that future is."""
        self._forget()
        if self.lost or self.transport is None or self.transport.is_closing():
            raise ConnectionResetError("the connection closed before the request was sent")
        left = deadline - time.monotonic()
        if left <= 0:
            raise PlainTimeout("no time left")
        loop = asyncio.get_running_loop()
        waiter: asyncio.Future[Any] = Carried(loop=loop)
        answer = self.answer = _Answer(waiter, max_bytes, head_only)
        answer.late_call = loop.call_later(left, answer.late)
        self.transport.write(data)
        return waiter

    def settled(self) -> None:
        """The answer's future is settled: its deadline and its parser are let go."""
        answer = self.answer
        if answer is not None:
            if answer.late_call is not None:
                answer.late_call.cancel()
            answer.release()

    def fit(self) -> bool:
        """Whether an idle connection can carry a request: open, and nothing to read (the end
        of the connection, or bytes nobody asked for, not yet seen by the loop)."""
        if self.lost or self.transport is None or self.transport.is_closing():
            return False
        try:
            return not self._poll.poll(0)
        except OSError:
            return False

    def reusable(self) -> bool:
        """Whether the connection, its answer read whole, can carry the next request."""
        answer = self.answer
        if answer is None or self.lost or not answer.keep_alive or answer.extra:
            return False
        self.answer = None
        return True

    def drop(self) -> None:
        """Close the connection (whatever is in flight on it is abandoned)."""
        self.lost = True
        self._forget()
        if self.transport is not None:
            self.transport.abort()

    def _forget(self) -> None:
        """Take the connection out of the idle list it is in."""
        if self.idle_in is not None:
            if self in self.idle_in:
                self.idle_in.remove(self)
            self.idle_in = None


class _Answer:
    """The state of one answer being parsed (the callbacks of ``httptools``' parser)."""

    def __init__(self, waiter: asyncio.Future[Any], max_bytes: int, head_only: bool) -> None:
        self.waiter = waiter
        self.max_bytes = max_bytes
        self.head_only = head_only
        self.parser = httptools.HttpResponseParser(self)
        self.headers: list[tuple[str, str]] = []
        self.body = bytearray()
        self.status = 0
        self.in_head = True
        self.head_bytes = 0  # bytes fed while a head was incomplete
        self.quiet = 0  # bytes fed after the head since the parser last called back
        self.heard = False
        self.lines = 0
        self.length = False  # a Content-Length header
        self.chunked = False  # chunked last of the transfer codings
        self.keep_alive = False
        self.extra = False  # bytes after the answer
        self.failure: BaseException | None = None
        self.late_call: asyncio.TimerHandle | None = None

    def feed(self, data: bytes) -> None:
        if self.waiter.done():
            self.extra = True
            return
        view = memoryview(data)
        try:
            while view and not self.waiter.done():
                if self.in_head:
                    room = HEAD_BYTES - self.head_bytes
                    if room <= 0:
                        raise PlainBadAnswer(f"an answer's head longer than {HEAD_BYTES:,} bytes")
                    piece, view = view[:room], view[room:]
                    self.head_bytes += len(piece)
                    self.parser.feed_data(piece)
                else:  # in pieces, so that the bound holds however the bytes arrive
                    piece, view = view[:HEAD_BYTES], view[HEAD_BYTES:]
                    self.heard = False
                    self.parser.feed_data(piece)
                    self.quiet = 0 if self.heard else self.quiet + len(piece)
                    if self.quiet > HEAD_BYTES:
                        raise PlainBadAnswer(
                            f"a line after the answer's head longer than {HEAD_BYTES:,} bytes"
                        )
            if view:
                self.extra = True  # bytes after the answer
        except (
            httptools.HttpParserError,
            httptools.HttpParserUpgrade,
            PlainBadAnswer,
            PlainTooLarge,
        ) as exc:
            if self.waiter.done():
                self.extra = True  # after the answer: the connection is not reused
            elif self.failure is not None:
                self.fail(self.failure)
            elif isinstance(exc, httptools.HttpParserError):
                self.fail(PlainBadAnswer(f"a malformed answer: {exc}"))
            else:
                self.fail(exc)

    def end(self, exc: Exception | None) -> None:
        """The connection ended (``exc``: why, None for the peer's clean close)."""
        if self.waiter.done():
            return
        if exc is not None:
            self.fail(exc)
        elif self.in_head:
            if self.head_bytes == 0:
                self.fail(http.client.RemoteDisconnected("the server closed without an answer"))
            else:
                self.fail(PlainBadAnswer("the connection ended inside the answer's head"))
        elif self.length or self.chunked:  # the body was to end before the connection
            self.fail(http.client.IncompleteRead(bytes(self.body)))
        else:  # the body ends with the connection
            self.keep_alive = False
            self.waiter.set_result((self.status, self.headers, bytes(self.body)))

    def release(self) -> None:
        """Let go of the parser once the answer is settled: the parser calls this answer back
        and this answer holds the parser, a cycle that reference counting alone cannot free.
        Anything fed later is only noted (:meth:`feed` reads a settled answer's bytes as extra,
        without the parser)."""
        if self.waiter.done():
            del self.parser

    def late(self) -> None:
        """The deadline passed."""
        self.fail(PlainTimeout("no answer in time"))

    def fail(self, exc: BaseException) -> None:
        if not self.waiter.done():
            self.waiter.set_exception(exc)

    def _stop(self, exc: BaseException) -> None:
        """Stop parsing with ``exc`` (raised through the parser, which wraps it)."""
        self.failure = exc
        raise exc

    # -- parser callbacks --

    def on_message_begin(self) -> None:
        if self.waiter.done():  # a second answer to one request: stop before it is parsed
            self.extra = True
            raise PlainBadAnswer("bytes after the answer")

    def on_header(self, name: bytes, value: bytes) -> None:
        self.heard = True
        self.lines += 1
        if self.lines > MAX_HEADERS:
            self._stop(PlainBadAnswer(f"an answer with more than {MAX_HEADERS} header lines"))
        if not self.in_head:
            return  # a trailer: checked, not kept (as http.client)
        lowered = name.lower()
        if lowered == b"content-length":
            self.length = True
        elif lowered == b"transfer-encoding":
            self.chunked = value.rsplit(b",", 1)[-1].strip().lower() == b"chunked"
        self.headers.append((name.decode("latin-1"), value.decode("latin-1")))

    def on_headers_complete(self) -> None:
        self.heard = True
        self.in_head = False
        self.status = self.parser.get_status_code()
        self.lines = 0
        if self.status == 101:
            self._stop(PlainBadAnswer("an answer switching protocols, which was not asked for"))
        if self.head_only and self.status >= 200:
            self.keep_alive = False  # the parser waits for a body a HEAD answer has not
            self.waiter.set_result((self.status, self.headers, b""))

    def on_body(self, piece: bytes) -> None:
        self.heard = True
        self.body += piece
        if len(self.body) > self.max_bytes:
            self._stop(PlainTooLarge(f"an answer of more than {self.max_bytes:,} bytes"))

    def on_chunk_header(self) -> None:
        self.heard = True

    def on_chunk_complete(self) -> None:
        self.heard = True

    def on_message_complete(self) -> None:
        self.heard = True
        if self.waiter.done():
            return
        if self.status < 200:  # an interim answer (100 Continue, 103): the answer follows
            self.in_head = True
            self.headers = []
            self.length = self.chunked = False
            return
        self.keep_alive = self.parser.should_keep_alive()
        self.waiter.set_result((self.status, self.headers, bytes(self.body)))


def _host_header(host: str, port: int) -> str:
    """The ``Host`` header :mod:`http.client` sends for ``host`` and ``port``."""
    text = host if host.isascii() else host.encode("idna").decode("ascii")
    if ":" in text:
        text = f"[{text.split('%', 1)[0]}]"
    return text if port == 80 else f"{text}:{port}"


def _header_line(name: str, value: str) -> bytes:
    """``name: value`` and a line end, checked as :mod:`http.client` checks a header."""
    raw_name = name.encode("ascii")
    raw_value = value.encode("latin-1")
    if not _LEGAL_HEADER_NAME(raw_name):
        raise ValueError(f"expected a header name, found {name!r}")
    if _ILLEGAL_HEADER_VALUE(raw_value):
        raise ValueError(f"expected a header value without line breaks, found {value!r}")
    return raw_name + b": " + raw_value + b"\r\n"


async def _closer(idle: list[_Connection]) -> AsyncIterator[None]:
    """Suspended until its loop shuts down, then closes the loop's idle connections."""
    try:
        yield
    finally:
        for conn in list(idle):
            conn.drop()


_CLOSERS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, list[Any]] = (
    weakref.WeakKeyDictionary()
)


def _close_with_loop(idle: list[_Connection]) -> None:
    """Close the running loop's idle connections ``idle`` while that loop shuts down, before it
    closes (a transport of a closed loop cannot be closed: it would leak its socket). The hook is
    asyncio's own for async generators: ``asyncio.run`` (and uvicorn, which runs on it) finalises
    every started one, while the loop still runs, before closing it."""
    closer = _closer(idle)
    with contextlib.suppress(StopIteration):
        cast(Coroutine[Any, Any, None], closer.__anext__()).send(None)  # started: now finalised
    _CLOSERS.setdefault(asyncio.get_running_loop(), []).append(closer)  # (the set is weak)


def _close_idle(idle: dict[asyncio.AbstractEventLoop, list[_Connection]]) -> None:
    """Close and forget every loop's idle connections in ``idle``."""
    for loop, conns in list(idle.items()):
        idle.pop(loop, None)
        for conn in list(conns):
            if loop.is_closed():
                continue
            try:
                running = asyncio.get_running_loop()
            except RuntimeError:
                running = None
            if running is loop:
                conn.drop()
            else:
                with contextlib.suppress(RuntimeError):  # closed in the meantime
                    loop.call_soon_threadsafe(conn.drop)
