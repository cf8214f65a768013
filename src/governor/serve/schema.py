"""Reading requests: the body under a size limit, JSON, and the fields of each endpoint.

The size limit is checked before parsing (the declared ``Content-Length`` first, then the bytes
as they arrive); the JSON is read with orjson when it is installed (the ``[serve]`` extra brings
it), else with the standard library; an object that names a key twice is refused (readers
disagree on which value counts). Each field is checked for its type; an error names the field, what was expected
and what was found. Messages themselves are read by the guard (its errors name the index).
Imports starlette's request type, the error tree and the service's errors.
"""

from __future__ import annotations

import asyncio
import math
import uuid
from dataclasses import dataclass, field
from typing import Any

from starlette.requests import ClientDisconnect, Request

try:  # the [serve] extra's fast JSON; the standard library's reader otherwise
    import orjson
except ImportError:  # pragma: no cover - orjson is part of the [serve] extra
    orjson = None  # type: ignore[assignment]

from governor.errors import expected
from governor.files import json_loads
from governor.guard import Sampling
from governor.guard.choices import MAX_CHOICES
from governor.jsontext import DuplicateKeyError, keys_shown_once, long_digits, read_keys_once
from governor.serve.api_errors import ApiError, bad_request

MAX_BODY_BYTES = 1_000_000
"""The largest request body read (bytes); a larger one is a 413."""
MAX_REQUEST_MESSAGES = 20_000
"""The most messages one request may carry; more is a 413 naming the limit."""
BODY_TIMEOUT_S = 30.0
"""The longest a request body may take to arrive once its headers did; longer is a 408."""
SESSION_HEADER = "X-Governor-Session"
SESSION_FIELDS = ("governor_session", "session_id")
"""The ``metadata`` fields that name a chat request's session (when the header does not)."""
NEW_SESSION_PREFIX = "gs-"
"""The start of the id of a session the service opens for a request that names none."""
MAX_USER = 256
"""The longest end-user id (``user``) read."""


async def read_json(request: Request, limit: int = MAX_BODY_BYTES) -> dict[str, Any]:
    """The body as a JSON object; 413 when over ``limit`` bytes, 400 when not a JSON object."""
    return parse_json(await read_body(request, limit))


async def read_body(
    request: Request, limit: int = MAX_BODY_BYTES, timeout_s: float = BODY_TIMEOUT_S
) -> bytes:
    """The body's bytes; 413 when over ``limit`` bytes, 408 when it takes over ``timeout_s``.
    The deadline is one timer that cancels the reading task, a cancellation it caused becoming
    the 408 (what ``asyncio.timeout`` does, without its bookkeeping; a cancellation from
    elsewhere goes on as one)."""
    task = asyncio.current_task()
    if task is None:
        raise RuntimeError("read_body: expected to run in an asyncio task, found none")
    cancelling = task.cancelling()
    expired: list[bool] = []

    def expire() -> None:
        expired.append(True)
        task.cancel()

    timer = asyncio.get_running_loop().call_later(timeout_s, expire)
    try:
        return await _read_body(request, limit)
    except asyncio.CancelledError:
        if expired and task.uncancel() <= cancelling:
            raise ApiError(
                408,
                f"expected the request body within {timeout_s:g} s, found it still arriving",
                code="body_timeout",
            ) from None
        raise
    finally:
        timer.cancel()


def _too_many(messages: list[Any], limit: int) -> None:
    if len(messages) > limit:
        raise ApiError(
            413,
            f"messages: expected at most {limit} messages in a request (max_request_messages),"
            f" found {len(messages)}",
            param="messages",
            code="too_many_messages",
        )


def _too_big(limit: int) -> ApiError:
    return ApiError(
        413, f"expected a request body of at most {limit} bytes, found more", code="body_too_large"
    )


