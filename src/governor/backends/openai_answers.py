"""Reading the answers of an OpenAI-compatible API: choices with their log-probabilities and
tool calls, embedding rows, token counts, and the bound on an answer's size.

An answer that does not have the expected shape is refused through ``unexpected(what, found,
data)``, which the backend supplies (it names the endpoint and masks the API key). Imports the
backend types and the error tree.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from governor.backends.base import Completion, TokenLogprob, ToolCall
from governor.errors import BackendResponseError, ConfigError

Unexpected = Callable[[str, Any, dict[str, Any]], BackendResponseError]

MAX_RESPONSE_BYTES = 16 * 2**20
"""The largest answer body read (whole or streamed); a larger one is an unusable answer."""


def completions(data: dict[str, Any], *, unexpected: Unexpected) -> tuple[Completion, ...]:
    """The choices of a chat completion, in ``index`` order; content may be null in a choice
    that calls tools."""
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices:
        raise unexpected("a non-empty list 'choices'", choices, data)
    result = []
    for i, choice in enumerate(by_index(choices)):
        message = choice.get("message") if isinstance(choice, dict) else None
        if not isinstance(message, dict):
            raise unexpected(f"choices[{i}].message an object", choice, data)
        calls = tool_calls(message.get("tool_calls"), f"choices[{i}].message", data, unexpected)
        content = message.get("content")
        if content is None and calls:
            content = ""
        if not isinstance(content, str):
            raise unexpected(f"choices[{i}].message.content a string", choice, data)
        reason = choice.get("finish_reason")
        try:
            tokens = token_logprobs(choice.get("logprobs"))
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            what = f"choices[{i}].logprobs.content a list of {{token, logprob, top_logprobs}}"
            raise unexpected(what, choice.get("logprobs"), data) from exc
        reason = reason if isinstance(reason, str) else None
        result.append(Completion(content, reason, tokens, calls))
    return tuple(result)


def tool_calls(
    raw: Any, where: str, data: dict[str, Any], unexpected: Unexpected
) -> tuple[ToolCall, ...]:
    """The ``tool_calls`` of an answer's message (none when absent or null)."""
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise unexpected(f"{where}.tool_calls a list", raw, data)
    calls = []
    for j, item in enumerate(raw):
        try:
            calls.append(ToolCall.from_dict(item, f"{where}.tool_calls[{j}]", j))
        except ConfigError as exc:
            raise unexpected(f"a well-formed function call ({exc})", item, data) from exc
    return tuple(calls)


def embeddings(data: dict[str, Any], count: int, *, unexpected: Unexpected) -> np.ndarray:
    """``data[*].embedding`` ordered by ``index``, as float32 rows; ``count`` of them."""
    items = data.get("data")
    what = f"a list 'data' of {count} embeddings of equal length"
    if not isinstance(items, list) or len(items) != count:
        raise unexpected(what, items, data)
    try:
        vectors = np.asarray([item["embedding"] for item in by_index(items)], np.float32)
    except (KeyError, TypeError, ValueError) as exc:
        raise unexpected(what, items, data) from exc
    if vectors.ndim != 2:
        raise unexpected(what, items, data)
    return vectors


def token_logprobs(raw: Any) -> tuple[TokenLogprob, ...] | None:
    """``logprobs.content`` of a choice as TokenLogprob tuples; None when there is none."""
    content = raw.get("content") if isinstance(raw, dict) else None
    if content is None:
        return None
    return tuple(
        TokenLogprob(
            str(item["token"]),
            float(item["logprob"]),
            tuple((str(a["token"]), float(a["logprob"])) for a in item.get("top_logprobs") or ()),
        )
        for item in content
    )


def by_index(items: list[Any]) -> list[Any]:
    """Items sorted by their integer ``index`` field (their position when they have none)."""
    if len(items) < 2:
        return items  # (the usual answer: one choice)

    def key(pair: tuple[int, Any]) -> int:
        position, item = pair
        index = item.get("index") if isinstance(item, dict) else None
        return index if isinstance(index, int) else position

    return [item for _, item in sorted(enumerate(items), key=key)]


def token_counts(data: dict[str, Any]) -> tuple[int, int]:
    """(prompt_tokens, completion_tokens) from the answer's ``usage``; 0 for what is missing."""
    usage = data.get("usage")
    if not isinstance(usage, dict):
        return 0, 0
    counts = [usage.get("prompt_tokens"), usage.get("completion_tokens")]
    prompt, completion = (c if isinstance(c, int) and c >= 0 else 0 for c in counts)
    return prompt, completion
