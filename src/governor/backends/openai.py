"""A backend for OpenAI-compatible HTTP endpoints (hosted APIs, vLLM, llama.cpp server, Ollama).

httpx errors and unusable answers are mapped once, here, to the :mod:`governor.errors` tree.
Timeouts, connection errors, 429 and 5xx answers are retried a bounded number of times with
doubling backoff, all within one deadline per call (``deadline_s``, by default ``timeout_s``);
every HTTP request made is counted as an LLM call, retries included. A server that returns fewer
choices than ``n`` (llama.cpp's server returns one) is asked again for the rest, within the same
deadline, each request counted; one that returns more is cut to ``n``. A body is read in chunks,
at most :data:`MAX_RESPONSE_BYTES` and within the deadline, so a server that drips or floods
cannot hold a call. After ``breaker_failures`` consecutive failed calls a
:class:`~governor.backends.breaker.CircuitBreaker` fails calls at once until a probe succeeds.
:meth:`OpenAIBackend.stream_chat` reads one completion as it is generated
(:mod:`.openai_stream`), under the same bounds. A plain ``http://`` endpoint with no proxy is
asked through :mod:`.plain_http` (the standard library's client, about half the CPU per request
of httpx); streams, ``https``, proxies and test transports through httpx. Imports httpx, the
backend types, breaker, answers, stream reader and plain-http client, the config, the error tree
and the usage meter.
"""

from __future__ import annotations

import http.client
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Any, TypeVar

import httpx
import numpy as np

from governor.backends.base import (
    Backend,
    ChatRequest,
    ChatResult,
    Completion,
    Message,
    OnDelta,
)
from governor.backends.breaker import CircuitBreaker
from governor.backends.openai_answers import (
    MAX_RESPONSE_BYTES,
    completions,
    embeddings,
    token_counts,
)
from governor.backends.openai_stream import StreamReader
from governor.backends.plain_http import (
    AsyncPlainHttp,
    PlainHttp,
    PlainTimeout,
    PlainTooLarge,
    plain_http_usable,
)
from governor.config import BackendConfig
from governor.deadline import stage_deadline
from governor.errors import (
    BackendError,
    BackendHTTPError,
    BackendResponseError,
    BackendTimeout,
    BackendUnavailable,
    ConfigError,
    expected,
)
from governor.jsontext import compact_bytes, read_json
from governor.on_loop import available as on_loop_available
from governor.on_loop import await_here, on_loop, sleep
from governor.usage import Usage

try:  # the [serve] extra's fast JSON writer
    import orjson
except ImportError:  # pragma: no cover - orjson is part of the [serve] extra
    orjson = None  # type: ignore[assignment]
else:
    _PASSTHROUGH = orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME

log = logging.getLogger(__name__)
T = TypeVar("T")

MAX_RETRY_AFTER_S = 10.0
"""The longest server-requested wait (Retry-After) that is honoured."""

Answered = tuple[int, list[tuple[str, str]], bytes]
"""An HTTP answer read whole: its status, its headers and its body."""

_FRAMING = frozenset({"content-encoding", "content-length", "transfer-encoding"})
"""Headers about how a body was sent, not about the body read (which is whole and decoded)."""


