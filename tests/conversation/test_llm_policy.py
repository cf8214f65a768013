"""The LLM chat policy through a scripted backend: requests, candidates, invalid replies."""

from __future__ import annotations

import pytest

from governor.backends.base import Completion
from governor.backends.scripted import ScriptedBackend
from governor.conversation.chat import ChatSession
from governor.conversation.llm_policy import (
    SYSTEM_PROMPT,
    LLMChatPolicy,
    reply_candidate,
)
from governor.conversation.small_talk import SmallTalkConfig, small_talk_observer
from governor.core import DecisionKind, Feedback, FeedbackKind, Trajectory
from governor.errors import ConfigError
from governor.overlays import load_overlays
from governor.overlays.features.endings import whole_sentences
from governor.usage import metered


def test_the_request_holds_the_prompt_the_dialogue_and_the_feedback_note():
    backend = ScriptedBackend(["Nice!", "Cool."])
    policy = LLMChatPolicy(backend, temperature=0.0)
    traj = Trajectory("How was your day?")
    with metered() as meter:
        first = policy.propose(traj, None, 2)
    assert [c.action for c in first] == ["Nice!", "Cool."] and meter.total.calls == 1
    (request,) = backend.requests
    assert [m.role for m in request] == ["system", "user"]
    assert request[0].content == SYSTEM_PROMPT and request[1].content == "How was your day?"
    note = Feedback(FeedbackKind.FORCED, "reply in one short sentence")
    messages = policy.messages(traj, note)
    assert messages[-1].role == "system" and "reply in one short sentence" in messages[-1].content
    assert "rejected" in messages[-1].content


@pytest.mark.parametrize("reply", ["", "   \n ", 42, None])
def test_empty_or_non_text_replies_are_invalid_candidates(reply):
    cand = reply_candidate(reply)
    assert not cand.valid and "expected a text reply" in (cand.error or "")


def test_a_model_that_only_returns_empty_replies_ends_in_the_fallback():
    backend = ScriptedBackend(["", "  ", ""])
    observer = small_talk_observer(
        LLMChatPolicy(backend), load_overlays(), config=SmallTalkConfig(stop_on_repeat=True)
    )
    result = ChatSession(observer).respond("Any plans for the weekend?")
    d = result.decision
    assert d.kind is DecisionKind.FALLBACK and result.reply
    assert d.attempts[1].feedback is not None and "empty" in d.attempts[1].feedback.text
    assert result.llm_calls == len(d.attempts) == 2


def test_policy_parameters_are_checked():
    with pytest.raises(ConfigError, match="temperature"):
        LLMChatPolicy(ScriptedBackend([]), temperature=9.0)
    with pytest.raises(ConfigError, match="n:"):
        LLMChatPolicy(ScriptedBackend([]), n=0)


def test_a_reply_cut_off_at_the_length_limit_keeps_only_its_whole_sentences():
    cut = Completion("Sounds fun! I went there once. It was on the way to", "length")
    bare = Completion("I was thinking that maybe we could go and", "length")
    whole = Completion("Sounds fun! I went there once. It was on the way to", "stop")
    policy = LLMChatPolicy(ScriptedBackend([cut, bare, whole]))
    first, second, third = policy.propose(Trajectory("Been to the lake?"), None, 3)
    assert first.valid and first.action == "Sounds fun! I went there once."
    assert not second.valid and "cut off at the length limit" in (second.error or "")
    assert third.action == whole.text  # a reply that ended by itself is left whole


def test_whole_sentences_reads_quotes_and_ellipses():
    assert whole_sentences('She said "hi." Then we') == 'She said "hi."'
    assert whole_sentences("Well\u2026 maybe tomorrow") == "Well\u2026"
    assert whole_sentences("no end at all") == ""
    assert whole_sentences("see example.com for more") == ""
