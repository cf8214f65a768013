"""What ``governor trace show --store`` and ``governor audit --store`` read: a session store.

:func:`stored_records` gives the decision records of one stored session, or of every session in
the store; :func:`stored_runs` each session's messages as a run (a JSON line
``{"messages": [...]}``, what ``governor audit --policy`` judges). A session is named by its
stored id (what ``governor serve``'s admin routes name: the policy's ``NAME:`` and the owning
key's prefix included). The ``memory`` store holds nothing once its process ended, so it is
refused.
"""

from __future__ import annotations

import json
from typing import Any

from governor.errors import ConfigError
from governor.guard import SessionStore, store_from

MAX_SESSIONS = 100_000
"""The most sessions read from one store at once."""


def open_store(spec: str) -> SessionStore:
    """The store ``spec`` names (``sqlite:PATH`` or ``postgres:DSN``)."""
    if spec.strip() == "memory":
        raise ConfigError(
            "--store: expected sqlite:PATH or postgres:DSN (a store that outlives its process),"
            " found memory"
        )
    return store_from(spec)


def stored_ids(store: SessionStore, session: str | None) -> list[str]:
    """``[session]`` when it is saved in ``store``; every saved session's id when None."""
    if session is not None:
        if store.load(session) is None and not store.records(session):
            raise ConfigError(
                f"--session: expected a session saved in the store, found no {session!r}"
            )
        return [session]
    listing = getattr(store, "session_ids", None)
    if not callable(listing):
        raise ConfigError(
            f"--store: {type(store).__name__} cannot list its sessions; name one with --session"
        )
    ids: list[str] = listing(MAX_SESSIONS)
    return ids


def stored_records(spec: str, session: str | None) -> tuple[list[dict[str, Any]], str]:
    """The decision records of ``session`` (every session when None) and the store's name."""
    store = open_store(spec)
    try:
        records = [r for sid in stored_ids(store, session) for r in store.records(sid)]
    finally:
        _close(store)
    return records, spec.split(":", 1)[0] + " session store"


def stored_runs(spec: str, session: str | None) -> tuple[list[str], list[str]]:
    """Each session's messages as a JSON line ``{"messages": [...]}``, and the sessions' ids
    in the same order."""
    store = open_store(spec)
    lines, ids = [], []
    try:
        for sid in stored_ids(store, session):
            state = store.load(sid) or {}
            lines.append(json.dumps({"messages": list(state.get("messages") or [])}))
            ids.append(sid)
    finally:
        _close(store)
    return lines, ids


def _close(store: SessionStore) -> None:
    close = getattr(store, "close", None)
    if callable(close):
        close()