class OpenAIBackend(Backend):
    """Chat completions (tool calls included) and embeddings from ``config.base_url`` with
    ``config.model``.

    Holds one HTTP client; close it with :meth:`close` or use the backend as a context manager.
    ``transport`` replaces the network (e.g. ``httpx.MockTransport``) in tests.
    """

    supports_tools = True

    def __init__(self, config: BackendConfig, *, transport: httpx.BaseTransport | None = None):
        if config.base_url is None or config.model is None:
            raise ConfigError(
                "OpenAIBackend: expected a config with base_url and model, "
                f"found base_url={config.base_url!r}, model={config.model!r}"
            )
        self.config = config
        self.base_url = config.base_url.rstrip("/")
        self.model = config.model
        self.name = f"openai:{config.model}"
        headers = {"Accept": "application/json"}
        if config.api_key:
            headers["Authorization"] = f"Bearer {config.api_key}"
        self._client = httpx.Client(headers=headers, timeout=config.timeout_s, transport=transport)
        self._plain: PlainHttp | None = None
        self._aplain: AsyncPlainHttp | None = None
        if transport is None and plain_http_usable(self.base_url):
            kept = {
                k.decode("latin-1"): v.decode("latin-1")
                for k, v in self._client.headers.raw  # as the client spells them
                if k.lower() not in (b"accept-encoding", b"connection")
            }
            self._plain = PlainHttp(self.base_url, kept)
            if AsyncPlainHttp.available() and on_loop_available():
                self._aplain = AsyncPlainHttp(self.base_url, kept)
        self._sleep: Callable[[float], None] = sleep  # awaited on the loop
        self.breaker = CircuitBreaker(
            config.breaker_failures, config.breaker_cooldown_s, name=self.name
        )

    def __repr__(self) -> str:
        key = "set" if self.config.api_key else "none"
        return f"OpenAIBackend(base_url={self.base_url!r}, model={self.model!r}, api_key={key})"

    @property
    def client(self) -> httpx.Client:
        """The HTTP client: its connection pool, headers (the key) and transport, for a reader
        of this endpoint's other routes (the stream reader, :mod:`.openai_stream`)."""
        return self._client

    def close(self) -> None:
        """Close the HTTP client and its connections."""
        self._client.close()
        if self._plain is not None:
            self._plain.close()
        if self._aplain is not None:
            self._aplain.close()

    @property
    def awaits_on_loop(self) -> bool:
        """Whether a call of this backend run on the event loop (:mod:`governor.on_loop`) awaits
        its HTTP there, blocking nothing (a plain-http endpoint read whole)."""
        return self._aplain is not None

    def __enter__(self) -> OpenAIBackend:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # ------------------------------------------------------------------ the Backend interface

    def check(self) -> None:
        """GET ``/models`` once: unreachable or a rejected key raises; any other answer passes."""
        answer = self._send("GET", "/models", None, time.monotonic() + self.config.timeout_s)
        if answer[0] in (401, 403):
            response = _response(answer)
            problem = "the API key was rejected" if self.config.api_key else "an API key is needed"
            raise BackendHTTPError(
                f"{self.name}: {problem} by {self.base_url} "
                f"(HTTP {response.status_code}){self.vendor_message(response)}",
                response.status_code,
            )

    def _chat(self, request: ChatRequest) -> ChatResult:
        parse = partial(completions, unexpected=self._unexpected)
        deadline = time.monotonic() + (self.config.deadline_s or self.config.timeout_s)
        payload = self._payload(request, request.n)
        (choices, data), requests = self._post("/chat/completions", payload, parse, deadline)
        prompt, completion = token_counts(data)
        while len(choices) < request.n:  # each answer has at least one choice: at most n rounds
            payload = self._payload(request, request.n - len(choices))
            try:
                (more, extra), sent = self._post("/chat/completions", payload, parse, deadline)
            except BackendError as exc:
                exc.requests = requests + getattr(exc, "requests", 1)  # type: ignore[attr-defined]
                raise
            requests += sent
            choices += more
            more_prompt, more_completion = token_counts(extra)
            prompt, completion = prompt + more_prompt, completion + more_completion
        usage = Usage(calls=requests, prompt_tokens=prompt, completion_tokens=completion)
        return ChatResult(choices[: request.n], usage, str(data.get("model") or self.model))

    def _payload(self, request: ChatRequest, n: int) -> bytes:
        """The JSON body asking for ``n`` completions of ``request``: the text
        :func:`~governor.jsontext.compact_bytes` writes for it. Its messages hold only strings
        and None (:meth:`Message.to_dict`), its numbers are checked to be in range (so finite),
        and its tools were written once already, exactly (``tools_json``): orjson writes such a
        body as it is, the tools' text spliced in, without reading it back. A body with stop
        words, tools without that text, or a value orjson refuses (a number of another type)
        is written by compact_bytes, which checks its text."""
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [m.to_dict() for m in request.messages],
            "n": n,
            "temperature": request.temperature,
            "max_tokens": request.max_tokens,
        }
        if request.stop:
            body["stop"] = list(request.stop)
        if request.tools:
            body["tools"] = [dict(t) for t in request.tools]
        if request.logprobs:
            body["logprobs"] = True
            if request.top_logprobs:
                body["top_logprobs"] = request.top_logprobs
        if orjson is not None and request.tools_json is not None and not request.stop:
            if request.tools:
                body["tools"] = orjson.Fragment(request.tools_json)
            try:
                return orjson.dumps(body, option=_PASSTHROUGH)
            except TypeError:  # refused: the checked path, which raises what json.dumps raises
                if request.tools:
                    body["tools"] = [dict(t) for t in request.tools]
        return compact_bytes(body)

    def stream_chat(
        self,
        messages: Sequence[Message],
        *,
        temperature: float,
        max_tokens: int,
        tools: Sequence[Mapping[str, Any]] | None,
        on_delta: OnDelta,
    ) -> Completion:
        """One completion asked with ``stream: true``, its text handed to ``on_delta`` as it
        arrives (:class:`~governor.backends.openai_stream.StreamReader`: the same breaker,
        deadline, retries before the first piece and byte bound as :meth:`chat`; each request
        counted). An exception raised by ``on_delta`` stops the reading and propagates."""
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [m.to_dict() for m in messages],
            "temperature": temperature,
            "max_tokens": max_tokens,
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if tools:
            body["tools"] = [dict(t) for t in tools]
        return StreamReader(self, body, on_delta).run()

    def _embed(self, texts: list[str]) -> tuple[np.ndarray, Usage]:
        body = {"model": self.model, "input": texts}
        parse = partial(embeddings, count=len(texts), unexpected=self._unexpected)
        (vectors, data), requests = self._post("/embeddings", compact_bytes(body), parse)
        return vectors, Usage(calls=requests, prompt_tokens=token_counts(data)[0])

    # ------------------------------------------------------------------ HTTP, retries, errors

    def _post(
        self,
        path: str,
        payload: bytes,
        parse: Callable[[dict[str, Any]], T],
        deadline: float | None = None,
    ) -> tuple[tuple[T, dict[str, Any]], int]:
        """POST the JSON ``payload`` with bounded retries before ``deadline`` (default: the
        call's deadline from now): (parsed answer, JSON object), and the requests made."""
        try:
            self.breaker.before()
        except BackendError as exc:
            exc.requests = 0  # type: ignore[attr-defined]
            raise
        if deadline is None:
            deadline = time.monotonic() + (self.config.deadline_s or self.config.timeout_s)
        stage = stage_deadline()  # the step's time budget: no wait outlives it
        if stage is not None and stage < deadline:
            deadline = stage
        requests = 0
        while True:
            requests += 1
            retry_after: float | None = None
            try:
                answered = self._send("POST", path, payload, deadline)
                if answered[0] >= 400:
                    response = _response(answered)
                    retry_after = _retry_after(response)
                    raise BackendHTTPError(
                        f"{self.name}: {self.base_url}{path} answered HTTP "
                        f"{response.status_code}{self.vendor_message(response)}",
                        response.status_code,
                    )
                data = self._decode(answered, path)
                answer = parse(data)
            except BackendError as exc:
                exc.requests = requests  # type: ignore[attr-defined]
                retryable = isinstance(exc, (BackendTimeout, BackendUnavailable)) or (
                    isinstance(exc, BackendHTTPError) and exc.retryable
                )
                if retry_after is not None:
                    delay = min(retry_after, MAX_RETRY_AFTER_S)
                else:
                    delay = self.config.backoff_s * 2 ** (requests - 1)
                in_time = time.monotonic() + delay < deadline
                if not retryable or requests > self.config.max_retries or not in_time:
                    alive = isinstance(exc, BackendHTTPError) and not exc.retryable
                    self.breaker.success() if alive else self.breaker.failure()
                    raise
                log.info("%s: %s; retry %d in %.2g s", self.name, exc, requests, delay)
                self._sleep(delay)
                continue
            self.breaker.success()
            return (answer, data), requests

    def _send(self, method: str, path: str, payload: bytes | None, deadline: float) -> Answered:
        """One HTTP request with the JSON ``payload`` (None: no body), answered before
        ``deadline``, its body read in full (bounded): (status, headers, body); transport
        failures become BackendUnavailable or BackendTimeout."""
        remaining = min(deadline - time.monotonic(), self.config.timeout_s)
        if remaining <= 0:
            raise self._late(path)
        if self._plain is not None:
            return self._send_plain(method, path, payload, time.monotonic() + remaining)
        url = f"{self.base_url}{path}"
        headers = None if payload is None else {"Content-Type": "application/json"}
        try:
            with self._client.stream(
                method, url, content=payload, headers=headers, timeout=remaining
            ) as response:
                content = bytearray()
                for chunk in response.iter_bytes():
                    content += chunk
                    if len(content) > MAX_RESPONSE_BYTES:
                        raise self._too_large(path)
                    if time.monotonic() > deadline:
                        raise self._late(path)
                return response.status_code, response.headers.multi_items(), bytes(content)
        except httpx.TimeoutException as exc:
            raise self._late(path) from exc
        except (httpx.TransportError, httpx.StreamError) as exc:
            reason = str(exc) or type(exc).__name__  # httpx never puts headers in messages
            raise BackendUnavailable(f"{self.name}: cannot reach {url}: {reason}") from exc

    def _send_plain(
        self, method: str, path: str, payload: bytes | None, deadline: float
    ) -> Answered:
        """:meth:`_send` through :class:`~.plain_http.PlainHttp` (the same bounds and errors as
        through httpx)."""
        assert self._plain is not None
        try:
            if self._aplain is not None and on_loop():
                # sent now on a kept connection (its answer awaited from the caller's own task:
                # governor.on_loop.finish_on_loop), else connected and sent by the loop
                aplain = self._aplain
                sent = aplain.start(method, path, payload, deadline, MAX_RESPONSE_BYTES)
                return await_here(
                    aplain.request_on_new(method, path, payload, deadline, MAX_RESPONSE_BYTES)
                    if sent is None
                    else sent
                )
            return self._plain.request(method, path, payload, deadline, MAX_RESPONSE_BYTES)
        except PlainTimeout as exc:
            raise self._late(path) from exc
        except PlainTooLarge as exc:
            raise self._too_large(path) from exc
        except (OSError, http.client.HTTPException) as exc:
            reason = str(exc) or type(exc).__name__
            url = f"{self.base_url}{path}"
            raise BackendUnavailable(f"{self.name}: cannot reach {url}: {reason}") from exc

    def _late(self, path: str) -> BackendTimeout:
        url = f"{self.base_url}{path}"
        return BackendTimeout(
            f"{self.name}: no answer from {url} within {self.config.timeout_s:g} s"
        )

    def _too_large(self, path: str) -> BackendResponseError:
        most = f"an answer of at most {MAX_RESPONSE_BYTES:,} bytes"
        return BackendResponseError(f"{self.name}: {self.base_url}{path}: {expected(most, 'more')}")

    def _decode(self, answer: Answered, path: str) -> dict[str, Any]:
        try:
            data = read_json(answer[2])
        except ValueError as exc:
            found = self._excerpt(_response(answer).text)
            raise BackendResponseError(
                f"{self.name}: {self.base_url}{path}: {expected('a JSON body', found)}"
            ) from exc
        if not isinstance(data, dict):
            found = type(data).__name__
            raise BackendResponseError(f"{self.name}: {path}: {expected('a JSON object', found)}")
        return data

    def vendor_message(self, response: httpx.Response) -> str:
        """``: <error.message>`` from an error body, or an excerpt of the body; '' when empty."""
        try:
            error = response.json().get("error")
        except (ValueError, AttributeError):
            error = None
        message = error.get("message") if isinstance(error, dict) else error
        text = self._excerpt(message if isinstance(message, str) else response.text)
        return f": {text}" if text else ""

    def _excerpt(self, text: str, limit: int = 200) -> str:
        """At most ``limit`` characters of ``text``, with the API key masked (servers echo it)."""
        key, text = self.config.api_key, text.strip()
        text = text.replace(key, "***") if key else text
        return text if len(text) <= limit else text[:limit] + "..."

    def _unexpected(self, what: str, found: Any, data: dict[str, Any]) -> BackendResponseError:
        keys = ", ".join(sorted(map(str, data))) or "none"
        found = self._excerpt(repr(found), 120)
        return BackendResponseError(f"{self.name}: expected {what}, found {found} (keys: {keys})")


def _response(answer: Answered) -> httpx.Response:
    """``answer`` as an httpx Response (for reading an error's headers and text as httpx does)."""
    status, headers, content = answer
    kept = [(k, v) for k, v in headers if k.lower() not in _FRAMING]
    return httpx.Response(status, headers=kept, content=content)  # (nothing reads a request)


def _retry_after(response: httpx.Response) -> float | None:
    """A numeric Retry-After header in seconds; None when absent or an HTTP date."""
    try:
        seconds = float(response.headers.get("retry-after", ""))
    except ValueError:
        return None
    return seconds if seconds >= 0 else None
