"""The upstream stub of `governor bench serve`: an asyncio HTTP server on 127.0.0.1 that answers
a fixed chat completion (text, or a tool call when tools are offered) after a fixed latency, and
counts the calls it gets. Imports nothing of governor but the bench's constants."""

from __future__ import annotations

import asyncio
import json
import threading
from typing import Any

from governor.bench.serve_setup import TEXT_REPLY


def _completion(body: dict[str, Any]) -> dict[str, Any]:
    """The fixed answer: a tool call to ``search`` when tools are offered, else the fixed text."""
    if body.get("tools"):
        call = {
            "id": "call_0",
            "type": "function",
            "function": {"name": "search", "arguments": '{"query": "lake trails"}'},
        }
        message: dict[str, Any] = {"role": "assistant", "content": None, "tool_calls": [call]}
        finish = "tool_calls"
    else:
        message, finish = {"role": "assistant", "content": TEXT_REPLY}, "stop"
    n = body.get("n") or 1
    choices = [{"index": i, "message": message, "finish_reason": finish} for i in range(n)]
    return {
        "id": "chatcmpl-stub",
        "object": "chat.completion",
        "created": 0,
        "model": body.get("model") or "stub",
        "choices": choices,
        "usage": {"prompt_tokens": 20, "completion_tokens": 16, "total_tokens": 36},
    }


class Stub:
    """An OpenAI-compatible chat endpoint on 127.0.0.1 answering after ``latency_s`` (HTTP/1.1,
    keep-alive; its own event loop in a thread). ``calls`` counts chat completions answered."""

    def __init__(self, latency_s: float) -> None:
        self.latency_s = latency_s
        self.calls = 0
        self.port = 0
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._stop: asyncio.Event | None = None
        self._thread = threading.Thread(target=self._run, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def __enter__(self) -> Stub:
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("the upstream stub did not start")
        return self

    def __exit__(self, *exc: object) -> None:
        if self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(10)

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._loop.run_until_complete(self._main())
        pending = asyncio.all_tasks(self._loop)  # connections still open: closed here
        for task in pending:
            task.cancel()
        self._loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
        self._loop.close()

    async def _main(self) -> None:
        self._stop = asyncio.Event()
        server = await asyncio.start_server(self._serve, "127.0.0.1", 0, backlog=1024)
        self.port = server.sockets[0].getsockname()[1]
        self._ready.set()
        async with server:
            await self._stop.wait()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                method, path, _ = lines[0].split(" ", 2)
                headers = {
                    k.strip().lower(): v.strip()
                    for k, _, v in (line.partition(":") for line in lines[1:] if line)
                }
                raw = await reader.readexactly(int(headers.get("content-length") or 0))
                if method == "POST" and path.endswith("/chat/completions"):
                    await asyncio.sleep(self.latency_s)
                    self.calls += 1
                    status, body = "200 OK", _completion(json.loads(raw))
                elif path.endswith("/models"):
                    status, body = "200 OK", {"object": "list", "data": [{"id": "stub"}]}
                else:
                    status, body = "404 Not Found", {"error": {"message": f"no route {path}"}}
                payload = json.dumps(body).encode()
                writer.write(
                    f"HTTP/1.1 {status}\r\nContent-Type: application/json\r\n"
                    f"Content-Length: {len(payload)}\r\n\r\n".encode()
                    + payload
                )
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError, ValueError, asyncio.CancelledError):
            pass  # a client gone, a malformed request, or the stub stopping with the connection open
        finally:
            writer.close()
