"""What a streamed reply sends the client: released text, whole tool calls, then its end.

A :class:`ReleaseGate` holds what one streamed step has sent (the text released so far, each
checked chunk with its check time and LLM calls, when the upstream's first token and the first
release came) and is closed when the step ends, so a stage that overran its time can release
nothing more. :meth:`ReleaseGate.seen` is what the client sees of an answer (the released text,
then the answer's when the answer does not go on from it): what the trajectory commits.
:meth:`ReleaseGate.finish` sends a :class:`StreamEnd` with the rest. Text goes out in sentence
pieces (:func:`sentences`). Imports the core decision and the guard's exchange and summary (a
refusal's reason as the client may read it).
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from governor.core import Decision
from governor.guard.exchange import Reply, ToolCall
from governor.guard.summary import public_reason

SENTENCE_END = re.compile(r"(?<=[.!?…])\s+|\n+")


def sentences(text: str) -> list[str]:
    """``text`` cut after each sentence end (the spaces stay with the sentence before them);
    joined, the pieces are ``text`` again."""
    pieces, start = [], 0
    for m in SENTENCE_END.finditer(text):
        pieces.append(text[start : m.end()])
        start = m.end()
    if start < len(text):
        pieces.append(text[start:])
    return [p for p in pieces if p]


@dataclass(frozen=True)
class TextDelta:
    """Released text."""

    text: str


@dataclass(frozen=True)
class ToolCallsDelta:
    """Tool calls, released whole once the reply was judged."""

    calls: tuple[ToolCall, ...]


@dataclass(frozen=True)
class StreamEnd:
    """The end of a streamed reply: the reply as the client sees it (``sent`` characters of its
    text were released before), the decision, its summary."""

    reply: Reply
    decision: Decision
    summary: Mapping[str, Any]
    sent: int = 0

    def rest(self) -> list[TextDelta | ToolCallsDelta]:
        """What is still to be sent of the reply: its text after the released part (in sentence
        pieces), then its tool calls in one piece."""
        out: list[TextDelta | ToolCallsDelta] = [
            TextDelta(p) for p in sentences((self.reply.content or "")[self.sent :])
        ]
        return out + ([ToolCallsDelta(self.reply.tool_calls)] if self.reply.tool_calls else [])


StreamEvent = TextDelta | ToolCallsDelta | StreamEnd


class ReleaseGate:
    """What one streamed step has sent the client (see the module doc); thread-safe."""

    def __init__(self, emit: Callable[[StreamEvent], None]) -> None:
        self._emit = emit
        self._lock = threading.Lock()
        self._open = True
        self._start = time.perf_counter()
        self.text = ""
        self.chunks: list[dict[str, Any]] = []
        self.first_token_s: float | None = None
        self.first_release_s: float | None = None

    def upstream_token(self) -> None:
        if self.first_token_s is None:
            self.first_token_s = time.perf_counter() - self._start

    def release(self, text: str) -> bool:
        """Send ``text`` (checked) unless the step has ended; whether it was sent."""
        with self._lock:
            if not self._open:
                return False
            if self.first_release_s is None:
                self.first_release_s = time.perf_counter() - self._start
            self.text += text
            for piece in sentences(text):
                self._emit(TextDelta(piece))
            return True

    def close(self) -> str:
        """End the step's releases; the text released."""
        with self._lock:
            self._open = False
            return self.text

    def seen(self, reply: Reply) -> Reply:
        """What the client sees when ``reply`` is the step's answer: ``reply`` itself when it
        goes on from the released text, else the released text followed by ``reply``'s."""
        said = reply.content or ""
        if said.startswith(self.text):
            return reply
        gap = "" if self.text[-1:].isspace() or not said else " "
        return Reply(self.text + gap + said, reply.tool_calls)

    def finish(self, reply: Reply, decision: Decision, summary: Mapping[str, Any]) -> None:
        """Send the end: ``reply`` (which goes on from the released text) and what of it is
        still to be sent (:meth:`StreamEnd.rest`)."""
        self._emit(StreamEnd(reply, decision, summary, len(self.text)))

    def summary(self, decision: Decision, streamed: bool) -> dict[str, Any]:
        """The ``stream`` part of the reply's summary: the chunks checked (time, LLM calls,
        verdict), when the upstream's first token and the first release came, and, when the
        streamed reply was not executed, which chunk was refused and why."""
        refused = None
        if not streamed and (decision.attempts or decision.errors):  # asked for, not executed
            last = decision.attempts[-1].verdicts if decision.attempts else ()
            by = sorted({v.constraint for row in last for v in row if not v.admissible})
            refused = {"chunk": len(self.chunks), "by": by, "reason": public_reason(decision)}
            if self.chunks and not self.chunks[-1]["admitted"]:  # refused on a prefix
                last_chunk = self.chunks[-1]
                refused = {**refused, "chunk": last_chunk["index"], "by": last_chunk["by"]}
        return {
            "released_chars": len(self.text),
            "chunks": list(self.chunks),
            "upstream_first_token_s": self.first_token_s,
            "first_release_s": self.first_release_s,
            "refused": refused,
        }
