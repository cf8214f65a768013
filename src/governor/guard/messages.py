"""OpenAI-style chat messages and the guard's action: a reply that is text or tool calls.

A conversation is a tuple of :class:`ChatMessage` (system, user, assistant, tool). An assistant
message is an action; its :class:`Reply` holds its text and its :class:`ToolCall` list, whose
``arguments`` is the JSON text of an object, as the OpenAI API sends it. Messages are read from
JSON-like mappings with errors that name the message and the field, and written back as JSON-safe
dicts. Imports the error tree only.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from governor.errors import ConfigError, expected

ROLES = ("system", "user", "assistant", "tool")
MAX_ARGUMENTS_CHARS = 65_536
"""The longest ``arguments`` text of one tool call that is read (a longer one is refused)."""


@dataclass(frozen=True)
class ToolCall:
    """One function call: its id, the function's name, its arguments as JSON text of an object."""

    id: str
    name: str
    arguments: str = "{}"

    def args(self) -> dict[str, Any]:
        """The arguments as a mapping; a ConfigError when they are not a JSON object."""
        return parse_arguments(self.arguments, f"tool call {self.name}")

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": self.arguments},
        }


@dataclass(frozen=True)
class Reply:
    """The guard's action: an assistant message of text, of tool calls, or both."""

    content: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()

    @property
    def is_tool_call(self) -> bool:
        return bool(self.tool_calls)

    def message(self) -> ChatMessage:
        return ChatMessage("assistant", self.content, self.tool_calls)

    def to_dict(self) -> dict[str, Any]:
        return self.message().to_dict()

    def describe(self) -> str:
        """A short human reading: the text, or the calls as ``name(arguments)``."""
        calls = ", ".join(f"{c.name}({c.arguments})" for c in self.tool_calls)
        return calls if calls else repr(self.content or "")


@dataclass(frozen=True)
class ChatMessage:
    """One message of a conversation."""

    role: str
    content: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None

    @property
    def reply(self) -> Reply:
        """This (assistant) message as an action."""
        return Reply(self.content, self.tool_calls)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.tool_calls:
            out["tool_calls"] = [c.to_dict() for c in self.tool_calls]
        if self.tool_call_id is not None:
            out["tool_call_id"] = self.tool_call_id
        return out


def parse_arguments(text: Any, where: str) -> dict[str, Any]:
    """The JSON object in ``text`` (at most :data:`MAX_ARGUMENTS_CHARS` characters)."""
    if not isinstance(text, str):
        raise ConfigError(f"{where}: arguments: {expected('JSON text of an object', text)}")
    if len(text) > MAX_ARGUMENTS_CHARS:
        found = f"{len(text):,} characters"
        raise ConfigError(
            f"{where}: arguments: expected at most {MAX_ARGUMENTS_CHARS:,} characters, "
            f"found {found}"
        )
    try:
        value = json.loads(text)
    except ValueError:
        raise ConfigError(
            f"{where}: arguments: {expected('JSON text of an object', text)}"
        ) from None
    if not isinstance(value, dict):
        raise ConfigError(f"{where}: arguments: {expected('a JSON object', value)}")
    return value


def call_id(name: str, arguments: str, index: int) -> str:
    """A stable id for a call that came without one."""
    digest = hashlib.sha256(f"{index}\x1f{name}\x1f{arguments}".encode()).hexdigest()
    return f"call_{digest[:16]}"


def tool_call_from(raw: Any, where: str, index: int = 0) -> ToolCall:
    """A call from ``{"id", "type": "function", "function": {"name", "arguments"}}`` (or the
    short form ``{"name", "arguments"}``; arguments as JSON text or as an object)."""
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{where}: {expected('a tool call object', raw)}")
    fn = raw.get("function", raw)
    if not isinstance(fn, Mapping):
        raise ConfigError(f"{where}.function: {expected('an object with name and arguments', fn)}")
    name = fn.get("name")
    if not isinstance(name, str) or not name:
        raise ConfigError(f"{where}.function.name: {expected('a function name', name)}")
    args = fn.get("arguments", "{}")
    text = args if isinstance(args, str) else json.dumps(args, sort_keys=True)
    parse_arguments(text, f"{where} ({name})")
    ident = raw.get("id")
    if ident is not None and not isinstance(ident, str):
        raise ConfigError(f"{where}.id: {expected('text', ident)}")
    return ToolCall(ident or call_id(name, text, index), name, text)


def message_from(raw: Any, where: str) -> ChatMessage:
    """A message from an OpenAI-style mapping (``role``, ``content``, ``tool_calls``, ...)."""
    if isinstance(raw, ChatMessage):
        return raw
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{where}: {expected('a message object with role and content', raw)}")
    role = raw.get("role")
    if role not in ROLES:
        raise ConfigError(f"{where}.role: {expected(' or '.join(ROLES), role)}")
    content = raw.get("content")
    if isinstance(content, list):  # content parts: keep the text ones
        content = "".join(
            p.get("text", "") for p in content if isinstance(p, Mapping) and p.get("type") == "text"
        )
    if content is not None and not isinstance(content, str):
        raise ConfigError(f"{where}.content: {expected('text or null', content)}")
    raw_calls = raw.get("tool_calls") or ()
    if role != "assistant" and raw_calls:
        raise ConfigError(f"{where}.tool_calls: expected none on a {role} message, found some")
    if not isinstance(raw_calls, (list, tuple)):
        raise ConfigError(f"{where}.tool_calls: {expected('a list', raw_calls)}")
    calls = tuple(tool_call_from(c, f"{where}.tool_calls[{i}]", i) for i, c in enumerate(raw_calls))
    if role == "assistant" and content is None and not calls:
        raise ConfigError(f"{where}: expected content or tool_calls, found neither")
    ident = raw.get("tool_call_id")
    if ident is not None and not isinstance(ident, str):
        raise ConfigError(f"{where}.tool_call_id: {expected('text', ident)}")
    return ChatMessage(role, content, calls, ident)


def conversation_from(messages: Sequence[Any], where: str = "messages") -> tuple[ChatMessage, ...]:
    """Every message read, each error naming its index."""
    if isinstance(messages, (str, bytes)) or not isinstance(messages, Sequence):
        raise ConfigError(f"{where}: {expected('a list of messages', messages)}")
    return tuple(message_from(m, f"{where}[{i}]") for i, m in enumerate(messages))


def reply_from(value: Any, where: str = "candidate") -> Reply:
    """A reply from text, a :class:`Reply`, or an assistant message mapping."""
    if isinstance(value, Reply):
        return value
    if isinstance(value, str):
        return Reply(value)
    if isinstance(value, Mapping):
        message = message_from({"role": "assistant", **value}, where)
        return message.reply
    raise ConfigError(f"{where}: {expected('text, a Reply or an assistant message', value)}")


@dataclass(frozen=True)
class Conversation:
    """The observation of a guarded session: the messages so far and the tools on offer."""

    messages: tuple[ChatMessage, ...] = ()
    tools: tuple[Any, ...] = ()

    def then(self, *more: ChatMessage) -> Conversation:
        return Conversation((*self.messages, *more), self.tools)


def messages_of(observation: Any) -> tuple[ChatMessage, ...]:
    """The messages of a :class:`Conversation` observation (``()`` for anything else)."""
    return observation.messages if isinstance(observation, Conversation) else ()
