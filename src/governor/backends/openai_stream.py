"""Reading a chat completion as it is generated: chunks over Server-Sent Events, for
:meth:`OpenAIBackend.stream_chat <governor.backends.openai.OpenAIBackend.stream_chat>`.

:class:`StreamReader` asks the endpoint with ``stream: true`` and hands each piece of text to
``on_delta`` as it arrives (with whether the reply has started a tool call by then); tool calls
are put together from their pieces and only returned whole, in the
:class:`~governor.backends.base.Completion`. A server that ignores ``stream`` and answers with one
JSON completion is read as one piece.

The same bounds as a whole reply: the backend's circuit breaker, ``timeout_s`` between pieces,
one deadline for the call (``deadline_s``, by default ``timeout_s``), at most
:data:`~governor.backends.openai_answers.MAX_RESPONSE_BYTES`; timeouts, connection errors, 429
and 5xx answers are retried (bounded, doubling backoff) only while no text has been handed over.
A stream that breaks, carries an error or ends before its end (no ``[DONE]`` and no
``finish_reason``) raises a :class:`~governor.errors.BackendError`; httpx errors are mapped here,
in the backend, as :mod:`.openai` maps its own, and nowhere else. Each request is counted as an
LLM call with :func:`~governor.usage.record_llm_call` (failed or not), with the tokens the server
reports. Imports httpx, the backend types and breaker, the answers reader, the error tree and the
usage meter; never :mod:`.openai` (which imports this module).
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping
from typing import Any, Protocol

import httpx

from governor.backends.base import Completion, OnDelta, ToolCall
from governor.backends.breaker import CircuitBreaker
from governor.backends.openai_answers import MAX_RESPONSE_BYTES, completions, token_counts
from governor.config import BackendConfig
from governor.errors import (
    BackendError,
    BackendHTTPError,
    BackendResponseError,
    BackendTimeout,
    BackendUnavailable,
    ConfigError,
    expected,
)
from governor.files import json_loads
from governor.usage import Usage, record_llm_call


class Endpoint(Protocol):
    """What the reader uses of an :class:`~governor.backends.openai.OpenAIBackend`."""

    name: str
    base_url: str
    config: BackendConfig
    breaker: CircuitBreaker

    @property
    def client(self) -> httpx.Client: ...

    def vendor_message(self, response: httpx.Response) -> str: ...


class StreamReader:
    """One streamed call: retries before the first piece, then the pieces, counted."""

    def __init__(self, backend: Endpoint, body: Mapping[str, Any], on_delta: OnDelta) -> None:
        self.backend = backend
        self.body = body
        self.on_delta = on_delta
        self.url = f"{backend.base_url}/chat/completions"
        self.handed = False  # whether text went to on_delta (no retry after that)
        self.text: list[str] = []
        self.calls: dict[int, dict[str, str]] = {}
        self.finish: str | None = None
        self.tokens = (0, 0)

    def run(self) -> Completion:
        backend, config = self.backend, self.backend.config
        start = time.perf_counter()
        requests = 0
        try:
            backend.breaker.before()
        except BackendError:
            record_llm_call(Usage(calls=0, seconds=time.perf_counter() - start, failed=1))
            raise
        deadline = time.monotonic() + (config.deadline_s or config.timeout_s)
        while True:
            requests += 1
            try:
                completion = self._request(deadline)
            except BackendError as exc:
                delay = config.backoff_s * 2 ** (requests - 1)
                retryable = not self.handed and (
                    isinstance(exc, (BackendTimeout, BackendUnavailable))
                    or (isinstance(exc, BackendHTTPError) and exc.retryable)
                )
                in_time = time.monotonic() + delay < deadline
                if retryable and requests <= config.max_retries and in_time:
                    time.sleep(delay)
                    continue
                alive = isinstance(exc, BackendHTTPError) and not exc.retryable
                backend.breaker.success() if alive else backend.breaker.failure()
                self._count(requests, start, failed=1)
                raise
            except BaseException:  # on_delta stopped the reading: the call itself went well
                backend.breaker.success()
                self._count(requests, start)
                raise
            backend.breaker.success()
            self._count(requests, start)
            return completion

    def _count(self, requests: int, start: float, failed: int = 0) -> None:
        prompt, done = self.tokens
        seconds = time.perf_counter() - start
        record_llm_call(Usage(requests, prompt, done, seconds, failed))

    def _request(self, deadline: float) -> Completion:
        backend, timeout = self.backend, self.backend.config.timeout_s
        late = BackendTimeout(f"{backend.name}: no answer from {self.url} within {timeout:g} s")
        remaining = min(deadline - time.monotonic(), timeout)
        if remaining <= 0:
            raise late
        self.text, self.calls, self.finish = [], {}, None  # a retry starts over
        headers = {"Accept": "text/event-stream"}
        client = backend.client  # the backend's connection pool, headers and transport
        try:
            with client.stream(
                "POST", self.url, json=self.body, headers=headers, timeout=remaining
            ) as response:
                if response.status_code >= 400:
                    response.read()
                    raise BackendHTTPError(
                        f"{backend.name}: {self.url} answered HTTP {response.status_code}"
                        f"{backend.vendor_message(response)}",
                        response.status_code,
                    )
                if "json" in response.headers.get("content-type", "").split(";")[0]:
                    return self._whole(response, deadline, late)
                return self._events(response, deadline, late)
        except httpx.TimeoutException as exc:
            raise late from exc
        except (httpx.TransportError, httpx.StreamError) as exc:
            reason = str(exc) or type(exc).__name__
            raise BackendUnavailable(f"{backend.name}: cannot reach {self.url}: {reason}") from exc

    def _lines(self, response: httpx.Response) -> Iterator[str]:
        """The stream's lines, its bytes counted as they arrive (a line that never ends is cut
        off at the byte bound, not held whole); bytes that are not UTF-8 become U+FFFD."""
        size, pending = 0, []
        for chunk in response.iter_bytes():
            size += len(chunk)
            if size > MAX_RESPONSE_BYTES:
                raise self._unexpected(f"a stream of at most {MAX_RESPONSE_BYTES:,} bytes", "more")
            if b"\n" not in chunk:
                pending.append(chunk)
                continue
            *lines, rest = b"".join([*pending, chunk]).split(b"\n")
            pending = [rest]
            for line in lines:
                yield line.rstrip(b"\r").decode("utf-8", errors="replace")
        if any(pending):
            yield b"".join(pending).rstrip(b"\r").decode("utf-8", errors="replace")

    def _events(self, response: httpx.Response, deadline: float, late: Exception) -> Completion:
        done = False
        for line in self._lines(response):
            if time.monotonic() > deadline:
                raise late
            if not line.startswith("data:"):
                continue  # comments, event names, blank lines between events
            data = line[5:].strip()
            if data == "[DONE]":
                done = True
                break
            self._chunk(data)
        if not done and self.finish is None:
            raise self._unexpected("a stream that ends with [DONE]", "a stream cut short")
        return self._completion()

    def _chunk(self, raw: str) -> None:
        try:
            data = json_loads(raw)
        except ValueError:
            raise self._unexpected("a JSON chunk", raw[:120]) from None
        if not isinstance(data, dict):
            raise self._unexpected("a JSON object chunk", type(data).__name__)
        if data.get("error") is not None:
            raise BackendResponseError(
                f"{self.backend.name}: the stream carried an error: {str(data['error'])[:200]}"
            )
        if isinstance(data.get("usage"), dict):
            self.tokens = token_counts(data)
        for choice in data.get("choices") or ():
            if not isinstance(choice, dict) or choice.get("index", 0) != 0:
                continue  # one choice is streamed
            if isinstance(choice.get("finish_reason"), str):
                self.finish = choice["finish_reason"]
            delta = choice.get("delta")
            if not isinstance(delta, dict):
                continue
            for call in delta.get("tool_calls") or ():
                self._call_piece(call)
            piece = delta.get("content")
            if isinstance(piece, str) and piece:
                self.text.append(piece)
                self.handed = True
                self.on_delta(piece, bool(self.calls))
            elif self.calls:
                self.handed = True
                self.on_delta("", True)

    def _call_piece(self, call: Any) -> None:
        if not isinstance(call, dict) or not isinstance(call.get("index", 0), int):
            raise self._unexpected("a tool call piece with an integer index", call)
        slot = self.calls.setdefault(call.get("index", 0), {"id": "", "name": "", "arguments": ""})
        given = call.get("function")
        fn: dict[str, Any] = given if isinstance(given, dict) else {}
        for key, value in (("id", call.get("id")), ("name", fn.get("name"))):
            if isinstance(value, str) and value:
                slot[key] = value
        arguments = fn.get("arguments")
        if isinstance(arguments, str):
            slot["arguments"] += arguments

    def _completion(self) -> Completion:
        calls = []
        for i, (_, call) in enumerate(sorted(self.calls.items())):
            raw: dict[str, Any] = {
                "function": {"name": call["name"], "arguments": call["arguments"] or "{}"}
            }
            if call["id"]:
                raw["id"] = call["id"]
            try:
                calls.append(ToolCall.from_dict(raw, f"tool_calls[{i}]", i))
            except ConfigError as exc:
                raise self._unexpected(f"a well-formed function call ({exc})", call) from exc
        return Completion("".join(self.text), self.finish, None, tuple(calls))

    def _whole(self, response: httpx.Response, deadline: float, late: Exception) -> Completion:
        """A server that answered with one JSON completion: read as one piece."""
        content = bytearray()
        for chunk in response.iter_bytes():
            content += chunk
            if len(content) > MAX_RESPONSE_BYTES:
                raise self._unexpected(f"an answer of at most {MAX_RESPONSE_BYTES:,} bytes", "more")
            if time.monotonic() > deadline:
                raise late
        try:
            data = json_loads(bytes(content))
        except ValueError:
            raise self._unexpected("a JSON body", bytes(content[:120])) from None
        if not isinstance(data, dict):
            raise self._unexpected("a JSON object", type(data).__name__)
        self.tokens = token_counts(data)
        first = completions(data, unexpected=lambda what, found, _: self._unexpected(what, found))[
            0
        ]
        self.handed = True
        self.on_delta(first.text, bool(first.tool_calls))
        return first

    def _unexpected(self, what: str, found: Any) -> BackendResponseError:
        return BackendResponseError(
            f"{self.backend.name}: {self.url}: {expected(what, str(found)[:120])}"
        )
