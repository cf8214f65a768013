"""Streaming that releases only checked text: Server-Sent Events in the OpenAI chunk format.

The hold-back rule: no text is sent before it has passed every check that judges prefixes, and
the last chunk not before the whole reply has passed every check (the session's streamed step,
:mod:`governor.guard.holdback`). :func:`sse_events` writes the session's events as they come: a
first chunk with the role, each released piece of text, the tool calls in one chunk once the
whole reply was judged, and, when a later chunk was refused, the fallback's text after what was
released; then a final chunk with ``finish_reason``, the usage and the ``governor`` summary
(whose ``stream`` part says which chunk was refused and why), then ``data: [DONE]``. Imports the
guard's stream events and the service's reply shapes.
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

from governor.guard.release import StreamEnd, StreamEvent, TextDelta, ToolCallsDelta
from governor.serve.replies import completion_id, finish_reason, json_bytes, usage

log = logging.getLogger(__name__)


def _event(data: dict[str, Any]) -> str:
    return f"data: {json_bytes(data).decode('utf-8')}\n\n"


def _delta(event: TextDelta | ToolCallsDelta) -> dict[str, Any]:
    if isinstance(event, TextDelta):
        return {"content": event.text}
    return {"tool_calls": [{"index": i, **c.to_dict()} for i, c in enumerate(event.calls)]}


async def sse_events(
    first: StreamEvent,
    rest: AsyncIterator[StreamEvent],
    model: str,
    ended: Callable[[StreamEnd], None] = lambda end: None,
) -> AsyncIterator[str]:
    """The Server-Sent Events of one streamed reply (``first``, then ``rest``), ending with
    ``data: [DONE]``; ``ended`` is told the end. A failure of the session's step after the first
    event ends the stream without ``[DONE]`` (logged): nothing unchecked was sent."""
    head = {
        "id": completion_id(),
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
    }

    def chunk(delta: dict[str, Any], reason: str | None = None, **more: Any) -> str:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": reason}
        return _event({**head, "choices": [choice], **more})

    yield chunk({"role": "assistant", "content": ""})
    event = first
    try:
        while not isinstance(event, StreamEnd):
            yield chunk(_delta(event))
            event = await anext(rest)
    except Exception:
        log.exception("a streamed reply failed after its first event")
        return
    for delta in event.rest():
        yield chunk(_delta(delta))
    ended(event)
    summary = event.summary
    yield chunk({}, finish_reason(event.reply), usage=usage(summary), governor=dict(summary))
    yield "data: [DONE]\n\n"