async def _read_body(request: Request, limit: int) -> bytes:
    declared = request.headers.get("content-length")
    if declared is not None and (not declared.isdigit() or int(declared) > limit):
        raise _too_big(limit)
    chunks, size = [], 0
    receive = request.receive  # (the ASGI messages, as Request.stream reads them)
    while True:
        message = await receive()
        kind = message["type"]
        if kind == "http.request":
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                raise _too_big(limit)
            if chunk:
                chunks.append(chunk)
            if not message.get("more_body", False):
                return b"".join(chunks)
        elif kind == "http.disconnect":
            raise ClientDisconnect()


def parse_json(raw: bytes) -> dict[str, Any]:
    """``raw`` as a JSON object (orjson when installed: strict UTF-8, nesting bounded); 400 when
    it is not one. Its value is what ``json.loads`` reads: a body with a run of 19 digits (an
    integer orjson may read past 64 bits, as a float) is read again by the standard library,
    so each integer is an ``int`` of the value the client sent."""
    try:
        data = orjson.loads(raw) if orjson is not None else json_loads(raw, _no_constant)
    except (UnicodeDecodeError, ValueError) as exc:
        raise bad_request(
            f"expected a JSON body, found malformed JSON ({exc})", code="invalid_json"
        ) from None
    if not isinstance(data, dict):
        raise bad_request(f"body: {expected('a JSON object', data)}", code="invalid_json")
    return _each_key_once(raw, data)


def _no_constant(name: str) -> Any:
    """The standard library's reader meeting ``NaN`` or an infinity, which JSON has not (and
    orjson refuses): refused the same way without orjson."""
    raise ValueError(f"{name} is not JSON")


def _each_key_once(raw: bytes, data: dict[str, Any]) -> dict[str, Any]:
    """A 400 when an object of the body names a key twice: JSON readers disagree on which value
    counts (the first, the last, an error), so a proxy in front of the service and the service
    could read one request two ways (``role``, ``model``, a session's id). orjson's reading
    ``data`` shows most bodies free of it (:func:`keys_shown_once`: colons counted, a few
    microseconds); any other body is read once more, by the standard library with a hook on
    every object (about 15 us for a small request, twice the main read for a large one). The
    body is already known to be valid JSON (so UTF-8). The value given back is ``data``, or
    the standard library's reading where orjson's may hold a float for a long integer."""
    exact = orjson is None or not long_digits(raw)
    if exact and keys_shown_once(raw, data):
        return data
    try:
        value = read_keys_once(raw.decode("utf-8"))
    except DuplicateKeyError as exc:
        raise bad_request(
            f"body: expected each key once in a JSON object, found {exc.key[:64]!r} twice",
            code="invalid_json",
        ) from None
    except (RecursionError, ValueError):
        # valid JSON this reader cannot follow (nesting past the recursion limit, which orjson
        # allows up to 1,024 levels): its keys cannot be checked, so it is refused (fail closed)
        raise bad_request(
            "body: expected JSON whose objects can be checked for a key named twice, found one"
            " nested too deeply to check",
            code="invalid_json",
        ) from None
    return data if exact else value


def _type(body: dict[str, Any], key: str, kinds: tuple[type, ...], what: str) -> Any:
    value = body.get(key)
    if value is None:
        return None
    if (isinstance(value, bool) and bool not in kinds) or not isinstance(value, kinds):
        raise bad_request(f"{key}: {expected(what, value)}", key, "invalid_type")
    return value


@dataclass(frozen=True)
class ChatBody:
    """A chat completions request as served; ``sampling`` holds its own ``temperature`` and
    ``max_tokens`` (which can lower the policy's bound, never raise it)."""

    model: str | None
    messages: list[Any]
    tools: list[Any] | None
    stream: bool
    session: str
    sampling: Sampling = field(default_factory=Sampling)
    user: str | None = None
    """The end user's id as the client names them (OpenAI's ``user``): recorded, not a session."""
    new_session: bool = False
    """True: the request named no session, ``session`` is a new one the service opened."""


