"""The guard service on a loopback port in a thread, for tests, benchmarks and notebooks.

:func:`serving` runs an app under uvicorn on 127.0.0.1 (a port the OS picks) and yields its base
URL. The socket is created with ``IPPROTO_TCP`` so that asyncio sets ``TCP_NODELAY`` on accepted
connections (without it every kept-alive request pays a 40 ms Nagle/delayed-ACK stall).
Imports uvicorn (the ``[serve]`` extra) when called.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any


@contextlib.contextmanager
def serving(app: Any, **options: Any) -> Iterator[str]:
    """Serve ``app`` under uvicorn on 127.0.0.1 (a port the OS picks) in a thread; its base URL.
    ``options`` are uvicorn's (:func:`governor.serve.connections.uvicorn_options`)."""
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)  # TCP_NODELAY
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(app, log_level="warning", lifespan="off", access_log=False, **options)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the guard service did not start")
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()
