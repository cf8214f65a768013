"""Streaming that releases only checked text: Server-Sent Events in the OpenAI chunk format.

The hold-back rule: nothing is sent before the whole reply has passed every check. This first
version runs the guarded step to its end, then streams the admitted reply (the fallback text when
the upstream's reply was refused): a first chunk with the role, the text in chunks cut at
sentence boundaries (or the tool calls in one chunk), a final chunk with ``finish_reason``, the
usage and the ``governor`` summary, then ``data: [DONE]``. :func:`release` is the one place that
decides what may go out; incremental checking (releasing each sentence once a prefix check
admits it) replaces it later without touching the event writer. Imports the service's reply
shapes.
"""

from __future__ import annotations

import re
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

from governor.serve.replies import Answer, completion_id, finish_reason, json_bytes, usage

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


def release(guarded: Answer) -> Iterator[dict[str, Any]]:
    """The deltas of an admitted reply, in order (the reply has passed every check)."""
    reply = guarded.reply
    yield {"role": "assistant", "content": ""}
    for piece in sentences(reply.content or ""):
        yield {"content": piece}
    if reply.tool_calls:
        yield {
            "tool_calls": [
                {"index": i, **call.to_dict()} for i, call in enumerate(reply.tool_calls)
            ]
        }


def _event(data: dict[str, Any]) -> str:
    return f"data: {json_bytes(data).decode('utf-8')}\n\n"


async def sse_events(guarded: Answer, model: str) -> AsyncIterator[str]:
    """The Server-Sent Events of one guarded reply, ending with ``data: [DONE]``."""
    head = {
        "id": completion_id(),
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
    }
    for delta in release(guarded):
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": None}
        yield _event({**head, "choices": [choice]})
    last = {
        "index": 0,
        "delta": {},
        "logprobs": None,
        "finish_reason": finish_reason(guarded.reply),
    }
    yield _event(
        {
            **head,
            "choices": [last],
            "usage": usage(guarded.summary),
            "governor": dict(guarded.summary),
        }
    )
    yield "data: [DONE]\n\n"
