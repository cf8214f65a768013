"""The admin endpoints: for the people responsible for a deployment, under their own key.

``POST /admin/sessions/{id}/pause``, ``.../resume`` and ``.../end`` (a JSON body
``{"who": ..., "why": ...}`` is optional), and, under a policy with modes, ``.../mode`` (body
``{"mode": ..., "who": ..., "why": ...}``: hold the session in that mode) and ``.../release``
(give the choice back to the supervisor): an operator's act, kept in the session's state in the
store (so it survives a restart and holds for every instance sharing the store) and in its
records, the audit trail (:meth:`governor.guard.GuardSession.operate`). A paused or ended session
answers its chat requests with the policy's default fallback text and a ``governor`` field of
kind ``paused`` or ``ended``, without calling the upstream and without touching its trajectory
(``/v1/checks`` still judges and commits; pausing an id not yet seen is allowed, so a session can
be stopped before it starts); an ended session takes no further act. ``POST
/admin/sessions/{id}/reset`` forgets the session's trajectory (:meth:`governor.guard.Guard.reset`;
its decision records and operator acts stay, followed by a reset record). ``GET
/admin/sessions/{id}`` is its trajectory: the messages, each LTL rule's monitor state, the
pending feedback, the operator acts and the decision records, and with modes its ``supervision``:
the mode, whether an interaction is engaged, the operator's mode, the refusal cooldown, the
counts per supervisor decision and the supervisor's audit trail.

The admin routes see every session: they name a session by its stored id, which under client
keys is the first 32 hex digits of the owning key's sha256 digest, ``/``, and the client's id
(:func:`governor.guard.facade.owned_id`; without client keys, the client's id), after the
policy's name and ``:`` when the service namespaces its sessions by policy (:mod:`.policies`);
the act goes to that policy's guard.

The admin key is checked like the client keys (``Authorization: Bearer <key>`` hashed with
sha256 and compared by ``hmac.compare_digest``) against its own digest; a client key is not an
admin key. Without an admin digest the routes are not mounted (they answer 404). Imports the
guard's public facade and the service's errors, auth and replies.
"""

from __future__ import annotations

import asyncio
import hmac
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from governor.errors import ConfigError, expected
from governor.guard import Guard
from governor.guard.facade import MAX_STORED_ID
from governor.guard.session_state import operator_status
from governor.serve.api_errors import ApiError, bad_request
from governor.serve.auth import checked_digest, digest
from governor.serve.policies import ServedPolicies
from governor.serve.schema import parse_json, read_body

MAX_ACT_BODY = 8192
"""The most bytes an operator act's body may have."""


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


def _session_id(request: Request) -> str:
    session = str(request.path_params["session_id"])
    if not 0 < len(session) <= MAX_STORED_ID:
        raise bad_request(
            f"session id: expected text of 1 to {MAX_STORED_ID} characters,"
            f" found {len(session)} characters",
            "session_id",
        )
    return session


def _not_found(session: str) -> ApiError:
    return ApiError(
        404, f"expected a known session, found no session {session!r:.220}", code="unknown_session"
    )


class Admin:
    """The admin endpoints over the served policies (see the module doc)."""

    def __init__(self, policies: ServedPolicies, key: AdminKey) -> None:
        self.policies = policies
        self.key = key

    def _guard(self, session: str) -> Guard:
        return self.policies.for_stored(session).guard

    def _session(self, request: Request) -> str:
        self.key.check(request.headers.get("authorization"))
        return _session_id(request)

    async def _act(self, request: Request, kind: str) -> Response:
        session = self._session(request)
        body = await _body(request)
        who, why = _who_and_why(body)
        mode = _mode(body) if kind == "set_mode" else None
        try:
            state = (
                await self._guard(session)
                .session(session)
                .operate(kind, who=who, why=why, mode=mode)
            )
        except ConfigError as exc:
            raise ApiError(409, str(exc), code="operator_act_refused") from None
        answer = {
            "object": "governor.session",
            "session": session,
            "paused": state.paused,
            "ended": state.ended,
            "act": state.acts[-1].to_json(),
        }
        if state.supervisor is not None:
            answer["supervision"] = _supervision(state.supervisor.to_json())
        return JSONResponse(answer)

    async def set_mode(self, request: Request) -> Response:
        return await self._act(request, "set_mode")

    async def release(self, request: Request) -> Response:
        return await self._act(request, "release")

    async def pause(self, request: Request) -> Response:
        return await self._act(request, "pause")

    async def resume(self, request: Request) -> Response:
        return await self._act(request, "resume")

    async def end(self, request: Request) -> Response:
        return await self._act(request, "end")

    async def reset(self, request: Request) -> Response:
        session = self._session(request)
        if not await self._guard(session).reset(session):
            raise _not_found(session)
        return JSONResponse({"object": "governor.session", "session": session, "reset": True})

    async def show(self, request: Request) -> Response:
        session = self._session(request)
        store = self._guard(session).store
        state, records = await asyncio.gather(
            asyncio.to_thread(store.load, session), asyncio.to_thread(store.records, session)
        )
        if state is None and not records:
            raise _not_found(session)
        state = state or {}
        acts = state.get("operator") or []
        paused, ended = operator_status(a.get("kind") for a in acts)
        answer = {
            "object": "governor.session",
            "session": session,
            "paused": paused,
            "ended": ended,
            "t": state.get("t", 0),
            "messages": state.get("messages", []),
            "monitors": state.get("memory", {}),
            "feedback": state.get("feedback"),
            "operator": acts,
            "decisions": records,
        }
        if isinstance(state.get("supervisor"), dict):
            answer["supervision"] = _supervision(state["supervisor"])
        return JSONResponse(answer)


def _supervision(saved: dict[str, Any]) -> dict[str, Any]:
    """What an operator reads of a saved supervisor state (its JSON form)."""
    keys = ("mode", "engaged", "operator_mode", "paused", "ended", "t", "refusals",
            "cooldown_until", "counts", "audit")  # fmt: skip
    return {k: saved.get(k) for k in keys}


async def _body(request: Request) -> dict[str, Any]:
    """The act's optional JSON body (an object), read as a chat request's is: 413 past
    :data:`MAX_ACT_BODY` bytes (counted as they arrive), 408 when it arrives too slowly, 400 for
    malformed JSON or a key named twice."""
    raw = await read_body(request, MAX_ACT_BODY)
    return parse_json(raw) if raw.strip() else {}


def _mode(body: dict[str, Any]) -> str:
    """The mode an operator sets (required)."""
    mode = body.get("mode")
    if not isinstance(mode, str) or not mode.strip() or len(mode) > 200:
        raise bad_request(f"mode: {expected('the name of one of the policy modes', mode)}", "mode")
    return mode.strip()


def _who_and_why(body: dict[str, Any]) -> tuple[str, str]:
    """The operator and the reason from the body (``{"who", "why"}``, both optional)."""
    out = []
    for key, default in (("who", "admin"), ("why", "no reason given")):
        value = body.get(key, default)
        if not isinstance(value, str) or not value.strip() or len(value) > 1000:
            raise bad_request(f"{key}: {expected('text of 1 to 1000 characters', value)}", key)
        out.append(value.strip())
    return out[0], out[1]
