"""The driving question's worked examples and how an answer is read (one counted call)."""

from __future__ import annotations

import numpy as np

from governor.backends.base import Message
from governor.backends.scripted import ScriptedBackend
from governor.usage import metered
from governor.worlds.driving.env import LETTERS, DrivingParams, describe
from governor.worlds.driving.grid_value import GridValue
from governor.worlds.driving.llm_prompt import EXAMPLES, ask_letter, letter_of, worked_examples
from governor.worlds.driving.zero_shot import ZeroShotFallback


def test_each_worked_example_answers_the_exact_values_best_action(small_grid: GridValue) -> None:
    assert sorted(letter for _, letter in EXAMPLES) == list(LETTERS)  # one of each
    for state, letter in EXAMPLES:
        q = small_grid.q(np.asarray(state))
        assert LETTERS[int(np.argmax(q))] == letter, (state, q)
        assert q.max() - sorted(q)[1] > 0.05  # a clear best, not a tie


def test_worked_examples_are_question_and_letter_turns() -> None:
    p = DrivingParams()
    turns = worked_examples(p, 2, suffix="\n\nFeedback: none")
    assert [m.role for m in turns] == ["user", "assistant"] * 2
    assert turns[0].content == describe(p, EXAMPLES[0][0]) + "\n\nFeedback: none"
    assert [m.content for m in turns[1::2]] == ["C", "A"]
    assert worked_examples(p, 0) == []


def test_ask_letter_makes_one_call_and_marks_replies_without_a_letter_invalid() -> None:
    backend = ScriptedBackend(["Answer: C", "I would steer", "b) steer straight"])
    with metered() as meter:
        candidates, choice = ask_letter(backend, [Message("user", "q")], n=3, temperature=0.5)
    assert meter.total.calls == 1
    assert [c.action for c in candidates] == [2, None, 1] and choice.method == "text"
    assert candidates[1].error == "expected one of A, B, C; found 'I would steer'"
    assert (letter_of("A) Steer right"), letter_of("a lot"), letter_of("")) == ("A", None, None)


def test_the_zero_shot_recovery_reads_the_letter_and_stops_without_one() -> None:
    from governor.core import Trajectory

    p = DrivingParams()
    fallback = ZeroShotFallback(ScriptedBackend(["C", "no idea"]), p)
    traj = Trajectory({"state": np.array([2.0, 1.0, 0.0])})
    assert fallback.act(traj, []) == 2
    assert fallback.act(traj, []) is None and "found 'no idea'" in fallback.failures[0]
