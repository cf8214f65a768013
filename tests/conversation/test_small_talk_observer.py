"""The small-talk observer on scripted dialogues: the buffer, feedback, fallback, leniency."""

from __future__ import annotations

from pathlib import Path

import pytest
from smalltalk_helpers import ScriptedReplies, words

from governor.backends.scripted import ScriptedBackend
from governor.conversation.chat import ChatSession
from governor.conversation.fallbacks import MOVES, SmallTalkFallback
from governor.conversation.llm_policy import LLMChatPolicy
from governor.conversation.small_talk import (
    TOLERATED,
    SmallTalkConfig,
    lenient_turn,
    small_talk_observer,
)
from governor.core import DecisionKind, FeedbackKind
from governor.errors import BackendTimeout, ConfigError
from governor.feedback import TemplateFallback
from governor.overlays import Turn, load_overlays
from governor.trace import open_trace, read_trace
from governor.usage import metered

OVERLAYS = load_overlays()
HIKE = "I went hiking with my dog this weekend."


def observer_for(policy, **config):
    return small_talk_observer(policy, OVERLAYS, config=SmallTalkConfig(**config))


def test_an_admissible_reply_is_executed_with_no_llm_call():
    policy = ScriptedReplies(lambda traj, fb: ["Oh fun, where did you go?"])
    session = ChatSession(observer_for(policy))
    with metered() as meter:
        result = session.respond(HIKE)
    assert result.decision.kind is DecisionKind.EXECUTE
    assert result.reply == "Oh fun, where did you go?"
    assert meter.total.calls == 0 and result.llm_calls == 0


def test_an_accepted_llm_reply_costs_exactly_the_policy_call_even_with_an_observer_model():
    backend = ScriptedBackend(["Oh fun, where did you go?", words(40)])
    judge = ScriptedBackend([])  # any call to the observer model would fail the test
    observer = small_talk_observer(
        LLMChatPolicy(backend),
        OVERLAYS,
        config=SmallTalkConfig(feedback="llm"),
        observer_backend=judge,
    )
    session = ChatSession(observer)
    with metered() as meter:
        first = session.respond(HIKE)
        second = session.respond("Just the local trail by the lake.")
    assert first.decision.kind is DecisionKind.EXECUTE
    assert second.decision.kind is DecisionKind.EXECUTE_WITH_FEEDBACK  # within rigidity
    assert meter.total.calls == 2 and first.llm_calls == second.llm_calls == 1
    assert judge.requests == [] and "feedback" not in second.decision.usage


def test_within_rigidity_the_note_rides_along_to_the_next_turn():
    backend = ScriptedBackend([words(40), "Nice!"])
    session = ChatSession(observer_for(LLMChatPolicy(backend)))
    first = session.respond(HIKE)
    assert first.decision.kind is DecisionKind.EXECUTE_WITH_FEEDBACK
    note = first.decision.feedback
    assert note is not None and note.kind is FeedbackKind.IMPLICIT and "brevity" in note.constraints
    assert "too long for small talk" in note.text
    session.respond("It was great.")
    last = backend.requests[-1][-1]
    assert last.role == "system" and note.text in last.content
    assert session.traj is not None and session.traj.feedback == note


@pytest.mark.parametrize("stop_on_repeat, attempts", [(False, 4), (True, 2)])
def test_forced_regeneration_is_bounded_then_the_fallback_speaks(stop_on_repeat, attempts):
    policy = ScriptedReplies(lambda traj, fb: [words(150)])
    session = ChatSession(observer_for(policy, stop_on_repeat=stop_on_repeat))
    result = session.respond(HIKE)
    d = result.decision
    assert d.kind is DecisionKind.FALLBACK and len(d.attempts) == attempts
    assert d.regenerations == attempts - 1 <= 3
    forced = [fb for fb in policy.feedback_seen[1:]]
    assert forced and all(fb is not None and fb.kind is FeedbackKind.FORCED for fb in forced)
    assert result.reply in MOVES["ask_back"]


def test_regeneration_that_fixes_the_reply_is_executed():
    def script(traj, fb):
        return ["Ha, nice. I love the lake trail."] if fb is not None else [words(150)]

    result = ChatSession(observer_for(ScriptedReplies(script))).respond(HIKE)
    assert result.decision.kind is DecisionKind.EXECUTE and result.decision.regenerations == 1


