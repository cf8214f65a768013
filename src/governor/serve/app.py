"""The Starlette app of the guard service: its served policies (one
:class:`~governor.guard.Guard` each, :mod:`.policies`), its endpoints.

``POST /v1/chat/completions`` answers with the guarded reply (JSON, or Server-Sent Events that
release only checked text); ``POST /v1/checks`` judges a candidate (and commits it when asked)
without an LLM call; ``GET /healthz`` says the process is alive; ``GET /readyz`` says whether the
store is writable and the upstream reachable; ``GET /metrics`` is Prometheus text (under
``governor serve --workers N``, every worker's counters summed: :class:`SharedMetrics`). The
``/v1`` routes ask for a client key when keys are configured (its digest owns the sessions it names:
another key's request on the same id reaches a session of its own), count it against the key's
limits (:class:`Limits`: messages per request, the body's time, requests and new sessions per key)
and pass a request's ``Idempotency-Key`` to the session; the ``/admin`` routes (:mod:`.admin`: pause,
resume, reset and show a session) exist only when an admin key's digest is given and ask for that
key. Every error is the OpenAI error object:
a client's mistake a 4xx naming what was expected, an unavailable store or upstream a 503, any
other exception a 500 without a traceback (logged). A step runs on the event loop when its
guard's every stage is pure or awaits its I/O (:func:`governor.guard.facade.steps_on_loop`: a
plain-http upstream, rules and lexical overlays, a local store) and the request is small; any
other step, and anything that may block, runs in worker threads (the facade's async methods),
never on the loop. A small check-only request on a session whose state is loaded is judged on
the loop too (pure CPU, about a millisecond). Answers are written with orjson when installed.

A request's policy is found once, by its ``model`` or the ``X-Governor-Policy`` header
(:meth:`ServedPolicies.select`); ``GET /v1/models`` lists the served ones. A chat request's
session is named by the ``X-Governor-Session`` header or ``metadata.governor_session`` (or
``metadata.session_id``); one that names none opens a new session; every reply says its session in
the ``X-Governor-Session`` header. ``user`` is the end user's id, kept in the decision record and
the decision log (:mod:`.decision_log`), never a session. The reply's ``model`` is the model that
answered (the upstream's name for itself). ``POST /v1/chat/completions`` is answered without
Starlette's middlewares and router while none was added (:class:`ServiceApp`): the same answers.
Imports the guard's public facade, the error tree and the service's modules.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from starlette._utils import get_route_path
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response, StreamingResponse
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from governor.errors import BackendError, ConfigError, LimitError
from governor.guard import Guard, GuardSession, StoreError
from governor.guard.release import StreamEnd
from governor.serve.admin import Admin, AdminKey
from governor.serve.api_errors import ApiError, bad_request, error_response
from governor.serve.auth import KeyChecker, checked_digest
from governor.serve.decision_log import log_decision, refused_rules
from governor.serve.limits import Buckets, SharedBuckets, shared_file
from governor.serve.policies import POLICY_HEADER, Served, ServedPolicies
from governor.serve.prometheus import Metrics, SharedMetrics
from governor.serve.replies import Answer, FastJSONResponse, completion, governor_headers
from governor.serve.schema import (
    BODY_TIMEOUT_S,
    MAX_BODY_BYTES,
    MAX_REQUEST_MESSAGES,
    SESSION_HEADER,
    ChatBody,
    chat_body,
    check_body,
    parse_json,
    read_body,
)
from governor.serve.stream import sse_events

log = logging.getLogger(__name__)
Handler = Callable[[Request], Awaitable[Response]]
PROBE_SESSION = "governor-readyz-probe:" + "-" * 300
"""The session id /readyz writes to: longer than any session id the guard accepts."""
INLINE_CHECK_BYTES = 2048
"""A ``/v1/checks`` body at most this long (without ``commit``) is judged on the event loop when
the session's state is already loaded and short (:meth:`GuardSession.check`'s ``inline``): its
checks take about a millisecond or less, no more than the hop to a worker thread and back (a
16 KB reply takes some 20 ms, which would hold every other request: those go to a thread)."""


def _safe(handler: Handler) -> Handler:
    """``handler`` with every exception turned into an OpenAI error answer."""

    async def run(request: Request) -> Response:
        try:
            return await handler(request)
        except ApiError as exc:
            return error_response(exc)
        except LimitError as exc:  # a session past a configured limit: the message names it
            return error_response(bad_request(str(exc), exc.limit, "limit_exceeded"))
        except ConfigError as exc:  # what the client sent (messages, history, session id)
            return error_response(bad_request(str(exc)))
        except (StoreError, BackendError) as exc:
            log.warning("%s %s: unavailable: %s", request.method, request.url.path, exc)
            what = "the session store" if isinstance(exc, StoreError) else "the upstream model"
            return error_response(ApiError(503, f"{what} is unavailable", code="unavailable"))
        except Exception:
            log.exception("%s %s failed", request.method, request.url.path)
            return error_response(
                ApiError(500, "internal error (logged on the server)", code="internal_error")
            )

    return run


def _nothing_safe_to_say(guarded: Answer) -> bool:
    """A defer or abort that left no reply at all (the policy's default text is a reply)."""
    reply = guarded.reply
    deferred = guarded.summary.get("kind") in ("defer", "abort")
    return deferred and not reply.tool_calls and not (reply.content or "").strip()


def _refuse_when_nothing_safe(guarded: Answer) -> None:
    """A 503 when the guard has nothing safe to say (:func:`_nothing_safe_to_say`)."""
    if _nothing_safe_to_say(guarded):
        raise ApiError(
            503,
            f"the guard deferred and has nothing safe to say: {guarded.summary.get('reason')}",
            code="guard_deferred",
            extra={"governor": dict(guarded.summary)},
        )


@dataclass(frozen=True)
class Limits:
    """What one request and one client key may spend (None: no such limit)."""

    max_body_bytes: int = MAX_BODY_BYTES
    max_request_messages: int = MAX_REQUEST_MESSAGES
    body_timeout_s: float = BODY_TIMEOUT_S
    requests_per_s: float | None = None
    """Each key's sustained requests per second (a burst of ``request_burst``)."""
    request_burst: int = 20
    sessions_per_hour: float | None = None
    """Each key's new sessions per hour (a burst of ``session_burst``): the session quota."""
    session_burst: int = 100


class Service:
    """The endpoints over the served policies (see the module doc)."""

    def __init__(
        self,
        policies: ServedPolicies,
        *,
        keys: KeyChecker | None = None,
        metrics: Metrics | None = None,
        limits: Limits | None = None,
        admin_key: AdminKey | None = None,
        policy_keys: Mapping[str, Iterable[str]] | None = None,
        shared_dir: Path | None = None,
        worker: int = 0,
    ) -> None:
        self.policies = policies
        self.shared_dir = shared_dir
        """The folder this service's worker processes share (None: one process)."""
        self.worker = worker
        """This process's index among the workers."""
        self.keys = keys or KeyChecker()
        self.admin_key = admin_key
        """The admin key, which may read /metrics too."""
        self.policy_keys: dict[str, frozenset[str]] = {
            name: frozenset(checked_digest(d, f"policy {name}'s key hash") for d in digests)
            for name, digests in (policy_keys or {}).items()
        }
        """The client keys' digests a policy named here is for."""
        self.metrics = metrics or Metrics()
        self.shared_metrics = (
            None if shared_dir is None else SharedMetrics(self.metrics, shared_dir, worker)
        )
        """The counters' file among the workers' (None: one process): /metrics sums them."""
        self.limits = limits or Limits()
        self.max_body_bytes = self.limits.max_body_bytes
        lim = self.limits
        self.requests = (
            None
            if lim.requests_per_s is None
            else self._buckets(
                "requests",
                lim.requests_per_s,
                lim.request_burst,
                f"{lim.requests_per_s:g} requests a second",
            )
        )
        self.new_sessions = (
            None
            if lim.sessions_per_hour is None
            else self._buckets(
                "sessions",
                lim.sessions_per_hour / 3600,
                lim.session_burst,
                f"{lim.sessions_per_hour:g} new sessions an hour",
            )
        )

    def _buckets(self, name: str, rate: float, burst: float, what: str) -> Buckets:
        """A limit's buckets: in this process, or in a file of the folder the workers share."""
        try:
            if self.shared_dir is None:
                return Buckets(rate, burst, what)
            path = shared_file(self.shared_dir, name)
            return SharedBuckets(path, rate, burst, what, create=False)
        except ValueError as exc:
            raise ConfigError(str(exc)) from exc
        except FileNotFoundError:
            raise ConfigError(
                f"{what}: expected the file {path} the workers share, made when the service"
                " started, found none (removed since?): a worker counting alone would let each"
                " key past the limit"
            ) from None
        except OSError as exc:
            raise ConfigError(f"{what}: cannot keep the limit for every worker: {exc}") from exc

    def _owner(self, head: Mapping[str, str]) -> str | None:
        """The key's digest (the owner of the sessions it names), its request counted."""
        owner = self.keys.check(head.get("authorization"))
        if self.requests is not None:
            self.requests.take(owner)
        return owner

    def _for(self, served: Served, owner: str | None) -> Served:
        """``served`` when the key may use it: a policy pinned to keys answers any other 403."""
        allowed = self.policy_keys.get(served.name)
        if allowed is not None and owner not in allowed:
            raise ApiError(
                403,
                f"expected a key this service serves {served.model} to, found another",
                param="model",
                code="policy_not_allowed",
            )
        return served

    @property
    def guard(self) -> Guard:
        """The guard of the first served policy (the only one, for a service of one)."""
        return next(iter(self.policies)).guard

    async def _session(self, served: Served, owner: str | None, session_id: str) -> GuardSession:
        """The owner's session ``session_id`` under ``served``; a new one counted against the
        session quota."""
        session = served.guard.session(
            session_id, owner=owner, namespace=served.namespace, client=True
        )
        if self.new_sessions is not None and await session.new():
            self.new_sessions.take(owner)
        return session

    async def _read(self, request: Request) -> bytes:
        return await read_body(request, self.max_body_bytes, self.limits.body_timeout_s)

    def _observed(
        self,
        served: Served,
        session: GuardSession,
        user: str | None,
        endpoint: str,
        summary: Any,
        seconds: float,
        kind: str | None = None,
    ) -> None:
        """Count one decision (its policy's counters, the step histogram for a reply) and log it."""
        refused = refused_rules(summary)
        if kind is None:
            self.metrics.observe(summary, seconds)
        kind = kind or str(summary.get("kind", "unknown"))
        self.metrics.count_policy(served.name, kind, refused, served.rules)
        log_decision(served.name, session.id, user, endpoint, summary, seconds, refused)

    async def chat_completions(self, request: Request) -> Response:
        head = _head(request)
        owner = self._owner(head)
        raw = await self._read(request)
        body = chat_body(parse_json(raw), _session_header(head), self.limits.max_request_messages)
        served = self._for(self.policies.select(body.model, head.get(_POLICY)), owner)
        session = await self._session(served, owner, body.session)
        key = _idempotency_key(head)
        if body.stream:
            return await self._stream(served, session, body, key)
        start = time.perf_counter()
        guarded = await session.respond(
            body.messages,
            tools=body.tools,
            sampling=body.sampling,
            idempotency_key=key,
            user=body.user,
        )
        self._observed(
            served, session, body.user, "chat", guarded.summary, time.perf_counter() - start
        )
        _refuse_when_nothing_safe(guarded)
        headers = governor_headers(guarded.summary)
        _say_session(headers, body.session)
        return FastJSONResponse(
            completion(guarded, served.guard.answering_model, guarded.choices), headers=headers
        )

    async def models(self, request: Request) -> Response:
        owner = self._owner(_head(request))
        data = [
            {"id": s.model, "object": "model", "created": s.created, "owned_by": "governor"}
            for s in self.policies
            if s.name not in self.policy_keys or owner in self.policy_keys[s.name]
        ]
        return FastJSONResponse({"object": "list", "data": data})

    async def _stream(
        self, served: Served, session: GuardSession, body: ChatBody, key: str | None
    ) -> Response:
        """The streamed reply: the first event is awaited before answering, so that a request
        the guard refuses is still an HTTP error; the decision's headers come only when the
        reply was judged before its first text went out (its final event always has it)."""
        start = time.perf_counter()
        events = session.respond_stream(
            body.messages,
            tools=body.tools,
            sampling=body.sampling,
            idempotency_key=key,
            deliver=False,
            user=body.user,
        )
        first = await anext(events)

        def ended(end: StreamEnd) -> None:
            seconds = time.perf_counter() - start
            self._observed(served, session, body.user, "chat", end.summary, seconds)

        headers: dict[str, str] = {}
        if isinstance(first, StreamEnd):
            headers = governor_headers(first.summary)
            if _nothing_safe_to_say(first):
                ended(first)
                _refuse_when_nothing_safe(first)
        _say_session(headers, body.session)
        model = served.guard.answering_model
        stream = sse_events(first, events, model, ended, session.delivered, session.undelivered)
        return StreamingResponse(stream, media_type="text/event-stream", headers=headers)

    async def checks(self, request: Request) -> Response:
        head = _head(request)
        owner = self._owner(head)
        raw = await self._read(request)
        body = check_body(parse_json(raw), _session_header(head), self.limits.max_request_messages)
        served = self._for(self.policies.select(body.model, head.get(_POLICY)), owner)
        session = await self._session(served, owner, body.session)
        start = time.perf_counter()
        if body.commit:  # a store write: always in a worker thread
            result = await session.commit(body.candidate, messages=body.messages, tools=body.tools)
        else:
            inline = len(raw) <= INLINE_CHECK_BYTES
            result = await session.check(
                body.candidate, messages=body.messages, tools=body.tools, inline=inline
            )
        kind = "admissible" if result.admissible else "refused"
        seconds = time.perf_counter() - start
        self._observed(served, session, None, "checks", result.summary, seconds, kind)
        return FastJSONResponse(
            {"object": "governor.check", "committed": body.commit, **result.summary}
        )

    async def healthz(self, request: Request) -> Response:
        return JSONResponse({"status": "alive"})

    async def readyz(self, request: Request) -> Response:
        served = list(self.policies)
        backends = list({id(s.guard.backend): s.guard.backend for s in served}.values())
        store, *upstreams = await asyncio.gather(
            asyncio.to_thread(_probe, self._probe_store),
            *(asyncio.to_thread(_probe, b.check) for b in backends),
        )
        upstream = next((u for u in upstreams if not u["ok"]), upstreams[0])
        ready = store["ok"] and all(u["ok"] for u in upstreams)
        body = {"ready": ready, "store": store, "upstream": upstream}
        return JSONResponse(body, status_code=200 if ready else 503)

    def _probe_store(self) -> None:
        store = self.guard.store
        probe = getattr(store, "probe", None)
        if callable(probe):  # writes and rolls back
            probe()
        else:  # a store without one: a save under a session id no client can use
            store.save(PROBE_SESSION, {}, None)

    async def metrics_text(self, request: Request) -> Response:
        # with client keys the counters (policy and rule names, how often each refused) are for
        # a client or the admin key, not for anyone who can reach the port
        authorization = request.headers.get("authorization")
        try:
            self.keys.check(authorization)
        except ApiError:
            if self.admin_key is None:
                raise
            self.admin_key.check(authorization)
        if self.shared_metrics is None:
            text = self.metrics.render()
        else:  # (files read and written: off the event loop)
            text = await asyncio.to_thread(self.shared_metrics.render)
        return PlainTextResponse(text, media_type="text/plain; version=0.0.4")


def _say_session(headers: dict[str, str], session: str) -> None:
    """The session's id in the ``X-Governor-Session`` reply header, when a header can carry it
    (printable ASCII: an id from the body may hold anything, and the client knows it)."""
    if session.isascii() and session.isprintable():
        headers[SESSION_HEADER] = session


_SESSION = SESSION_HEADER.lower()
_POLICY = POLICY_HEADER.lower()


def _head(request: Request) -> dict[str, str]:
    """The request's headers by name, read once (ASGI gives the names in lower case; of a name
    sent twice, the first value, as ``request.headers.get`` gives it)."""
    head: dict[str, str] = {}
    for name, value in request.scope["headers"]:
        head.setdefault(name.decode("latin-1"), value.decode("latin-1"))
    return head


def _session_header(head: Mapping[str, str]) -> str | None:
    return head.get(_SESSION) or None


MAX_IDEMPOTENCY_KEY = 200


def _idempotency_key(head: Mapping[str, str]) -> str | None:
    """The request's ``Idempotency-Key`` header (at most 200 characters), or None."""
    key = head.get("idempotency-key")
    if key is not None and not 0 < len(key) <= MAX_IDEMPOTENCY_KEY:
        raise bad_request(
            f"Idempotency-Key: expected 1 to {MAX_IDEMPOTENCY_KEY} characters, found {len(key)}",
            "Idempotency-Key",
        )
    return key or None


def _probe(check: Callable[[], Any]) -> dict[str, Any]:
    try:
        check()
    except Exception as exc:
        log.warning("readiness probe failed: %s: %s", type(exc).__name__, exc)
        return {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
    return {"ok": True, "error": None}


async def _http_error(request: Request, exc: Exception) -> Response:
    """Starlette's routing errors (unknown route 404, wrong method 405) in the OpenAI shape."""
    status = exc.status_code if isinstance(exc, HTTPException) else 500
    headers = getattr(exc, "headers", None)
    if status == 404:
        message = f"expected a known route, found {request.method} {request.url.path}"
    elif status == 405:
        allowed = (headers or {}).get("Allow", "")
        message = f"{request.url.path}: expected method {allowed}, found {request.method}"
    else:
        message = str(getattr(exc, "detail", "error"))
    code = {404: "unknown_route", 405: "method_not_allowed"}.get(status)
    return error_response(ApiError(status, message, code=code), headers=headers)


CHAT_PATH = "/v1/chat/completions"


def _writing(
    shared: SharedMetrics,
) -> Callable[[Any], contextlib.AbstractAsyncContextManager[None]]:
    """The app's lifespan under workers: the counters written to the shared folder while it
    serves, and once more when it stops."""

    @contextlib.asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[None]:
        shared.start()
        try:
            yield
        finally:
            await asyncio.to_thread(shared.stop)

    return lifespan


class ServiceApp(Starlette):
    """The service's Starlette app, where ``POST /v1/chat/completions`` (the request every
    client sends) goes straight to its handler: what Starlette's layers do for it (the two
    error middlewares, the router's match) changes nothing for a handler that answers every
    exception itself (:func:`_safe`), so its answers are the same ones, for less CPU. Any other
    request, and every request once middleware was added, takes Starlette's whole way."""

    def __init__(self, chat: Handler, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._chat = chat

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] == "http"
            and scope["method"] == "POST"
            and not self.user_middleware
            and get_route_path(scope) == CHAT_PATH  # (the router's own reading of the path)
        ):
            scope["app"] = self
            try:
                response = await self._chat(Request(scope, receive, send))
            except Exception:  # (only from an error's own answer): Starlette's plain 500
                await PlainTextResponse("Internal Server Error", status_code=500)(
                    scope, receive, send
                )
                raise
            await response(scope, receive, send)
            return
        await super().__call__(scope, receive, send)


def create_app(
    guard: Guard | ServedPolicies,
    *,
    keys: KeyChecker | None = None,
    metrics: Metrics | None = None,
    max_body_bytes: int | None = None,
    admin_key_hash: str | None = None,
    limits: Limits | None = None,
    policy_keys: Mapping[str, Iterable[str]] | None = None,
    shared_dir: str | Path | None = None,
    worker: int = 0,
) -> ServiceApp:
    """The guard service's app over ``guard`` (one guard, or the served policies: see the
    module doc); ``admin_key_hash`` is the
    sha256 hex digest of the admin key (None: no admin routes); ``limits`` what a request and a
    key may spend (``max_body_bytes`` replaces its body limit); ``policy_keys`` the client keys'
    digests each policy named in it is for (a policy not named: every client key's).
    ``shared_dir``: a folder the apps of one service's worker processes share (``governor serve
    --workers N``), ``worker`` this one's index among them: the keys' rate limits and session
    quotas are kept there for all of them together, in the files
    :func:`governor.serve.limits.make_shared_files` made there before the first worker, and
    ``/metrics`` sums every worker's counters (:class:`SharedMetrics`, written while the app's
    lifespan runs)."""
    limits = limits or Limits()
    if max_body_bytes is not None:
        limits = replace(limits, max_body_bytes=max_body_bytes)
    policies = guard if isinstance(guard, ServedPolicies) else ServedPolicies.single(guard)
    service = Service(
        policies,
        keys=keys,
        metrics=metrics,
        limits=limits,
        admin_key=None if admin_key_hash is None else AdminKey(admin_key_hash),
        policy_keys=policy_keys,
        shared_dir=None if shared_dir is None else Path(shared_dir),
        worker=worker,
    )
    chat = _safe(service.chat_completions)
    routes = [
        Route(CHAT_PATH, chat, methods=["POST"]),
        Route("/v1/models", _safe(service.models), methods=["GET"]),
        Route("/v1/checks", _safe(service.checks), methods=["POST"]),
        Route("/healthz", _safe(service.healthz), methods=["GET"]),
        Route("/readyz", _safe(service.readyz), methods=["GET"]),
        Route("/metrics", _safe(service.metrics_text), methods=["GET"]),
    ]
    if service.admin_key is not None:
        admin = Admin(policies, service.admin_key)
        at = "/admin/sessions/{session_id:path}"
        routes += [
            Route(f"{at}/pause", _safe(admin.pause), methods=["POST"]),
            Route(f"{at}/resume", _safe(admin.resume), methods=["POST"]),
            Route(f"{at}/end", _safe(admin.end), methods=["POST"]),
            Route(f"{at}/mode", _safe(admin.set_mode), methods=["POST"]),
            Route(f"{at}/release", _safe(admin.release), methods=["POST"]),
            Route(f"{at}/reset", _safe(admin.reset), methods=["POST"]),
            Route(at, _safe(admin.show), methods=["GET"]),
        ]
    app = ServiceApp(
        chat,
        routes=routes,
        exception_handlers={HTTPException: _http_error},
        lifespan=None if service.shared_metrics is None else _writing(service.shared_metrics),
    )
    app.state.service = service
    return app
