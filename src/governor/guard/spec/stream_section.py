"""The ``stream`` section of a policy: how a streamed reply is cut into chunks to check and release.

::

    stream: {chunk_tokens: 40}

A streamed reply is held back and released in chunks, each once it has passed every check that
judges prefixes (:mod:`governor.guard.prefix`): a chunk ends at a sentence end, or after ``chunk_tokens``
words when no sentence ends first. Imports the spec's fields.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from governor.guard.spec.fields import At, mapping

MAX_CHUNK_TOKENS = 4096
STREAM_KEYS = ("chunk_tokens",)


@dataclass(frozen=True)
class StreamPolicy:
    """How a streamed reply is released."""

    chunk_tokens: int = 40
    """The most words held back when no sentence ends: a longer run is checked and released at
    its last whole word (fewer: a shorter wait for the first words, more checks per reply)."""


def stream_from(raw: Any, at: At) -> StreamPolicy:
    """The ``stream`` section (absent: the defaults)."""
    data = mapping({} if raw is None else raw, at, STREAM_KEYS)
    value = data.get("chunk_tokens", StreamPolicy.chunk_tokens)
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_CHUNK_TOKENS:
        at.key("chunk_tokens").fail(f"an integer in [1, {MAX_CHUNK_TOKENS}]", value)
    return StreamPolicy(value)
