"""The retrieval responder: deterministic, regeneration takes the next-best, no held-out leak."""

from __future__ import annotations

from pathlib import Path

import pytest

from governor.backends.scripted import ScriptedBackend
from governor.core import Feedback, FeedbackKind, Trajectory
from governor.errors import ConfigError
from governor.overlays import Turn, split_of
from governor.worlds.smalltalk.responder import RetrievalResponder, terms
from governor.worlds.smalltalk.user_sim import LLMPersonaUser, human_openings

MUSIC = Trajectory("Do you like music? I have been listening to a lot of jazz lately.")
FORCED = Feedback(FeedbackKind.FORCED, "too long")


def test_candidates_are_deterministic_for_a_seed(responder: RetrievalResponder):
    first = [c.action for c in responder.propose(MUSIC, None, 3)]
    again = [c.action for c in responder.propose(MUSIC, None, 3)]
    twin = RetrievalResponder(responder.turns, seed=0)
    assert first == again == [c.action for c in twin.propose(MUSIC, None, 3)]
    assert len(set(first)) == 3 and all(isinstance(a, str) and a for a in first)
    assert any("jazz" in a.lower() or "music" in a.lower() for a in first)
    assert responder.name == "retrieval responder (not a model)"


def test_regeneration_takes_the_next_best_replies(responder: RetrievalResponder):
    top = [c.action for c in responder.propose(MUSIC, None, 2)]
    second = [c.action for c in responder.propose(MUSIC, FORCED, 2)]
    third = [c.action for c in responder.propose(MUSIC, FORCED, 2)]
    assert not set(top) & set(second) and not set(second) & set(third)
    implicit = Feedback(FeedbackKind.IMPLICIT, "shorter")
    assert [c.action for c in responder.propose(MUSIC, implicit, 2)] == top  # a new step


def test_it_does_not_repeat_itself(responder: RetrievalResponder):
    top = responder.propose(MUSIC, None, 1)[0].action
    dialogue = (Turn("user", MUSIC.observation), Turn("assistant", top), Turn("user", "Jazz!"))
    assert top not in [responder.turns[i].response for i in responder.rank(dialogue)[:50]]


def test_the_pool_holds_calibration_turns_only(data_dir: Path, responder: RetrievalResponder):
    assert {t.corpus for t in responder.turns} == {
        "switchboard",
        "self_dialogue",
        "tiage_personachat",
        "topical_chat",
    }
    assert sum(t.corpus == "topical_chat" for t in responder.turns) == 450
    assert all(split_of(t.corpus, t.dialogue) == "calibration" for t in responder.turns)
    users = human_openings(data_dir, 8, 4)
    assert all(split_of(u.corpus, u.dialogue_id) == "heldout" for u in users)
    pool = {(t.corpus, t.dialogue) for t in responder.turns}
    assert not pool & {(u.corpus, u.dialogue_id) for u in users}


def test_openings_replay_human_turns_in_order(data_dir: Path):
    users = human_openings(data_dir, 4, 3, seed=1)
    assert len({u.corpus for u in users}) == 4
    assert [u.name for u in users] == [u.name for u in human_openings(data_dir, 4, 3, seed=1)]
    u = users[0]
    dialogue: tuple[Turn, ...] = ()
    for expected in u.turns:
        said = u.next_turn(dialogue)
        assert said == expected
        dialogue = (*dialogue, Turn("user", said), Turn("assistant", "Oh nice."))
    assert u.next_turn(dialogue) is None
    with pytest.raises(ConfigError, match="dialogues"):
        human_openings(data_dir, 100_000, 3)


def test_an_llm_persona_plays_the_user_with_counted_calls():
    backend = ScriptedBackend(["Pretty good, just got back from a run."])
    user = LLMPersonaUser(backend, opening="Hey!", turns=2)
    assert user.next_turn(()) == "Hey!"
    said = user.next_turn((Turn("user", "Hey!"), Turn("assistant", "Hi! How are you?")))
    assert said == "Pretty good, just got back from a run."
    roles = [m.role for m in backend.requests[0]]
    assert roles == ["system", "assistant", "user"]  # the roles are swapped for the persona
    assert user.next_turn((Turn("user", "a"), Turn("assistant", "b"), Turn("user", "c"))) is None


def test_bad_arguments_are_config_errors():
    with pytest.raises(ConfigError):
        RetrievalResponder([])
    assert terms("The Dogs were barking!") == ["dog", "bark"]
