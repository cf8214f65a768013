"""The upstream stub of `governor bench serve`: an asyncio HTTP server on 127.0.0.1 that answers
a chat completion (a tool call when tools are offered, else a small-talk text that differs from
call to call, as a model's replies do) after a fixed latency, and counts the calls it gets. Asked with ``stream: true`` it streams the text as chat completion
chunks (Server-Sent Events), one word after the latency and each next one ``token_s`` later,
then closes the connection. It runs in a process of its own, as a model server does: in the
service's process its work would take the service's interpreter lock and be measured as guard
time. Imports nothing of governor but the bench's constants."""

from __future__ import annotations

import asyncio
import contextlib
import json
import multiprocessing
import queue
from collections.abc import Callable, Coroutine
from multiprocessing.queues import Queue
from typing import Any

from governor.bench.service.workload import TEXT_REPLY, reply_text


def _completion(body: dict[str, Any], k: int = 0) -> dict[str, Any]:
    """The answer to the ``k``-th call: a tool call to ``search`` when tools are offered, else a
    small-talk text, a different one for each call and choice (:func:`reply_text`: the ``n``
    choices of call ``k`` are texts ``k*n`` to ``k*n + n - 1``, so that, ``n`` being the same
    in a bench cell, no text repeats within 4,096 texts)."""
    n = body.get("n") or 1
    if body.get("tools"):
        call = {
            "id": "call_0",
            "type": "function",
            "function": {"name": "search", "arguments": '{"query": "lake trails"}'},
        }
        message: dict[str, Any] = {"role": "assistant", "content": None, "tool_calls": [call]}
        finish = "tool_calls"
        choices = [{"index": i, "message": message, "finish_reason": finish} for i in range(n)]
    else:
        choices = [
            {
                "index": i,
                "message": {"role": "assistant", "content": reply_text(k * n + i)},
                "finish_reason": "stop",
            }
            for i in range(n)
        ]
    return {
        "id": "chatcmpl-stub",
        "object": "chat.completion",
        "created": 0,
        "model": body.get("model") or "stub",
        "choices": choices,
        "usage": {"prompt_tokens": 20, "completion_tokens": 16, "total_tokens": 36},
    }


def _chunks(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The fixed text as a stream's chunks: one word each (with the space before it), a finish
    chunk and a usage chunk."""
    words = TEXT_REPLY.split(" ")
    pieces = [words[0]] + [" " + w for w in words[1:]]
    head = {"id": "chatcmpl-stub", "object": "chat.completion.chunk", "created": 0}
    head["model"] = body.get("model") or "stub"

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {**head, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    usage = {"prompt_tokens": 20, "completion_tokens": len(pieces), "total_tokens": 0}
    return [
        *(chunk({"content": p}) for p in pieces),
        chunk({}, "stop"),
        {**head, "choices": [], "usage": usage},
    ]


class Stub:
    """An OpenAI-compatible chat endpoint on 127.0.0.1 answering after ``latency_s`` (HTTP/1.1,
    keep-alive; a stream ``token_s`` per word, then the connection closes), served by a process
    of its own. ``calls`` counts chat completions answered."""

    def __init__(self, latency_s: float, token_s: float = 0.0) -> None:
        self.latency_s = latency_s
        self.token_s = token_s
        self.port = 0
        context = multiprocessing.get_context("spawn")
        self._calls = context.Value("q", 0)
        self._stop = context.Event()
        self._ports: Queue[int] = context.Queue()
        self._process = context.Process(
            target=_serve_process,
            args=(latency_s, token_s, self._calls, self._stop, self._ports),
            daemon=True,
        )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def calls(self) -> int:
        """Chat completions answered so far."""
        with self._calls.get_lock():
            return int(self._calls.value)

    def __enter__(self) -> Stub:
        self._process.start()
        try:
            self.port = self._ports.get(timeout=30)
        except queue.Empty:
            self.__exit__()
            raise RuntimeError("the upstream stub did not start within 30 s") from None
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._process.join(10)
        if self._process.is_alive():
            self._process.kill()
            self._process.join(5)


def _serve_process(latency_s: float, token_s: float, calls: Any, stop: Any, ports: Any) -> None:
    """The stub's process: serve until ``stop`` is set (on uvloop when installed)."""
    runner: Callable[[Coroutine[Any, Any, None]], None] = asyncio.run
    with contextlib.suppress(ImportError):
        import uvloop

        runner = uvloop.run
    runner(_StubServer(latency_s, token_s, calls).main(stop, ports))


class _StubServer:
    def __init__(self, latency_s: float, token_s: float, calls: Any) -> None:
        self.latency_s = latency_s
        self.token_s = token_s
        self.calls = calls

    async def main(self, stop: Any, ports: Any) -> None:
        server = await asyncio.start_server(self._serve, "127.0.0.1", 0, backlog=1024)
        ports.put(server.sockets[0].getsockname()[1])
        async with server:
            while not stop.is_set():
                await asyncio.sleep(0.05)

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
                    asked = json.loads(raw)
                    await asyncio.sleep(self.latency_s)
                    with self.calls.get_lock():
                        self.calls.value += 1
                        k = int(self.calls.value)
                    if asked.get("stream") and not asked.get("tools"):
                        await self._stream(writer, asked)
                        return
                    status, body = "200 OK", _completion(asked, k)
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

    async def _stream(self, writer: asyncio.StreamWriter, body: dict[str, Any]) -> None:
        """The streamed answer; the end of the connection is the end of the stream."""
        writer.write(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n"
        )
        for i, event in enumerate(_chunks(body)):
            if i and self.token_s and event["choices"]:
                await asyncio.sleep(self.token_s)
            writer.write(f"data: {json.dumps(event)}\n\n".encode())
            await writer.drain()
        writer.write(b"data: [DONE]\n\n")
        await writer.drain()
