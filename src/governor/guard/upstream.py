"""The upstream model as the base policy: candidate replies, text or tool calls.

The request is the policy's system prompt (if any), the conversation, and, when the observer has
something to say, its feedback as a final system note. One request asks for ``n`` completions and
counts as one LLM call (the backend records it). A request's own temperature replaces the
policy's; its ``max_tokens`` can lower the policy's bound, never raise it.

A backend that ``supports_tools`` (e.g. :class:`~governor.backends.openai.OpenAIBackend`) receives
the conversation's messages (tool calls and tool results included) and the ``tools`` as they are,
and answers with completions that carry text, tool calls or both. Any other backend is asked in
text: the tools are listed in a system note, earlier tool calls are shown as
``{"tool_calls": [...]}``, tool results as user messages. On either path, a completion whose text
is such a JSON object is read back as tool calls (a model may write its calls as text). A reply
that is empty, or tool calls that are not well formed, become invalid candidates, which the
observer never executes. :meth:`UpstreamPolicy.stream` asks for one completion as it is generated
(the backend's :meth:`~governor.backends.base.Backend.stream_chat`). Imports the core types, the
backend interface and the guard's exchange.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from governor.backends.base import Backend, Completion, Message, OnDelta
from governor.core import Candidate, Feedback, FeedbackKind, Policy, Trajectory
from governor.errors import ConfigError
from governor.files import json_loads
from governor.guard.exchange import Conversation, Reply, reply_from

NOTE = {
    FeedbackKind.IMPLICIT: "Note from your supervisor about your last reply: {text}",
    FeedbackKind.FORCED: "Your supervisor rejected your reply; write a new one. {text}",
}
TOOLS_NOTE = (
    "You may call these tools. To call tools, reply with only a JSON object"
    ' {{"tool_calls": [{{"name": ..., "arguments": {{...}}}}]}}. Tools: {tools}'
)


class UpstreamPolicy(Policy):
    """Proposes replies from the upstream model (see the module doc)."""

    name = "upstream"

    def __init__(
        self,
        backend: Backend,
        *,
        system_prompt: str | None = None,
        temperature: float = 0.7,
        max_tokens: int = 512,
    ) -> None:
        self.backend = backend
        self.system_prompt = system_prompt
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.reported_model: str | None = None
        """The model name the upstream gave in its last reply (None before the first)."""

    def propose(
        self, traj: Trajectory, feedback: Feedback | None, n: int
    ) -> Sequence[Candidate[Any]]:
        result = self.backend.chat(n=n, **self.request(traj, feedback))
        self.reported_model = result.model or self.reported_model
        return [completion_candidate(c) for c in result.completions]

    def stream(self, traj: Trajectory, feedback: Feedback | None, on_delta: OnDelta) -> Completion:
        """One completion, asked with ``stream: true``; its text goes to ``on_delta`` as it
        arrives (:meth:`~governor.backends.base.Backend.stream_chat`: a backend that cannot
        stream hands its whole completion over as one piece)."""
        return self.backend.stream_chat(on_delta=on_delta, **self.request(traj, feedback))

    def request(self, traj: Trajectory, feedback: Feedback | None) -> dict[str, Any]:
        """The arguments of the request for ``traj`` (all but ``n``)."""
        conv = traj.observation
        if not isinstance(conv, Conversation):
            raise ConfigError(f"upstream: expected a Conversation, found {type(conv).__name__}")
        native = self.backend.supports_tools
        asked = conv.sampling
        return {
            "messages": self.messages(conv, feedback, native=native),
            "temperature": self.temperature if asked.temperature is None else asked.temperature,
            "max_tokens": min(self.max_tokens, asked.max_tokens or self.max_tokens),
            "tools": conv.tools if native else None,
        }

    def messages(
        self, conv: Conversation, feedback: Feedback | None, *, native: bool
    ) -> list[Message]:
        """The request: natively with tool calls, or with the tools and calls written as text."""
        out = [Message("system", self.system_prompt)] if self.system_prompt else []
        if conv.tools and not native:
            listed = json.dumps(list(conv.tools), sort_keys=True)
            out.append(Message("system", TOOLS_NOTE.format(tools=listed)))
        out += conv.messages if native else [_as_text(m) for m in conv.messages]
        if feedback is not None:
            out.append(Message("system", NOTE[feedback.kind].format(text=feedback.text)))
        return out


def _as_text(m: Message) -> Message:
    if m.role == "tool":
        return Message("user", f"Result of tool call {m.tool_call_id}: {m.content}")
    if m.role == "assistant" and m.tool_calls:
        calls = [{"name": c.name, "arguments": c.args()} for c in m.tool_calls]
        return Message("assistant", json.dumps({"content": m.content or None, "tool_calls": calls}))
    return m


def completion_candidate(completion: Completion) -> Candidate[Any]:
    """A candidate from a completion: its tool calls, or its text (see :func:`text_candidate`)."""
    if completion.tool_calls:
        reply = Reply(completion.text or None, completion.tool_calls)
        return _checked(reply, json.dumps(reply.to_dict()))
    return text_candidate(completion.text)


def text_candidate(text: Any) -> Candidate[Any]:
    """A candidate from completion text: tool calls when it is a ``{"tool_calls": ...}`` object."""
    if not isinstance(text, str):
        return Candidate.invalid(None, f"expected a text reply, found {type(text).__name__}")
    body = text.strip()
    if body.startswith("{") and '"tool_calls"' in body:
        try:
            data = json_loads(body)
            reply = reply_from(data if isinstance(data, dict) else body, "upstream reply")
        except (ValueError, ConfigError) as exc:
            return Candidate.invalid(text, f"expected well-formed tool calls: {exc}")
        return _checked(reply, text)
    return _checked(Reply(body), text)


def _checked(reply: Reply, text: str) -> Candidate[Any]:
    if not reply.tool_calls and not (reply.content or "").strip():
        return Candidate.invalid(text, "expected a text reply or tool calls, found an empty reply")
    return Candidate(reply, text)
