"""Helpers for the streaming tests: upstream answers as chat completion chunk streams, a guard
whose policy checks text as it streams, and a reader of the service's events."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from fake_openai_server import Reply

from governor.guard import Guard, policy_from_mapping

FALLBACK = "Sorry, I can't do that."
NO_MARKUP = {"name": "no_markup", "feature": "markup", "bounds": {"max": 0}, "epsilon": 0,
             "kind": "prohibitory"}  # fmt: skip
"""Forbidden content: an HTML tag, a code fence or a Markdown mark (judged on every prefix)."""


def min_words(n: int) -> dict[str, Any]:
    """A whole-reply check: at least ``n`` words."""
    return {"name": "long_enough", "feature": "word_count", "bounds": {"min": n}, "epsilon": 0,
            "kind": "prohibitory"}  # fmt: skip


def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    return {"object": "chat.completion.chunk", "model": "fake-model", "choices": [choice]}


def streamed(
    *pieces: str,
    calls: tuple[tuple[str, str, list[str]], ...] = (),
    event_s: float = 0.0,
    **fault: Any,
) -> Reply:
    """An upstream answer streamed piece by piece: text, then tool calls ``(id, name, pieces of
    the arguments)``, a finish chunk, a usage chunk and ``[DONE]``."""
    events: list[Any] = [chunk({"role": "assistant", "content": ""})]
    events += [chunk({"content": p}) for p in pieces]
    for i, (call_id, name, args) in enumerate(calls):
        fn = {"name": name, "arguments": ""}
        events.append(chunk({"tool_calls": [{"index": i, "id": call_id, "type": "function", "function": fn}]}))  # fmt: skip
        events += [chunk({"tool_calls": [{"index": i, "function": {"arguments": a}}]}) for a in args]  # fmt: skip
    events.append(chunk({}, "tool_calls" if calls else "stop"))
    usage = {"prompt_tokens": 9, "completion_tokens": len(pieces)}
    events += [{"object": "chat.completion.chunk", "choices": [], "usage": usage}, "[DONE]"]
    return Reply(events=tuple(events), event_s=event_s, **fault)


def words(text: str) -> list[str]:
    """``text`` as the pieces an upstream streams: each word with the space before it."""
    out = text.split(" ")
    return [out[0]] + [" " + w for w in out[1:]]


def stream_guard(
    tmp_path: Path, upstream_url: str, overlays: list[dict[str, Any]], **stream: Any
) -> Guard:
    """A guard over the fake upstream whose text checks are ``overlays``, with the tool rules
    of ``examples/policies/tools.yaml`` (no sending email after reading a secret)."""
    (tmp_path / "overlays.yaml").write_text(yaml.safe_dump({"overlays": overlays}))
    policy = {
        "upstream": {
            "base_url": upstream_url,
            "model": "fake-model",
            "timeout_s": 5,
            "max_retries": 0,
        },
        "observer": {"n_candidates": 1, "max_regenerations": 1, "time_budget_s": 30},
        "overlays": "overlays.yaml",
        "propositions": {
            "read_secret": {"tool": "read_secret"},
            "send_email": {"tool": "send_email"},
        },
        "ltl": [
            {
                "name": "no_exfiltration",
                "text": "never call send_email after read_secret",
                "formula": "G(read_secret -> G !send_email)",
            }
        ],
        "fallbacks": {"default": FALLBACK},
        "checks": {"assistant": ["overlays", "ltl"], "tool_calls": ["ltl"]},
        "stream": stream,
    }
    return Guard.from_policy(policy_from_mapping(policy, source="stream.yaml", base_dir=tmp_path))


def read_events(raw: str) -> tuple[list[str], list[Any], dict[str, Any] | None, bool]:
    """The service's Server-Sent Events: the text deltas, the tool call deltas, the final
    ``governor`` summary and whether ``[DONE]`` closed the stream."""
    texts, calls, summary, done = [], [], None, False
    for block in raw.split("\n\n"):
        data = block.removeprefix("data: ").strip()
        if not data:
            continue
        if data == "[DONE]":
            done = True
            continue
        event = json.loads(data)
        delta = event["choices"][0]["delta"]
        texts += [delta["content"]] if delta.get("content") else []
        calls += delta.get("tool_calls") or []
        summary = event.get("governor", summary)
    return texts, calls, summary, done
