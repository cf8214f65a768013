"""The hold-back buffer: chunk boundaries, which checks judge prefixes, what is released, and a
session's streamed reply at the library level."""

from __future__ import annotations

import asyncio
import re
from typing import Any

import pytest
from guard_helpers import call, tool_guard
from hypothesis import given
from hypothesis import strategies as st

from governor.core import Verdict
from governor.errors import ConfigError
from governor.guard import policy_from_mapping
from governor.guard.constraints import TextOverlayConstraint, ToolLTLConstraint
from governor.guard.holdback import _HoldBack, _PrefixRefused, boundary
from governor.guard.prefix import PrefixJudgement, judgement_of
from governor.guard.release import ReleaseGate, StreamEnd, TextDelta, ToolCallsDelta
from governor.overlays.loader import parse_overlays

EACH, WHOLE, HOLD = PrefixJudgement.EACH_PREFIX, PrefixJudgement.WHOLE_REPLY, PrefixJudgement.HOLD


def test_a_boundary_is_a_sentence_end_or_a_run_of_words() -> None:
    assert boundary("Hello there. How are", 40) == len("Hello there. ")
    assert boundary("No end yet", 40) == 0
    assert boundary("one two three four five", 3) == len("one two three four ")
    assert boundary("Done. a b c d e", 3) == len("Done. a b c d ")
    assert boundary("3.5 is a number", 40) == 0  # a dot inside a number ends nothing


def overlay(**fields: Any) -> TextOverlayConstraint:
    rule = {"name": "o", "feature": "word_count", "epsilon": 0, "kind": "prohibitory", **fields}
    (made,) = parse_overlays({"overlays": [rule]})
    return TextOverlayConstraint(made)


@pytest.mark.parametrize(
    ("fields", "judgement"),
    [
        ({"bounds": {"max": 50}}, EACH),  # a growing feature bounded above: a prefix past it stays
        ({"bounds": {"min": 5}}, WHOLE),  # bounded below: more text can undo it
        ({"bounds": {"min": 5, "max": 50}}, HOLD),
        ({"bounds": {"max": 50}, "scope": {"last_n": 3}}, HOLD),  # a mean over turns
        ({"bounds": {"max": 0.5}, "feature": "repeated_ngrams"}, HOLD),  # a share goes both ways
        ({"bounds": {"max": 0}, "feature": "markup"}, EACH),
    ],
)
def test_each_check_declares_what_it_can_judge_of_a_prefix(
    fields: dict[str, Any], judgement: PrefixJudgement
) -> None:
    assert judgement_of(overlay(**fields)) is judgement


def test_an_ltl_rule_judges_prefixes_and_a_check_that_declares_nothing_holds() -> None:
    policy = policy_from_mapping(
        {"propositions": {"a": {"tool": "a"}}, "ltl": [{"name": "r", "formula": "G !a"}]}
    )
    rule = ToolLTLConstraint(policy.ltl[0], policy.vocabulary)
    assert judgement_of(rule) is EACH and judgement_of(object()) is HOLD


def test_the_stream_section_is_validated_like_the_rest_of_the_policy() -> None:
    assert policy_from_mapping({}).stream.chunk_tokens == 40
    assert policy_from_mapping({"stream": {"chunk_tokens": 5}}).stream.chunk_tokens == 5
    for bad, says in (
        ({"chunk_tokens": 0}, "stream.chunk_tokens: expected an integer in [1, 4096], found 0"),
        ({"chunk_tokens": True}, "found True"),
        ({"chunk": 3}, "unknown key(s) chunk"),
        ([], "stream: expected a mapping"),
    ):
        with pytest.raises(ConfigError, match=re.escape(says)):
            policy_from_mapping({"stream": bad})


@given(
    st.lists(st.sampled_from(["ok", " ok", ".", " BAD", "\n", " word", "! "]), max_size=30),
    st.integers(1, 6),
)
def test_no_refused_text_is_ever_released(pieces: list[str], chunk_tokens: int) -> None:
    """Whatever the pieces and the chunk size, the released text is a prefix of the reply that
    never holds the forbidden word, and the last chunk always waits for the whole reply."""
    sent: list[str] = []
    gate = ReleaseGate(lambda e: sent.append(e.text) if isinstance(e, TextDelta) else None)

    def judge(text: str) -> tuple[Verdict, ...]:
        return (Verdict.reject("no_bad", 1.0, "BAD") if "BAD" in text else Verdict.allow("no_bad"),)

    buffer = _HoldBack(gate, judge, chunk_tokens)
    text, refused = "", None
    try:
        for p in pieces:
            text += p
            buffer.feed(p, False)
    except _PrefixRefused as stop:  # a refused prefix stops the reading; nothing else may
        refused = stop.prefix
    if refused is None:  # read to the end: nothing was refused, every piece is in the buffer
        assert text == "".join(pieces) == buffer.text
    else:  # refused at a boundary: the prefix holds the word, and nothing of it was sent
        assert "BAD" in refused and text.startswith(refused) and refused.startswith(gate.text)
    if "BAD" not in "".join(pieces):
        assert refused is None
    assert "BAD" not in gate.text and "".join(sent) == gate.text and text.startswith(gate.text)
    if text.strip():
        assert text[len(gate.text) :].strip(), "the last chunk waits for the whole reply"


def test_clean_chunks_are_released_before_the_reply_ends() -> None:
    sent: list[str] = []
    gate = ReleaseGate(lambda e: sent.append(e.text) if isinstance(e, TextDelta) else None)
    buffer = _HoldBack(gate, lambda text: (Verdict.allow("no_bad"),), 1)
    for p in ("Hello there. ", "More words. ", "The last"):
        buffer.feed(p, False)
    assert gate.text == "Hello there. More words. The " == "".join(sent)  # "last" may go on


def test_a_held_buffer_releases_nothing() -> None:
    gate = ReleaseGate(lambda e: None)
    held = _HoldBack(gate, None, 1)
    calling = _HoldBack(gate, lambda text: (), 1)
    for p in ("Hello there. ", "More words here. ", "End."):
        held.feed(p, False)
        calling.feed(p, True)  # a reply that has started a tool call
    json_text = _HoldBack(gate, lambda text: (), 1)
    json_text.feed('{"tool_calls": [{"name": "a"}]} and more. Words here.', False)
    assert gate.text == ""


def stream(guard: Any, messages: list[Any], **kw: Any) -> list[Any]:
    async def run() -> list[Any]:
        return [e async for e in guard.session("lib").respond_stream(messages, **kw)]

    return asyncio.run(run())


def test_a_session_streams_at_the_library_level_and_commits_what_was_sent() -> None:
    guard, backend = tool_guard(["Sure. I can help. Anything else?", call("read_secret", key="k")])
    got = stream(guard, [{"role": "user", "content": "hi"}])
    *texts, end = got
    assert isinstance(end, StreamEnd) and end.decision.kind.value == "execute"
    said = "".join(e.text for e in texts) + "".join(e.text for e in end.rest() if isinstance(e, TextDelta))  # fmt: skip
    assert said == "Sure. I can help. Anything else?" == end.reply.content
    assert guard.session("lib").state.messages[-1].content == said
    messages = [{"role": "user", "content": "hi"}, end.reply.to_dict(), {"role": "user", "content": "read"}]  # fmt: skip
    end = stream(guard, messages, tools=[])[-1]
    assert [type(e) for e in end.rest()] == [ToolCallsDelta] and end.sent == 0
    assert end.reply.tool_calls[0].name == "read_secret" and backend.remaining == 0
