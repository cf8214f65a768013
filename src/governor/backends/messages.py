"""Chat messages and tool calls, in the OpenAI API's shape.

A :class:`Message` is one message of a conversation (system, user, assistant, tool); an assistant
message may carry :class:`ToolCall` objects, whose ``arguments`` is the JSON text of an object, as
the API sends it, read with a stated bound (:data:`MAX_ARGUMENTS_CHARS`). Both are written as the
API's JSON (``to_dict``). Imports the error tree only.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from governor.errors import ConfigError, expected
from governor.jsontext import DuplicateKeyError, read_keys_once

Role = Literal["system", "user", "assistant", "tool"]
ROLES: tuple[str, ...] = ("system", "user", "assistant", "tool")
MAX_ARGUMENTS_CHARS = 65_536
"""The longest ``arguments`` text of one tool call that is read (a longer one is refused)."""


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One function call: its id, the function's name, its arguments as JSON text of an object
    (as the OpenAI API sends them; read them with :meth:`args`)."""

    id: str
    name: str
    arguments: str = "{}"

    def __post_init__(self) -> None:
        for field_name in ("id", "name", "arguments"):
            value = getattr(self, field_name)
            if not isinstance(value, str):
                raise ConfigError(f"tool call {field_name}: {expected('a string', value)}")

    def args(self) -> dict[str, Any]:
        """The arguments as a mapping; a ConfigError when they are not a JSON object."""
        return parse_arguments(self.arguments, f"tool call {self.name}")

    def to_dict(self) -> dict[str, Any]:
        """The OpenAI form ``{"id", "type": "function", "function": {"name", "arguments"}}``."""
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": self.arguments},
        }

    @classmethod
    def from_dict(cls, raw: Any, where: str, index: int = 0) -> ToolCall:
        """A call from the OpenAI form (or the short form ``{"name", "arguments"}``; arguments as
        JSON text or as an object; a call without an id gets a stable one from its position and
        content). A ConfigError naming ``where`` when it is not well formed."""
        if not isinstance(raw, Mapping):
            raise ConfigError(f"{where}: {expected('a tool call object', raw)}")
        fn = raw.get("function", raw)
        if not isinstance(fn, Mapping):
            what = "an object with name and arguments"
            raise ConfigError(f"{where}.function: {expected(what, fn)}")
        name = fn.get("name")
        if not isinstance(name, str) or not name:
            raise ConfigError(f"{where}.function.name: {expected('a function name', name)}")
        args = fn.get("arguments", "{}")
        text = args if isinstance(args, str) else json.dumps(args, sort_keys=True)
        parse_arguments(text, f"{where} ({name})")
        ident = raw.get("id")
        if ident is not None and not isinstance(ident, str):
            raise ConfigError(f"{where}.id: {expected('text', ident)}")
        if not ident:
            digest = hashlib.sha256(f"{index}\x1f{name}\x1f{text}".encode()).hexdigest()
            ident = f"call_{digest[:16]}"
        return cls(ident, name, text)


def parse_arguments(text: Any, where: str) -> dict[str, Any]:
    """The JSON object in ``text`` (at most :data:`MAX_ARGUMENTS_CHARS` characters), every
    object in it without a repeated key. The error says what kind of text was found, never the
    text itself (arguments a model wrote may be what the guard refuses to show)."""
    if not isinstance(text, str):
        raise ConfigError(f"{where}: arguments: {expected('JSON text of an object', text)}")
    if len(text) > MAX_ARGUMENTS_CHARS:
        most = f"at most {MAX_ARGUMENTS_CHARS:,} characters"
        raise ConfigError(f"{where}: arguments: {expected(most, f'{len(text):,} characters')}")
    try:
        value = read_keys_once(text)
    except DuplicateKeyError:
        raise ConfigError(
            f"{where}: arguments: expected one JSON object without repeated keys,"
            " found a key given twice"
        ) from None
    except (ValueError, RecursionError):
        found = f"text that is not JSON ({len(text):,} characters)"
        raise ConfigError(f"{where}: arguments: expected a JSON object, found {found}") from None
    if not isinstance(value, dict):
        found = f"a JSON {_json_kind(value)}"
        raise ConfigError(f"{where}: arguments: expected a JSON object, found {found}")
    return value


def _json_kind(value: Any) -> str:
    if isinstance(value, list):
        return "array"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool) or value is None:
        return "literal"
    return "number"


@dataclass(frozen=True, slots=True)
class Message:
    """One message of a conversation. An assistant message may call tools (its content may then
    be empty); a ``tool`` message answers the call ``tool_call_id``."""

    role: Role
    content: str
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None

    def __post_init__(self) -> None:
        if self.role not in ROLES:
            raise ConfigError(f"message role: {expected(' or '.join(ROLES), self.role)}")
        if not isinstance(self.content, str):
            raise ConfigError(
                f"message content: {expected('a string', type(self.content).__name__)}"
            )
        calls = self.tool_calls
        if not isinstance(calls, tuple) or not all(isinstance(c, ToolCall) for c in calls):
            raise ConfigError(f"message tool_calls: {expected('a tuple of ToolCall', calls)}")
        if calls and self.role != "assistant":
            raise ConfigError(
                f"message tool_calls: expected none on a {self.role} message, found {len(calls)}"
            )
        ident = self.tool_call_id
        if self.role == "tool" and not (isinstance(ident, str) and ident):
            raise ConfigError(f"tool message tool_call_id: {expected('the id of a call', ident)}")
        if self.role != "tool" and ident is not None:
            raise ConfigError(
                f"message tool_call_id: expected none on a {self.role} message, found {ident!r}"
            )

    def to_dict(self) -> dict[str, Any]:
        """The OpenAI form (content null for an assistant message of tool calls only)."""
        content = None if self.tool_calls and not self.content else self.content
        out: dict[str, Any] = {"role": self.role, "content": content}
        if self.tool_calls:
            out["tool_calls"] = [c.to_dict() for c in self.tool_calls]
        if self.tool_call_id is not None:
            out["tool_call_id"] = self.tool_call_id
        return out
