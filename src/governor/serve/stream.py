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

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Callable, Coroutine
from typing import Any

from governor.guard.release import StreamEnd, StreamEvent, TextDelta, ToolCallsDelta
from governor.serve.replies import completion_id, finish_reason, json_bytes, usage

log = logging.getLogger(__name__)
DONE = "data: [DONE]\n\n"


def _event(data: dict[str, Any]) -> str:
    return f"data: {json_bytes(data).decode('utf-8')}\n\n"


def _delta(event: TextDelta | ToolCallsDelta) -> dict[str, Any]:
    if isinstance(event, TextDelta):
        return {"content": event.text}
    return {"tool_calls": [{"index": i, **c.to_dict()} for i, c in enumerate(event.calls)]}


async def _nothing() -> None:
    return None


_NOTES: set[asyncio.Task[None]] = set()
"""The delivered and not-delivered notes still being written (a task keeps no reference to
itself)."""


async def sse_events(
    first: StreamEvent,
    rest: AsyncIterator[StreamEvent],
    model: str,
    ended: Callable[[StreamEnd], None] = lambda end: None,
    delivered: Callable[[], Coroutine[Any, Any, None]] = _nothing,
    undelivered: Callable[[], Coroutine[Any, Any, None]] = _nothing,
) -> AsyncIterator[str]:
    """The Server-Sent Events of one streamed reply (``first``, then ``rest``), ending with
    ``data: [DONE]``; ``ended`` is told the end. A failure of the session's step after the first
    event ends the stream without ``[DONE]`` (logged): nothing unchecked was sent. Once the
    server asks for ``[DONE]`` it has sent every chunk before it (it awaits each send before it
    asks for the next), so the reply was wholly sent: ``delivered`` runs when the stream ends
    (the session commits the reply), shielded, so that a client that hangs up as soon as it has
    read the last chunk does not cancel it; a stream that ends before that (the client went
    away: the server stops reading it) calls ``undelivered``."""
    sent = False
    try:
        async for text in _events(first, rest, model, ended):
            sent = sent or text == DONE
            yield text
    finally:
        # a task of its own either way: a client that hangs up as soon as it read [DONE] cancels
        # this generator, and neither the commit nor the note may be cancelled with it
        task = asyncio.get_running_loop().create_task(delivered() if sent else undelivered())
        _NOTES.add(task)
        task.add_done_callback(_NOTES.discard)
        if sent:  # the stream's end waits for the commit, unless it is cancelled itself
            await asyncio.shield(task)


async def _events(
    first: StreamEvent,
    rest: AsyncIterator[StreamEvent],
    model: str,
    ended: Callable[[StreamEnd], None],
) -> AsyncIterator[str]:
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
    closing = getattr(rest, "aclose", None)
    if closing is not None:  # the session's stream ends here: its lock is let go
        await closing()
    for delta in event.rest():
        yield chunk(_delta(delta))
    ended(event)
    summary = event.summary
    yield chunk({}, finish_reason(event.reply), usage=usage(summary), governor=dict(summary))
    yield DONE
