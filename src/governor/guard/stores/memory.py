"""Sessions kept in this process: :class:`MemoryStore` (lost at exit; for tests, one-process
services and benchmarks). What it keeps goes through JSON, so what is saved is what a file holds.
Imports the stores' base.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from typing import Any

from governor.guard.stores.base import (
    MessageLog,
    Since,
    encoded,
    encoded_messages,
    message_range,
    with_messages,
)


class MemoryStore:
    """Sessions in this process (copied through JSON, so what is saved is what a file holds);
    a session's messages are kept apart and appended (``appends_messages``)."""

    appends_messages = True
    quick = True
    """A load or a save takes well under a millisecond and never waits for another process."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._states: dict[str, str] = {}
        self._messages: dict[str, list[str]] = {}
        self._records: dict[str, list[str]] = {}

    def load(self, session_id: str, since: Since | None = None) -> Mapping[str, Any] | None:
        with self._lock:
            text = self._states.get(session_id)
            kept = self._messages.get(session_id, [])
            if text is None:
                return None
            state = json.loads(text)
            span = message_range(state, since)
            start, end = span if span is not None else (0, 0)
            texts = kept[start:end]
        return with_messages(state, texts, start)

    def save(
        self,
        session_id: str,
        state: Mapping[str, Any],
        record: Mapping[str, Any] | None,
        messages: MessageLog | None = None,
    ) -> None:
        text, rec = encoded(session_id, state, record)
        start, texts = encoded_messages(session_id, messages)
        with self._lock:
            self._states[session_id] = text
            if messages is not None:
                kept = self._messages.setdefault(session_id, [])
                del kept[start:]
                kept.extend(texts)
            if rec is not None:
                self._records.setdefault(session_id, []).append(rec)

    def records(self, session_id: str) -> list[dict[str, Any]]:
        with self._lock:
            return [json.loads(r) for r in self._records.get(session_id, [])]

    def session_ids(self, limit: int = 100_000) -> list[str]:
        """The ids of the sessions saved (at most ``limit``, in order)."""
        with self._lock:
            return sorted(self._states)[:limit]

    def probe(self) -> None:
        """Nothing to check: memory is always writable."""
