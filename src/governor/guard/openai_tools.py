"""An OpenAI-compatible backend that passes ``tools`` through and answers with assistant messages.

:meth:`OpenAIToolsBackend.chat_tools` sends the conversation's OpenAI messages (tool calls and
tool results included) and the tools as they are, with the retries, deadline and circuit breaker
of :class:`~governor.backends.openai.OpenAIBackend`, and returns each choice's message (text,
``tool_calls`` or both). Every request is counted as an LLM call, failed ones included, the same
way :meth:`Backend.chat <governor.backends.base.Backend.chat>` counts them. Imports the backends,
the config helpers, the error tree and the usage meter.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

from governor.backends.openai import OpenAIBackend
from governor.backends.openai_answers import by_index, token_counts
from governor.config import check_range
from governor.errors import BackendError
from governor.usage import Usage, record_llm_call


class OpenAIToolsBackend(OpenAIBackend):
    """:class:`OpenAIBackend` plus native tool calling (see the module doc)."""

    def chat_tools(
        self,
        messages: list[dict[str, Any]],
        *,
        tools: Sequence[Any],
        n: int,
        temperature: float,
        max_tokens: int,
    ) -> list[Mapping[str, Any]]:
        """The assistant message of each of the ``n`` choices, in index order."""
        check_range("n", n, 1, 128)
        check_range("temperature", temperature, 0.0, 5.0)
        check_range("max_tokens", max_tokens, 1, 1_000_000)
        body: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "n": n,
            "temperature": temperature,
            "max_tokens": max_tokens,
        }
        if tools:
            body["tools"] = list(tools)
        start = time.perf_counter()
        try:
            (answers, data), requests = self._post("/chat/completions", body, self._messages)
        except BackendError as exc:
            calls = getattr(exc, "requests", 1)
            record_llm_call(Usage(calls=calls, seconds=time.perf_counter() - start, failed=1))
            raise
        except Exception as exc:  # a bug still fails as a backend error, counted
            record_llm_call(Usage(calls=1, seconds=time.perf_counter() - start, failed=1))
            raise BackendError(f"{self.name}: {type(exc).__name__}: {exc}") from exc
        prompt, completion = token_counts(data)
        seconds = time.perf_counter() - start
        record_llm_call(Usage(requests, prompt, completion, seconds))
        return answers

    def _messages(self, data: dict[str, Any]) -> list[Mapping[str, Any]]:
        choices = data.get("choices")
        if not isinstance(choices, list) or not choices:
            raise self._unexpected("a non-empty list 'choices'", choices, data)
        out: list[Mapping[str, Any]] = []
        for i, choice in enumerate(by_index(choices)):
            message = choice.get("message") if isinstance(choice, dict) else None
            if not isinstance(message, dict):
                raise self._unexpected(f"choices[{i}].message an object", choice, data)
            out.append(message)
        return out
