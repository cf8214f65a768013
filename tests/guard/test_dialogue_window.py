"""The dialogue an overlay reads in a guarded session: the last text turns, read from the end, so
a check's cost does not grow with the session."""

from __future__ import annotations

from governor.core import Trajectory
from governor.guard.constraints import DIALOGUE_MESSAGES, DIALOGUE_TURNS, dialogue_of
from governor.guard.exchange import Conversation, History, conversation_from


def long_history(n: int) -> tuple:
    raw = []
    for i in range(n):
        if i % 3 == 2:
            call = {"id": f"c{i}", "type": "function", "function": {"name": "f", "arguments": "{}"}}
            raw.append({"role": "assistant", "content": None, "tool_calls": [call]})
            raw.append({"role": "tool", "tool_call_id": f"c{i}", "content": "result"})
        else:
            raw.append({"role": ("user", "assistant")[i % 3], "content": f"turn {i}"})
    return conversation_from(raw)


def test_the_dialogue_is_the_last_text_turns_in_order() -> None:
    messages = long_history(3000)
    turns = dialogue_of(Trajectory(Conversation(messages)))
    texts = [m.content for m in messages if m.content and m.role in ("user", "assistant")]
    assert len(turns) == DIALOGUE_TURNS
    assert [t.text for t in turns] == texts[-DIALOGUE_TURNS:]
    assert [t.role for t in turns][-2:] == ["user", "assistant"]
    # a view of the first messages reads that prefix's last turns
    prefix = History(messages, 10)
    early = dialogue_of(Trajectory(Conversation(prefix)))
    assert [t.text for t in early] == [
        m.content for m in messages[:10] if m.content and m.role != "tool"
    ]


def test_turns_are_looked_for_among_the_last_messages_only() -> None:
    silent = [
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c", "content": "r"},
    ] * DIALOGUE_MESSAGES  # fmt: skip
    messages = conversation_from([{"role": "user", "content": "long ago"}, *silent])
    assert dialogue_of(Trajectory(Conversation(messages))) == ()
    near = conversation_from([*silent, {"role": "user", "content": "now"}])
    assert [t.text for t in dialogue_of(Trajectory(Conversation(near)))] == ["now"]