@pytest.mark.parametrize(
    "user, move",
    [
        ("I'm so sad and angry, my cat died and everything is awful.", "acknowledge"),
        ("What kind of music do you like?", "deflect"),
        ("Hi there!", "greet"),
        (HIKE, "ask_back"),
    ],
)
def test_the_fallback_move_is_keyed_by_state(user, move):
    fallback = SmallTalkFallback()
    chosen = fallback.choose((Turn("user", user),))
    assert chosen.key == move and chosen.text in MOVES[move]
    result = ChatSession(observer_for(ScriptedReplies(lambda t, f: [words(150)]))).respond(user)
    assert result.decision.kind is DecisionKind.FALLBACK and result.reply in MOVES[move]


def test_fallback_phrasings_pass_the_overlays_and_do_not_repeat():
    contexts = {
        "acknowledge": "My day was terrible and I feel awful.",
        "deflect": "What do you think about pineapple on pizza?",
        "greet": "Hello!",
        "ask_back": HIKE,
    }
    for key, phrasings in MOVES.items():
        ctx = (Turn("user", contexts[key]),)
        for text in phrasings:
            rejected = [o.name for o in OVERLAYS if not o.evaluate(ctx, text).admissible]
            assert not rejected, (text, rejected)
    fallback = SmallTalkFallback()
    dialogue: tuple[Turn, ...] = ()
    said = []
    for _ in range(len(MOVES["ask_back"])):
        dialogue = (*dialogue, Turn("user", HIKE))
        said.append(fallback.choose(dialogue).text)
        dialogue = (*dialogue, Turn("assistant", said[-1]))
    assert len(set(said)) == len(said)


def _tolerated(seed: int, reply: str, leniency: float = 0.3, n: int = 200) -> list[int]:
    policy = ScriptedReplies(lambda traj, fb: [reply])
    observer = observer_for(policy, leniency=leniency, seed=seed)
    kept = []
    for i in range(n):
        result = ChatSession(observer).respond(f"{HIKE} Day {i}.")
        if result.decision.kind is DecisionKind.EXECUTE_WITH_FEEDBACK:
            assert TOLERATED in result.decision.feedback.text
            kept.append(i)
    return kept


def test_forced_feedback_is_spared_on_a_seeded_share_of_turns_for_mild_violations():
    mild = words(80)  # brevity deviation 47: past epsilon 36, within 2 x epsilon
    tolerated = _tolerated(7, mild)
    assert 0.2 <= len(tolerated) / 200 <= 0.4
    assert tolerated == _tolerated(7, mild)  # reproducible by seed
    assert tolerated != _tolerated(8, mild)
    assert _tolerated(7, mild, leniency=0.0) == []
    assert _tolerated(7, words(150)) == []  # a severe violation is always forced
    ctx = (Turn("user", HIKE),)
    assert lenient_turn(ctx, 1.0, 0) and not lenient_turn(ctx, 0.0, 0)


def test_rigid_overlays_are_never_relaxed():
    reply = "Let me know if you need any more information."
    policy = ScriptedReplies(lambda traj, fb: [reply])
    observer = observer_for(policy, leniency=1.0)
    result = ChatSession(observer).respond(HIKE)
    assert result.decision.kind is DecisionKind.FALLBACK
    assert any(v.constraint == "assistance" for v in result.decision.verdicts)


def test_the_observer_model_writes_forced_feedback_and_its_calls_are_counted(tmp_path: Path):
    judge = ScriptedBackend(["Keep it to one short sentence.", BackendTimeout("no answer")])
    policy = ScriptedReplies(lambda traj, fb: [words(150)])
    observer = small_talk_observer(
        policy,
        OVERLAYS,
        config=SmallTalkConfig(feedback="llm", stop_on_repeat=False, max_regenerations=2),
        observer_backend=judge,
    )
    with open_trace(tmp_path / "t.jsonl") as trace:
        result = ChatSession(observer, trace=trace, episode="e").respond(HIKE)
    d = result.decision
    assert d.usage["feedback"].calls == 2 and result.llm_calls == 2
    assert d.attempts[1].feedback.text == "Keep it to one short sentence."
    fell_back = d.attempts[2].feedback
    assert isinstance(fell_back, TemplateFallback) and "no answer" in fell_back.observer_error
    assert "not accepted" in fell_back.text
    records, _ = read_trace(tmp_path / "t.jsonl")
    assert "no answer" in records[0]["attempts"][2]["feedback"]["observer_error"]
    assert records[0]["usage"]["feedback"]["calls"] == 2


def test_configuration_errors_are_clear():
    with pytest.raises(ConfigError, match="observer backend"):
        small_talk_observer(
            ScriptedReplies(lambda t, f: ["hi"]), config=SmallTalkConfig(feedback="llm")
        )
    with pytest.raises(ConfigError, match="leniency"):
        SmallTalkConfig(leniency=1.5)
    with pytest.raises(ConfigError, match="max_regenerations"):
        SmallTalkConfig(max_regenerations=-1)
