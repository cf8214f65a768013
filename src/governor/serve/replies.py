"""A guarded reply in the OpenAI chat completion shape, with the guard's summary beside it.

:func:`completion` writes a ``chat.completion`` object (one choice: the admitted text and/or tool
calls, ``finish_reason`` ``stop`` or ``tool_calls``; with ``n > 1`` each admitted choice; the
usage summed over the guard's stages) with a top-level ``governor`` field, the reply's summary; :func:`governor_headers` gives the
decision's kind and regenerations as headers. Both take an :class:`Answer`: a guarded reply (a paused
session's answer included). :func:`json_bytes` and :class:`FastJSONResponse` write JSON with
orjson when it is installed. Imports starlette's response type and the guard's public facade.
"""

from __future__ import annotations

import json
import os
import random
import time
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from starlette.responses import JSONResponse

from governor.guard import Reply

try:  # the [serve] extra's fast JSON; the standard library's writer otherwise
    import orjson
except ImportError:  # pragma: no cover - orjson is part of the [serve] extra
    orjson = None  # type: ignore[assignment]


def json_bytes(value: Any) -> bytes:
    """Compact UTF-8 JSON of ``value`` (orjson when installed). A non-finite float is an error
    with the standard library and ``null`` with orjson, never an invalid ``NaN`` token."""
    if orjson is not None:
        return orjson.dumps(value)
    text = json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    return text.encode("utf-8")


class FastJSONResponse(JSONResponse):
    """A JSON answer written with :func:`json_bytes`."""

    def render(self, content: Any) -> bytes:
        return json_bytes(content)


class Answer(Protocol):
    """What a reply is written from: the reply and its summary (a
    :class:`~governor.guard.GuardReply`)."""

    @property
    def reply(self) -> Reply: ...

    @property
    def summary(self) -> Mapping[str, Any]: ...


_IDS = random.Random()  # seeded from os.urandom
os.register_at_fork(after_in_child=_IDS.seed)  # a forked worker draws ids of its own


def completion_id() -> str:
    """``chatcmpl-`` and 32 hex digits, 128 bits drawn from a generator this process seeded from
    the system's randomness (a forked child seeds its own), so no two replies share one; drawn
    without a system call (``uuid4`` reads ``os.urandom`` each time). Not secret, and need not
    be: it names a reply to the client that got it and grants nothing."""
    return f"chatcmpl-{_IDS.getrandbits(128):032x}"


def assistant_message(reply: Reply) -> dict[str, Any]:
    """The OpenAI assistant message of ``reply`` (content null when it only calls tools)."""
    out: dict[str, Any] = {"role": "assistant", "content": reply.content}
    if reply.tool_calls:
        out["tool_calls"] = [c.to_dict() for c in reply.tool_calls]
    elif reply.content is None:
        out["content"] = ""
    return out


def finish_reason(reply: Reply) -> str:
    return "tool_calls" if reply.tool_calls else "stop"


def usage(summary: Mapping[str, Any]) -> dict[str, int]:
    """Tokens over every stage of the step (proposals, regenerations, feedback)."""
    stages = (summary.get("llm") or {}).get("stages") or {}
    prompt = sum(int(s.get("prompt_tokens") or 0) for s in stages.values())
    done = sum(int(s.get("completion_tokens") or 0) for s in stages.values())
    return {"prompt_tokens": prompt, "completion_tokens": done, "total_tokens": prompt + done}


def completion(guarded: Answer, model: str, choices: Sequence[Reply] = ()) -> dict[str, Any]:
    """The ``chat.completion`` object of ``guarded`` (one choice, or each of ``choices``), with
    its ``governor`` summary."""
    return {
        "id": completion_id(),
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": i,
                "message": assistant_message(reply),
                "logprobs": None,
                "finish_reason": finish_reason(reply),
            }
            for i, reply in enumerate(choices or (guarded.reply,))
        ],
        "usage": usage(guarded.summary),
        "governor": dict(guarded.summary),
    }


def governor_headers(summary: Mapping[str, Any]) -> dict[str, str]:
    return {
        "X-Governor-Decision": str(summary.get("kind", "")),
        "X-Governor-Regenerations": str(summary.get("regenerations", 0)),
    }
