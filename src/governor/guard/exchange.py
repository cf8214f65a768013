"""OpenAI-style chat messages as the guard reads them, and its action: a reply of text or tool calls.

A conversation is a tuple of :class:`~governor.backends.base.Message` (system, user, assistant,
tool; a ``developer`` message, OpenAI's newer name for the system role, is read as a system
one), the backends' own message type, so a conversation goes to a model as it is. An assistant
message is an action; its :class:`Reply` holds its text (``None`` when it only calls tools) and
its :class:`~governor.backends.base.ToolCall` list. Messages are read from the JSON-like mappings
a client sends, with errors that name the message and the field, and written back as JSON-safe
dicts. :class:`Conversation` is the observation a guarded session's observer reads (the messages,
the request's tools and its :class:`Sampling`).

Named ``exchange`` for what it holds: the exchange between a client and the guard (what the
client sent, and the guard's reply as its action), apart from :mod:`governor.backends.messages`
(the wire shape of one chat message, for the backends) and from :mod:`governor.conversation` (the
conversation layer of the runtime). Imports the backend message types and the error tree.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, overload

from governor.backends.base import ROLES, Message, ToolCall
from governor.errors import ConfigError, expected

__all__ = [
    "Conversation",
    "History",
    "Message",
    "Reply",
    "ToolCall",
    "conversation_from",
    "message_from",
    "messages_of",
    "reply_from",
    "reply_of",
]


@dataclass(frozen=True)
class Reply:
    """The guard's action: an assistant message of text, of tool calls, or both."""

    content: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()

    @property
    def is_tool_call(self) -> bool:
        return bool(self.tool_calls)

    def message(self) -> Message:
        """The reply as an assistant message (built once: both are immutable)."""
        made = self.__dict__.get("_message")
        if made is None:
            made = Message("assistant", self.content or "", self.tool_calls)
            object.__setattr__(self, "_message", made)
        return made

    def to_dict(self) -> dict[str, Any]:
        return self.message().to_dict()

    def describe(self) -> str:
        """A short human reading: the text, or the calls as ``name(arguments)``."""
        calls = ", ".join(f"{c.name}({c.arguments})" for c in self.tool_calls)
        return calls if calls else repr(self.content or "")


def reply_of(message: Message) -> Reply:
    """An (assistant) message as an action: its text (None when it only calls tools), its calls."""
    content = None if message.tool_calls and not message.content else message.content
    return Reply(content, message.tool_calls)


def message_from(raw: Any, where: str) -> Message:
    """A message from an OpenAI-style mapping (``role``, ``content``, ``tool_calls``, ...)."""
    if isinstance(raw, Message):
        return raw
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{where}: {expected('a message object with role and content', raw)}")
    role = raw.get("role")
    if role == "developer":  # OpenAI's newer name for the system role
        role = "system"
    if role not in ROLES:
        raise ConfigError(f"{where}.role: {expected(' or '.join((*ROLES, 'developer')), role)}")
    content = raw.get("content")
    if isinstance(content, list):  # content parts: keep the text ones
        content = "".join(
            p.get("text", "") for p in content if isinstance(p, Mapping) and p.get("type") == "text"
        )
    if content is not None and not isinstance(content, str):
        raise ConfigError(f"{where}.content: {expected('text or null', content)}")
    raw_calls = raw.get("tool_calls") or ()
    if not isinstance(raw_calls, (list, tuple)):
        raise ConfigError(f"{where}.tool_calls: {expected('a list', raw_calls)}")
    calls = tuple(
        ToolCall.from_dict(c, f"{where}.tool_calls[{i}]", i) for i, c in enumerate(raw_calls)
    )
    if role == "assistant" and content is None and not calls:
        raise ConfigError(f"{where}: expected content or tool_calls, found neither")
    try:  # the roles' rules (who may call tools, what a tool message needs) are Message's
        return Message(role, content or "", calls, raw.get("tool_call_id"))
    except ConfigError as exc:
        raise ConfigError(f"{where}: {exc}") from None


def conversation_from(messages: Sequence[Any], where: str = "messages") -> tuple[Message, ...]:
    """Every message read, each error naming its index (a tuple of messages read already is
    returned as it is)."""
    if isinstance(messages, tuple) and all(type(m) is Message for m in messages):
        return messages
    if isinstance(messages, (str, bytes)) or not isinstance(messages, Sequence):
        raise ConfigError(f"{where}: {expected('a list of messages', messages)}")
    return tuple(
        m if type(m) is Message else message_from(m, f"{where}[{i}]")
        for i, m in enumerate(messages)
    )


def reply_from(value: Any, where: str = "candidate") -> Reply:
    """A reply from text, a :class:`Reply`, or an assistant message mapping."""
    if isinstance(value, Reply):
        return value
    if isinstance(value, str):
        return Reply(value)
    if isinstance(value, Mapping):
        return reply_of(message_from({"role": "assistant", **value}, where))
    raise ConfigError(f"{where}: {expected('text, a Reply or an assistant message', value)}")


@dataclass(frozen=True)
class Sampling:
    """A request's own sampling settings; ``None`` keeps the policy's upstream setting.

    ``max_tokens`` can only lower the policy's bound, never raise it; ``n`` is the choices asked
    for (:mod:`governor.guard.choices`).
    """

    temperature: float | None = None
    max_tokens: int | None = None
    n: int = 1


class History(Sequence[Message]):
    """The first ``n`` messages of a tuple, without copying them: replaying a client's history
    reads each of its prefixes in turn, and a copy per prefix would make the replay quadratic."""

    __slots__ = ("_all", "_n")

    def __init__(self, messages: tuple[Message, ...], n: int) -> None:
        self._all = messages
        self._n = max(0, min(n, len(messages)))

    def __len__(self) -> int:
        return self._n

    @overload
    def __getitem__(self, i: int) -> Message: ...

    @overload
    def __getitem__(self, i: slice) -> tuple[Message, ...]: ...

    def __getitem__(self, i: int | slice) -> Message | tuple[Message, ...]:
        if isinstance(i, slice):
            return tuple(self._all[j] for j in range(*i.indices(self._n)))
        j = i + self._n if i < 0 else i
        if not 0 <= j < self._n:
            raise IndexError("history index out of range")
        return self._all[j]

    def __iter__(self) -> Iterator[Message]:
        return itertools.islice(self._all, self._n)

    def __reversed__(self) -> Iterator[Message]:
        return (self._all[j] for j in range(self._n - 1, -1, -1))


@dataclass(frozen=True)
class Conversation:
    """The observation of a guarded session: the messages so far (a tuple, or a
    :class:`History` view while a client's history is replayed), the tools on offer and the
    request's sampling settings."""

    messages: Sequence[Message] = ()
    tools: tuple[Any, ...] = ()
    sampling: Sampling = field(default_factory=Sampling)

    def then(self, *more: Message) -> Conversation:
        return Conversation((*self.messages, *more), self.tools, self.sampling)


def messages_of(observation: Any) -> Sequence[Message]:
    """The messages of a :class:`Conversation` observation (``()`` for anything else)."""
    return observation.messages if isinstance(observation, Conversation) else ()
