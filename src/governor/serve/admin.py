"""The admin endpoints: for the people responsible for a deployment, under their own key.

``POST /admin/sessions/{id}/pause`` and ``.../resume``: a paused session answers its chat
requests with the policy's default fallback text and a ``governor`` field of kind ``paused``,
without calling the upstream and without touching its trajectory (``/v1/checks`` still judges
and commits; pausing an id not yet seen is allowed, so a session can be stopped before it
starts). ``POST /admin/sessions/{id}/reset`` forgets the session's trajectory
(:meth:`governor.guard.Guard.reset`; its decision records stay, followed by a reset record).
``GET /admin/sessions/{id}`` is its trajectory: the messages, each LTL rule's monitor state,
the pending feedback and the decision records. Pauses are kept in this process: they do not
survive a restart and are not shared between instances.

The admin key is checked like the client keys (``Authorization: Bearer <key>`` hashed with
sha256 and compared by ``hmac.compare_digest``) against its own digest; a client key is not an
admin key. Without an admin digest the routes are not mounted (they answer 404). Imports the
guard's public facade and the service's errors, auth and replies.
"""

from __future__ import annotations

import asyncio
import hmac
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from governor.guard import Guard, Reply
from governor.guard.facade import MAX_SESSION_ID
from governor.serve.auth import checked_digest, digest
from governor.serve.errors import ApiError, bad_request

PAUSED_REASON = "the session is paused by an operator; the upstream was not called"


class AdminKey:
    """The admin key's digest; :meth:`check` accepts only a bearer key that hashes to it."""

    def __init__(self, key_digest: str) -> None:
        self.digest = checked_digest(key_digest, "admin key hash")

    def check(self, authorization: str | None) -> None:
        """Raise a 401 ApiError unless ``authorization`` carries the admin key."""
        scheme, _, key = (authorization or "").partition(" ")
        if scheme.lower() != "bearer" or not key.strip():
            raise ApiError(
                401,
                "expected the admin key as 'Authorization: Bearer <key>', found none",
                code="invalid_admin_key",
            )
        if not hmac.compare_digest(digest(key.strip()), self.digest):
            raise ApiError(401, "the admin key given is not accepted", code="invalid_admin_key")


@dataclass(frozen=True)
class PausedAnswer:
    """A paused session's answer: the default fallback text and a ``paused`` summary."""

    reply: Reply
    summary: Mapping[str, Any]


def paused_answer(session_id: str, text: str) -> PausedAnswer:
    """The answer of a paused session (the summary has the keys of a decision's summary)."""
    reply = Reply(text)
    summary: dict[str, Any] = {
        "session": session_id,
        "t": None,
        "kind": "paused",
        "paused": True,
        "reason": PAUSED_REASON,
        "cause": None,
        "reply": reply.to_dict(),
        "verdicts": [],
        "rejected": [],
        "invalid_candidates": [],
        "feedback": {"forced": [], "implicit": None},
        "regenerations": 0,
        "fallback": True,
        "llm": {"calls": 0, "failed": 0, "tokens": 0, "stages": {}},
        "latency_ms": {"total": 0.0},
        "errors": [],
    }
    return PausedAnswer(reply, summary)


def _session_id(request: Request) -> str:
    session = str(request.path_params["session_id"])
    if not 0 < len(session) <= MAX_SESSION_ID:
        raise bad_request(
            f"session id: expected text of 1 to {MAX_SESSION_ID} characters,"
            f" found {len(session)} characters",
            "session_id",
        )
    return session


def _not_found(session: str) -> ApiError:
    return ApiError(
        404, f"expected a known session, found no session {session!r:.220}", code="unknown_session"
    )


class Admin:
    """The admin endpoints over ``guard`` (see the module doc); ``paused`` is shared with the
    chat endpoint."""

    def __init__(self, guard: Guard, key: AdminKey, paused: set[str]) -> None:
        self.guard = guard
        self.key = key
        self.paused = paused

    def _session(self, request: Request) -> str:
        self.key.check(request.headers.get("authorization"))
        return _session_id(request)

    def _state(self, session: str, paused: bool) -> Response:
        return JSONResponse({"object": "governor.session", "session": session, "paused": paused})

    async def pause(self, request: Request) -> Response:
        session = self._session(request)
        self.paused.add(session)
        return self._state(session, True)

    async def resume(self, request: Request) -> Response:
        session = self._session(request)
        self.paused.discard(session)
        return self._state(session, False)

    async def reset(self, request: Request) -> Response:
        session = self._session(request)
        if not await self.guard.reset(session):
            raise _not_found(session)
        body = {"object": "governor.session", "session": session, "reset": True}
        return JSONResponse({**body, "paused": session in self.paused})

    async def show(self, request: Request) -> Response:
        session = self._session(request)
        store = self.guard.store
        state, records = await asyncio.gather(
            asyncio.to_thread(store.load, session), asyncio.to_thread(store.records, session)
        )
        if state is None and not records:
            raise _not_found(session)
        state = state or {}
        return JSONResponse(
            {
                "object": "governor.session",
                "session": session,
                "paused": session in self.paused,
                "t": state.get("t", 0),
                "messages": state.get("messages", []),
                "monitors": state.get("memory", {}),
                "feedback": state.get("feedback"),
                "decisions": records,
            }
        )
