"""What a session store is: the protocol every store keeps, and what the stores share.

A :class:`SessionStore` loads a session's saved state (JSON-safe, see
:mod:`governor.guard.session_state`) and saves it together with the record of the decision that
produced it, in one write. A failing write raises :class:`StoreError`; the session then fails
closed. A store that several processes share (:class:`SharedStore`, e.g. PostgreSQL in
:mod:`.postgres`) says so with ``shared = True`` and gives a lock per session: a session then
holds no state between calls and re-reads it under that lock at the start of each call
(:func:`shared_lock`). :func:`encoded` is the JSON every store writes; :func:`close_all` closes
the connections a store holds. Imports the error tree and :mod:`governor.jsontext` only.
"""

from __future__ import annotations

import json
import threading
import weakref
from collections.abc import Mapping, MutableSequence, Sequence
from contextlib import AbstractContextManager, suppress
from typing import Any, Protocol, cast, runtime_checkable

from governor.errors import GovernorError
from governor.jsontext import sorted_text

PROBE_ID = "governor-readiness-probe"
"""The session a store's ``probe`` writes and rolls back (readiness checks leave no row)."""


class StoreError(GovernorError):
    """A session store could not read or write."""


@runtime_checkable
class SessionStore(Protocol):
    """Keeps each session's state and its decision records."""

    def load(self, session_id: str) -> Mapping[str, Any] | None:
        """The saved state of ``session_id``; None for a new session. A store with
        ``appends_messages = True`` also takes ``since=(log, k)``: the caller holds the first
        ``k`` messages of the message log ``log`` (the state's ``log``); when the saved state is
        still on that log and holds at least ``k`` messages, only those from index ``k`` on are
        read, and the state says where they start (``messages_from``; 0 when all are given)."""
        ...

    def save(
        self, session_id: str, state: Mapping[str, Any], record: Mapping[str, Any] | None
    ) -> None:
        """Save ``state`` (and the decision ``record``, when given) in one write. A store with
        ``appends_messages = True`` also takes ``messages=(start, new)``: the session's messages
        from index ``start`` on are ``new`` (those before stay as saved); its state then holds
        ``n_messages`` instead of ``messages``, and :meth:`load` gives them back in
        ``messages``."""
        ...

    def records(self, session_id: str) -> list[dict[str, Any]]:
        """The decision records of ``session_id``, oldest first."""
        ...


@runtime_checkable
class SharedStore(SessionStore, Protocol):
    """A store several processes share: each call on a session holds the session's lock."""

    shared: bool
    """True: sessions re-read their state under :meth:`locked` at the start of each call."""

    def locked(self, session_id: str) -> AbstractContextManager[None]:
        """Hold ``session_id``'s lock for a call (its loads and its save happen inside)."""
        ...


def shared_lock(store: SessionStore, session_id: str) -> AbstractContextManager[None] | None:
    """The lock of ``session_id`` in a shared store; None for a store of one process."""
    if not getattr(store, "shared", False):
        return None
    kind = type(store)
    shared = _SHARED_KINDS.get(kind)
    if shared is None:  # the protocol's isinstance walks its members: tens of microseconds
        shared = _SHARED_KINDS[kind] = isinstance(store, SharedStore)
    return cast(SharedStore, store).locked(session_id) if shared else None


_SHARED_KINDS: weakref.WeakKeyDictionary[type, bool] = weakref.WeakKeyDictionary()
"""Whether a store class has :class:`SharedStore`'s methods (its ``shared`` flag is read from
each store)."""


MessageLog = tuple[int, Sequence[Mapping[str, Any]]]
"""The messages a save appends: from index ``start`` on, these (JSON-safe)."""


def encoded_messages(session_id: str, log: MessageLog | None) -> tuple[int, list[str]]:
    """The start and JSON texts of the messages a save appends (none: ``(0, [])`` unused)."""
    if log is None:
        return 0, []
    start, new = log
    try:
        return int(start), [_dumps(m) for m in new]
    except (TypeError, ValueError) as exc:
        raise StoreError(f"session {session_id}: expected JSON-safe messages, found {exc}") from exc


Since = tuple[str, int]
"""What a caller of ``load`` holds already: a message log's id and how many of its messages."""


def message_range(state: Mapping[str, Any], since: Since | None) -> tuple[int, int] | None:
    """The indices ``[start, end)`` of the messages to read for a loaded state that keeps them
    apart (None: it holds them itself): from the caller's ``since`` when the state is still on
    that log and holds at least as many, else from 0."""
    n = state.get("n_messages")
    if n is None:
        return None
    end = int(n)
    if since is not None and state.get("log") == since[0] and 0 <= since[1] <= end:
        return since[1], end
    return 0, end


def with_messages(state: dict[str, Any], texts: Sequence[str], start: int = 0) -> dict[str, Any]:
    """A loaded state whose messages are kept apart: the messages read (from index ``start`` on,
    ``messages_from``) put back in."""
    n = state.pop("n_messages", None)
    if n is not None:
        state["messages"] = [json.loads(t) for t in texts[: int(n) - start]]
        state["messages_from"] = start
    return state


def _dumps(value: Any) -> str:
    """Sorted-key JSON text (compact UTF-8 with orjson; a TypeError or ValueError where
    ``json.dumps(value, sort_keys=True, allow_nan=False)`` raises)."""
    return sorted_text(value)


def encoded(
    session_id: str, state: Mapping[str, Any], record: Mapping[str, Any] | None
) -> tuple[str, str | None]:
    """The JSON texts of a state and its decision record; a StoreError when not JSON-safe."""
    try:
        return _dumps(state), None if record is None else _dumps(record)
    except (TypeError, ValueError) as exc:
        raise StoreError(f"session {session_id}: expected JSON-safe state, found {exc}") from exc


def close_all(
    conns: MutableSequence[Any], lock: threading.Lock, errors: tuple[type[Exception], ...] = ()
) -> None:
    """Close and forget every connection in ``conns`` (taken under ``lock``); an error of a type
    in ``errors`` while closing one is ignored (a broken connection is closed already)."""
    with lock:
        closing = list(conns)
        conns.clear()
    for conn in closing:
        with suppress(*errors):
            conn.close()
