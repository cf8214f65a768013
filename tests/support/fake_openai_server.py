"""A small OpenAI-compatible HTTP server on 127.0.0.1, scriptable per test.

Each path answers with its queued :class:`Reply` objects in order, then with the default
behaviour: chat completions that honour ``n`` (at most ``max_choices`` of them when that is set,
as llama.cpp's server returns one) and ``logprobs``, embeddings, and a model list.
Every request is recorded (method, path, headers, JSON body) for assertions.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections import defaultdict, deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

PREFIX = "/v1"
API_KEY = "sk-test-secret-0123456789"  # what the tests configure; must never be shown


@dataclass(frozen=True)
class Reply:
    """One scripted answer: a status, a body (JSON-encoded unless str/bytes), headers, a delay.

    Faults: ``drip_s`` sends the body a few bytes at a time with that pause between; ``truncate``
    announces the full length and closes the connection halfway through the body; ``reset``
    closes the connection without answering.

    ``events`` makes the answer a Server-Sent Events stream instead of a body: each item is one
    ``data:`` event (JSON-encoded unless str), sent ``event_s`` apart, the connection closed
    after the last one (``truncate``: after the first half).
    """

    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    drip_s: float = 0.0
    truncate: bool = False
    reset: bool = False
    events: tuple[Any, ...] = ()
    event_s: float = 0.0


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    headers: dict[str, str]
    body: Any


def chat_reply(body: dict[str, Any], max_choices: int | None = None) -> dict[str, Any]:
    """A well-formed chat completion: choice i says ``answer i``; logprobs when asked; at most
    ``max_choices`` choices when given."""
    choices = []
    asked = body.get("n", 1)
    for i in range(asked if max_choices is None else min(asked, max_choices)):
        choice: dict[str, Any] = {
            "index": i,
            "message": {"role": "assistant", "content": f"answer {i}"},
            "finish_reason": "stop",
        }
        if body.get("logprobs"):
            top = [
                {"token": f"alt{k}", "logprob": -1.0 - k}
                for k in range(body.get("top_logprobs", 0))
            ]
            choice["logprobs"] = {
                "content": [
                    {"token": "answer", "logprob": -0.5, "top_logprobs": top},
                    {"token": f" {i}", "logprob": -0.25, "top_logprobs": top},
                ]
            }
        choices.append(choice)
    choices.reverse()  # the client must order them by index
    usage = {"prompt_tokens": 7, "completion_tokens": 2 * len(choices), "total_tokens": 0}
    return {
        "object": "chat.completion",
        "model": body.get("model"),
        "choices": choices,
        "usage": usage,
    }


def embeddings_reply(body: dict[str, Any]) -> dict[str, Any]:
    """Embedding i of ``input`` is [i, len(text), 1]; listed in reverse order of index."""
    data = [
        {"object": "embedding", "index": i, "embedding": [float(i), float(len(text)), 1.0]}
        for i, text in enumerate(body["input"])
    ]
    return {"object": "list", "data": data[::-1], "usage": {"prompt_tokens": len(data)}}


class FakeOpenAIServer:
    """Start with :meth:`start` (port 0: the OS picks one), stop with :meth:`stop`. Each
    connection carries one request, unless ``keep_alive`` (HTTP/1.1: kept open between them)."""

    def __init__(self, keep_alive: bool = False) -> None:
        self.requests: list[Request] = []
        self.max_choices: int | None = None  # fewer choices than asked (None: as many as asked)
        self._script: dict[str, deque[Reply]] = defaultdict(deque)
        self._lock = threading.Lock()
        handler = _handler_for(self)
        if keep_alive:
            handler.protocol_version = "HTTP/1.1"
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
        )

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}{PREFIX}"

    def start(self) -> FakeOpenAIServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(5)

    def script(self, path: str, *replies: Reply) -> None:
        """Queue ``replies`` for ``path`` (e.g. "/chat/completions"), answered in order."""
        with self._lock:
            self._script[PREFIX + path].extend(replies)

    def clear(self) -> None:
        """Forget the replies still queued."""
        with self._lock:
            self._script.clear()

    def requests_to(self, path: str) -> list[Request]:
        return [r for r in self.requests if r.path == PREFIX + path]

    def answer(self, method: str, path: str, headers: dict[str, str], raw: bytes) -> Reply:
        body = json.loads(raw) if raw else None
        with self._lock:
            self.requests.append(Request(method, path, headers, body))
            queued = self._script[path]
            scripted = queued.popleft() if queued else None
        if scripted is not None:
            return scripted
        if path == PREFIX + "/chat/completions":
            return Reply(body=chat_reply(body, self.max_choices))
        if path == PREFIX + "/embeddings":
            return Reply(body=embeddings_reply(body))
        if path == PREFIX + "/models":
            return Reply(body={"object": "list", "data": [{"id": "fake-model"}]})
        return Reply(404, {"error": {"message": f"no route {path}"}})


def _handler_for(server: FakeOpenAIServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def _serve(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            reply = server.answer(self.command, self.path, dict(self.headers.items()), raw)
            if reply.delay_s:
                time.sleep(reply.delay_s)
            if reply.reset:
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)
                return
            if reply.events:
                self._stream(reply)
                return
            body = reply.body
            if isinstance(body, str):
                payload = body.encode()
            elif isinstance(body, bytes):
                payload = body
            else:
                payload = json.dumps(body).encode()
            try:
                self.send_response(reply.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                if reply.truncate:
                    self.wfile.write(payload[: len(payload) // 2])
                    self.wfile.flush()
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                elif reply.drip_s:
                    for i in range(0, len(payload), 4):
                        self.wfile.write(payload[i : i + 4])
                        self.wfile.flush()
                        time.sleep(reply.drip_s)
                else:
                    self.wfile.write(payload)
            except (BrokenPipeError, ConnectionResetError, OSError):
                pass  # the client gave up (a timeout test)

        def _stream(self, reply: Reply) -> None:
            self.close_connection = True  # the end of the stream is the end of the connection
            sent = reply.events[: len(reply.events) // 2] if reply.truncate else reply.events
            try:
                self.send_response(reply.status)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                for event in sent:
                    data = event if isinstance(event, str) else json.dumps(event)
                    self.wfile.write(f"data: {data}\n\n".encode())
                    self.wfile.flush()
                    time.sleep(reply.event_s)
            except (BrokenPipeError, ConnectionResetError, OSError):
                pass  # the client stopped reading

        do_GET = do_POST = _serve

        def log_message(self, format: str, *args: Any) -> None:
            pass  # keep test output quiet

    return Handler
