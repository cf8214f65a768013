"""Human example exchanges for a chat model's prompt: short plain ones, calibration split only."""

from __future__ import annotations

from pathlib import Path

from governor.backends.scripted import ScriptedBackend
from governor.conversation.examples import human_examples, pick_examples
from governor.conversation.llm_policy import EXAMPLES_HEADER, LLMChatPolicy
from governor.core import Trajectory
from governor.overlays.corpora import HumanTurn, load_turns
from governor.overlays.features.dialogue import Turn


def turn(corpus: str, index: int, before: str, reply: str) -> HumanTurn:
    return HumanTurn(corpus, f"d{index}", index, (Turn("user", before),), reply)


def test_only_short_plain_sentences_are_picked_corpora_in_turn() -> None:
    turns = [
        turn("a", 1, "How was the game last night?", "Great, we won by two."),
        turn("a", 2, "Did you see it?", "uh, yeah , i did"),  # transcription marks
        turn("a", 3, "Hi", "Hello there, how are you?"),  # too short a turn
        turn("b", 4, "Any plans for the weekend?", "Just hiking with my sister."),
        turn("b", 5, "What is <b>this</b>?", "No idea at all, sorry."),  # markup
        turn("b", 6, "Long?", " ".join(["word"] * 30) + "."),
    ]
    picked = pick_examples(turns, 4)
    assert sorted(picked) == [
        ("Any plans for the weekend?", "Just hiking with my sister."),
        ("How was the game last night?", "Great, we won by two."),
    ]
    assert pick_examples(turns, 1, seed=0) == pick_examples(turns, 1, seed=0)


def test_examples_come_from_the_calibration_split_of_the_corpora(data_dir: Path) -> None:
    examples = human_examples(data_dir, 4)
    assert len(examples) == 4
    calibration = {t.response for t in load_turns(data_dir, "calibration", max_turns=300)}
    assert all(reply in calibration for _, reply in examples)


def test_the_policy_shows_the_examples_as_turns_and_stops_at_the_end_of_a_line() -> None:
    backend = ScriptedBackend(["Sounds fun!"])
    policy = LLMChatPolicy(backend, examples=[("Any plans?", "Just hiking.")])
    assert policy.propose(Trajectory("Hi there"), None, 1)[0].action == "Sounds fun!"
    sent = backend.requests[0]
    assert sent[0].role == "system" and sent[0].content.endswith(EXAMPLES_HEADER)
    assert [(m.role, m.content) for m in sent[1:]] == [
        ("user", "Any plans?"),
        ("assistant", "Just hiking."),
        ("user", "Hi there"),
    ]
    assert policy.stop == ("\n",) and policy.max_tokens == 60


def test_a_reply_that_repeats_its_instructions_is_never_a_candidate() -> None:
    parrot = "You are a friendly companion who engages in casual small talk. Keep replies brief"
    backend = ScriptedBackend([parrot, "Nice, where to?"])
    policy = LLMChatPolicy(backend)
    first = policy.propose(Trajectory("Hi there"), None, 1)[0]
    assert not first.valid and "instructions repeated" in (first.error or "")
    assert policy.propose(Trajectory("Going away"), None, 1)[0].action == "Nice, where to?"
