"""Teachable overlays: user feedback applied at once, recorded, and never loosening safety rules."""

from __future__ import annotations

from typing import Any

import pytest

from governor.config import ObserverConfig
from governor.core import Candidate, Feedback, Policy, Trajectory
from governor.errors import SpecError
from governor.observer import Observer
from governor.observer_extensions.fallible import FallibleMode
from governor.observer_extensions.teaching import (
    LESSONS,
    Lesson,
    TaughtOverlay,
    Teacher,
    protected,
    teachable_constraints,
)
from governor.overlays import load_overlays
from governor.overlays.rigidity import TUTORING_OVERLAYS

LONG = " ".join(["word"] * 50) + "."  # 51 words: past 45, within epsilon 15
TICKS = iter(range(1000, 10_000))


class Says(Policy):
    name = "says"

    def __init__(self, *texts: str) -> None:
        self.texts = texts

    def propose(self, traj: Trajectory, feedback: Feedback | None, n: int) -> list[Candidate[Any]]:
        return [Candidate(t, t) for t in self.texts]


def observer(*texts: str) -> Observer:
    constraints = teachable_constraints(load_overlays(TUTORING_OVERLAYS))
    for c in constraints:
        if isinstance(c, Teacher):
            c.clock = lambda: float(next(TICKS))
    config = ObserverConfig(max_regenerations=0, n_candidates=len(texts))
    return Observer(Says(*texts), constraints, None, config=config)


def test_be_briefer_applies_at_once_to_this_session_and_is_recorded() -> None:
    guard = observer(LONG)
    traj = guard.start("Explain fractions.")
    first = guard.step(traj)
    assert first.executed  # 51 words is within brevity's tolerance
    traj = guard.commit(traj, first, "Please be briefer.")
    second = guard.step(traj)
    assert not second.executed and "brevity" in {v.constraint for v in second.verdicts}
    (record,) = traj.memory["teaching"]["updates"]
    assert record["who"] == "user" and record["what"] == "tighten" and record["rule"] == "brevity"
    assert record["turn"] == 1 and record["text"] == "Please be briefer." and record["at"] >= 1000
    assert record["before"]["max"] == 45 and record["after"]["max"] == pytest.approx(31.5)
    other = guard.start("Explain fractions.")  # another session: untouched
    assert guard.step(other).executed


def test_dont_mention_adds_a_rule() -> None:
    guard = observer("Think of it as sharing a pizza.", "Think of it as sharing a cake.")
    traj = guard.start("Explain fractions.")
    traj = guard.commit(traj, guard.step(traj), "Don't mention pizza.")
    decision = guard.step(traj)
    assert decision.action == "Think of it as sharing a cake."
    rejected = decision.attempts[0].verdicts[0]
    assert any("don't mention 'pizza'" in v.descriptor for v in rejected)


def test_a_safety_rule_cannot_be_loosened_by_users() -> None:
    overlays = load_overlays(TUTORING_OVERLAYS)
    insults = next(o for o in overlays if o.name == "no_insults")
    assert protected(insults)
    teacher = Teacher(overlays)
    traj = Trajectory("hi", memory={"teaching": teacher.initial_state("hi")})
    loosen = next(lesson for lesson in LESSONS if lesson.rule == "no_insults")
    with pytest.raises(SpecError, match=r"refused to loosen .no_insults.*safety rule"):
        teacher.teach(traj, loosen, who="user", text="roast me")
    guard = observer("Fine.")
    t0 = guard.start("hello")
    traj = guard.commit(t0, guard.step(t0), "Go on, roast me, be mean!")
    (record,) = traj.memory["teaching"]["updates"]
    assert "no_insults" in record["refused"] and "overrides" in traj.memory["teaching"]
    assert traj.memory["teaching"]["overrides"] == {}
    tighten = next(lesson for lesson in LESSONS if lesson.rule == "harsh_feedback")
    assert teacher.teach(traj, tighten, who="user").memory["teaching"]["overrides"]


def test_loosening_a_soft_rule_and_removing_it() -> None:
    overlays = load_overlays(TUTORING_OVERLAYS)
    teacher = Teacher(overlays)
    brevity = TaughtOverlay(next(o for o in overlays if o.name == "brevity"), teacher)
    traj = Trajectory("Explain.", memory={"teaching": teacher.initial_state(None)})
    very_long = " ".join(["word"] * 70)
    assert not brevity.check(traj, very_long).admissible
    more = next(lesson for lesson in LESSONS if lesson.action == "loosen")
    assert brevity.check(teacher.teach(traj, more, who="user"), very_long).admissible
    remove = Lesson(more.pattern, "remove", "brevity")
    gone = teacher.teach(traj, remove, who="operator")
    assert brevity.check(gone, very_long * 3).admissible
    assert gone.memory["teaching"]["updates"][-1]["who"] == "operator"


def test_fallible_mode_is_a_recorded_configuration() -> None:
    incomplete = "The first step is 3 x 4 = 12. Can you finish it?"
    strict, fallible = FallibleMode(0.0), FallibleMode(1.0, seed=2)
    assert strict.initial_state(None)["mode"] == "complete"
    assert fallible.initial_state(None) == {"mode": "fallible", "rate": 1.0, "seed": 2}
    traj = Trajectory("What is 3 x 4 + 1?")
    assert not strict.check(traj, incomplete).admissible
    verdict = fallible.check(traj, incomplete)
    assert verdict.admissible and "deliberately incomplete" in verdict.descriptor
    half = FallibleMode(0.5, seed=0)
    judged = [half.check(Trajectory(f"What is {i} x 4?"), incomplete).admissible for i in range(40)]
    assert 5 < sum(judged) < 35  # a seeded share of turns, not all or none
    assert judged == [
        half.check(Trajectory(f"What is {i} x 4?"), incomplete).admissible for i in range(40)
    ]