def chat_body(
    body: dict[str, Any], session_header: str | None, max_messages: int = MAX_REQUEST_MESSAGES
) -> ChatBody:
    """The checked fields of a ``/v1/chat/completions`` body."""
    model = _type(body, "model", (str,), "a model name")
    messages = _type(body, "messages", (list,), "a list of messages")
    if not messages:
        raise bad_request(
            f"messages: {expected('a non-empty list of messages', messages)}", "messages"
        )
    _too_many(messages, max_messages)
    tools = _type(body, "tools", (list,), "a list of tool schemas")
    temperature = _type(body, "temperature", (int, float), "a number in [0, 2]")
    if temperature is not None and not (math.isfinite(temperature) and 0 <= temperature <= 2):
        raise bad_request(
            f"temperature: {expected('a number in [0, 2]', temperature)}", "temperature"
        )
    max_tokens = _type(body, "max_tokens", (int,), "an integer >= 1")
    if max_tokens is not None and max_tokens < 1:
        raise bad_request(f"max_tokens: {expected('an integer >= 1', max_tokens)}", "max_tokens")
    n = _type(body, "n", (int,), f"an integer in [1, {MAX_CHOICES}]")
    if n is not None and not 1 <= n <= MAX_CHOICES:
        raise bad_request(f"n: {expected(f'an integer in [1, {MAX_CHOICES}]', n)}", "n")
    stream = _type(body, "stream", (bool,), "true or false")
    if stream and n not in (None, 1):
        wanted = "1 when streaming (a stream serves one choice)"
        raise bad_request(f"n: {expected(wanted, n)}", "n", "unsupported_value")
    user = _type(body, "user", (str,), "an end-user id")
    if user is not None and len(user) > MAX_USER:
        raise bad_request(
            f"user: expected an end-user id of at most {MAX_USER} characters, found {len(user)}",
            "user",
        )
    session = session_header or _metadata_session(body)
    new = not session
    if not session:
        session = f"{NEW_SESSION_PREFIX}{uuid.uuid4().hex}"
    sampling = Sampling(None if temperature is None else float(temperature), max_tokens, n or 1)
    return ChatBody(model, messages, tools, bool(stream), session, sampling, user or None, new)


def _metadata_session(body: dict[str, Any]) -> str | None:
    """The session named in the body's ``metadata`` (``governor_session``, else ``session_id``)."""
    metadata = _type(body, "metadata", (dict,), "an object of text values")
    if not metadata:
        return None
    for key in SESSION_FIELDS:
        value = metadata.get(key)
        if value is not None:
            if not isinstance(value, str) or not value:
                raise bad_request(
                    f"metadata.{key}: {expected('a session id', value)}", f"metadata.{key}"
                )
            return value
    return None


@dataclass(frozen=True)
class CheckBody:
    """A ``/v1/checks`` request: the candidate, the session, its messages, the tools offered to
    the agent that proposed it (as in a chat completions request), whether to commit."""

    session: str
    candidate: Any
    messages: list[Any] | None
    commit: bool
    model: str | None = None
    """The served model (policy) the check is for; None: the header's, or the only one."""
    tools: list[Any] | None = None


def check_body(
    body: dict[str, Any], session_header: str | None, max_messages: int = MAX_REQUEST_MESSAGES
) -> CheckBody:
    """The checked fields of a ``/v1/checks`` body."""
    session = _type(body, "session", (str,), "a session id") or session_header
    if not session:
        raise bad_request(
            f"expected a session id in the session field or the {SESSION_HEADER} header,"
            " found neither",
            "session",
            "missing_session",
        )
    candidate = body.get("candidate")
    if not isinstance(candidate, (str, dict)):
        raise bad_request(
            f"candidate: {expected('text or an assistant message object', candidate)}",
            "candidate",
            "invalid_type",
        )
    messages = _type(body, "messages", (list,), "a list of messages")
    if messages is not None:
        _too_many(messages, max_messages)
    commit = _type(body, "commit", (bool,), "true or false")
    model = _type(body, "model", (str,), "a served model name")
    tools = _type(body, "tools", (list,), "a list of tool schemas")
    return CheckBody(session, candidate, messages, bool(commit), model, tools)
