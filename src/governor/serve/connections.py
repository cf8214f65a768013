"""The service's connections under uvicorn: a request's head must arrive in time.

uvicorn closes an idle kept-alive connection after ``timeout_keep_alive``, but a client that
sends a request's head a byte at a time keeps its connection (and a slot of
``limit_concurrency``) for as long as it likes. :func:`head_timeout_protocol` is uvicorn's
httptools protocol (h11 where httptools is absent) with one more timer: armed when a connection opens and whenever it waits for its next
request, cancelled when a request's head was read; when it fires first the connection is closed.
Its writes within one turn of the loop leave in one system call (a response's head and body).
:func:`uvicorn_options` gathers the connection settings of ``governor serve``. Imports uvicorn
(the ``[serve]`` extra) when called.
"""

from __future__ import annotations

import asyncio
from typing import Any

HEADER_TIMEOUT_S = 10.0
"""The longest a request's head (request line and headers) may take to arrive."""
KEEP_ALIVE_S = 5
"""How long an idle kept-alive connection stays open."""
MAX_CONNECTIONS = 1000
"""Connections served at once; more are answered 503 at once (uvicorn's ``limit_concurrency``)."""


class _HeadTimer:
    """The head timer, mixed into a uvicorn protocol (which has ``loop`` and ``transport``)."""

    head_seconds: float = HEADER_TIMEOUT_S
    _head_timer: asyncio.TimerHandle | None = None
    loop: asyncio.AbstractEventLoop
    transport: asyncio.Transport

    def _arm(self) -> None:
        self._disarm()
        self._head_timer = self.loop.call_later(self.head_seconds, self._head_too_slow)

    def _disarm(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_too_slow(self) -> None:
        self._head_timer = None
        if not self.transport.is_closing():
            self.transport.close()

    def connection_made(self, transport: Any) -> None:
        super().connection_made(transport)  # type: ignore[misc]
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)  # type: ignore[misc]


class _Coalesced:
    """A transport whose writes within one turn of the event loop leave as one: uvicorn writes a
    response's head and its body separately, two system calls and two packets where one does.
    The bytes are sent at the end of the turn (``call_soon``), in order, before any close."""

    __slots__ = ("_held", "_loop", "_transport")

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        self._transport = transport
        self._loop = loop
        self._held: list[bytes] = []

    def write(self, data: bytes) -> None:
        if not self._held:
            self._loop.call_soon(self._send)
        self._held.append(data)

    def _send(self) -> None:
        held, self._held = self._held, []
        if held and not self._transport.is_closing():
            self._transport.write(held[0] if len(held) == 1 else b"".join(held))

    def close(self) -> None:
        self._send()
        self._transport.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


def head_timeout_protocol(seconds: float) -> type[asyncio.Protocol]:
    """uvicorn's httptools protocol (its h11 one where httptools is not installed), closing a
    connection whose request head takes over ``seconds``."""
    try:
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
    except ImportError:
        return _h11_head_timeout_protocol(seconds)

    class HttpToolsHeadTimeoutProtocol(_HeadTimer, HttpToolsProtocol):
        head_seconds = seconds

        def connection_made(self, transport: Any) -> None:
            super().connection_made(_Coalesced(transport, self.loop))

        def on_headers_complete(self) -> None:
            self._disarm()  # a request's head was read
            super().on_headers_complete()

        def on_response_complete(self) -> None:
            pipelined = bool(self.pipeline)  # the next request's head is read already
            super().on_response_complete()
            if not pipelined and not self.transport.is_closing():
                self._arm()  # waiting for the next request's head

    return HttpToolsHeadTimeoutProtocol


def _h11_head_timeout_protocol(seconds: float) -> type[asyncio.Protocol]:
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class HeadTimeoutProtocol(_HeadTimer, H11Protocol):
        head_seconds = seconds
        _cycle_when_armed: Any = None

        def _arm(self) -> None:
            super()._arm()
            self._cycle_when_armed = self.cycle

        def handle_events(self) -> None:
            super().handle_events()
            if self._head_timer is not None and self.cycle is not self._cycle_when_armed:
                self._disarm()  # a request's head was read

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing():
                self._arm()  # waiting for the next request's head

    return HeadTimeoutProtocol


def uvicorn_options(
    *,
    header_timeout_s: float = HEADER_TIMEOUT_S,
    keep_alive_s: int = KEEP_ALIVE_S,
    max_connections: int | None = MAX_CONNECTIONS,
) -> dict[str, Any]:
    """uvicorn's settings for the service's connections."""
    return {
        "http": head_timeout_protocol(header_timeout_s),
        "timeout_keep_alive": keep_alive_s,
        "limit_concurrency": max_connections,
    }
