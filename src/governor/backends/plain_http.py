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
for the rest (unreachable, reset, a malformed answer). Imports only the standard library.
"""

from __future__ import annotations

import http.client
import os
import select
import socket
import threading
import time
import weakref
from collections.abc import Mapping
from urllib.parse import urlsplit

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
        parts = urlsplit(base_url)
        if parts.scheme != "http" or not parts.hostname:
            raise ValueError(f"expected a plain http URL with a host, found {base_url!r}")
        self.host = parts.hostname
        self.port = parts.port or 80
        self.prefix = parts.path.rstrip("/")
        self.headers = {**headers, "Accept-Encoding": "identity"}
        self.json_headers = {**self.headers, "Content-Type": "application/json"}
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
    it, or sent bytes nobody asked for; either way it cannot carry the next request)."""
    try:
        ready, _, _ = select.select([sock], [], [], 0)
    except (OSError, ValueError):
        return True
    return bool(ready)
