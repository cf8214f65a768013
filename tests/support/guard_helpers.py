"""Helpers for the guard tests: the example tool policy, scripted tool-call replies, a guard."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from governor.backends.scripted import Reply, ScriptedBackend
from governor.guard import Guard, GuardReply, SessionStore, load_policy

ROOT = Path(__file__).resolve().parents[2]
TOOLS_POLICY = ROOT / "examples" / "policies" / "tools.yaml"
SMALLTALK_POLICY = ROOT / "examples" / "policies" / "smalltalk.yaml"


def call(name: str, **arguments: Any) -> str:
    """A scripted completion that calls the tool ``name`` (the text protocol of the upstream)."""
    return json.dumps({"tool_calls": [{"name": name, "arguments": arguments}]})


def tool_guard(
    replies: list[Reply], *, store: SessionStore | None = None
) -> tuple[Guard, ScriptedBackend]:
    """A guard of the example tool policy over a scripted upstream."""
    backend = ScriptedBackend(replies)
    return Guard.from_policy(load_policy(TOOLS_POLICY), backend=backend, store=store), backend


class Conversation:
    """The client's side: the messages it sends, with the guard's replies and tool results."""

    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []

    def user(self, text: str) -> list[dict[str, Any]]:
        self.messages.append({"role": "user", "content": text})
        return list(self.messages)

    def took(self, reply: GuardReply, result: str = "done") -> None:
        """Append the guard's reply, and a tool result for each of its calls."""
        self.messages.append(reply.message)
        for c in reply.reply.tool_calls:
            self.messages.append({"role": "tool", "tool_call_id": c.id, "content": result})
