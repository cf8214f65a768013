"""Preferring human-like replies: the scoring column, the ranking arbiter, tracking, assembly."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from smalltalk_helpers import ScriptedReplies, words

from governor.config import ObserverConfig
from governor.conversation.chat import ChatSession
from governor.conversation.preference import PREFERENCE, HumanLikeness, RankingArbiter
from governor.conversation.small_talk import (
    SmallTalkConfig,
    small_talk_constraints,
    small_talk_observer,
)
from governor.core import Candidate, Trajectory, Verdict
from governor.errors import SpecError
from governor.overlays import Resources, Turn, fit_reference, load_overlays

OVERLAYS = load_overlays()
# Humans: mostly short replies, 2 to 30 words.
LENGTHS = fit_reference({"word_count": np.linspace(2.0, 30.0, 200)}, {"word_count": "direct"})


def likeness(track: bool = True, seed: int = 0) -> HumanLikeness:
    return HumanLikeness(LENGTHS, Resources(), seed=seed, track=track)


def test_the_column_admits_everything_and_scores_the_distance_to_the_draw() -> None:
    pref = likeness()
    traj = Trajectory((Turn("user", "How was your weekend?"),))
    verdict = pref.check(traj, words(12))
    assert verdict.admissible and verdict.deviation == 0.0 and verdict.constraint == PREFERENCE
    assert verdict.margin is not None and -1.0 <= verdict.margin <= 0.0
    assert pref.check(traj, words(12)) == verdict  # a pure function of the dialogue and reply
    target = pref.target(traj.observation)["word_count"]
    assert -verdict.margin == pytest.approx(abs(pref.places((), words(12))["word_count"] - target))
    assert pref.check(traj, "  ") == Verdict.allow(PREFERENCE)  # the overlays reject it


def test_tracking_aims_shorter_after_replies_that_ran_long() -> None:
    short, long = words(4), words(28)
    history: tuple[Turn, ...] = ()
    for i in range(4):
        history = (*history, Turn("user", f"turn {i}"), Turn("assistant", long))
    context = (*history, Turn("user", "And then?"))
    tracked, plain = likeness(track=True), likeness(track=False)
    assert tracked.score(context, short) < tracked.score(context, long)
    gap = sum(
        plain.target(history[: 2 * i + 1])["word_count"] - plain.places((), long)["word_count"]
        for i in range(4)
    )
    assert gap < -1.0  # four replies far above their draws
    drawn = plain.target(context)["word_count"]
    assert plain.score(context, short) == pytest.approx(
        abs(plain.places((), short)["word_count"] - drawn)
    )


def test_a_reference_computed_another_way_is_refused() -> None:
    other = fit_reference({"coherence": [0.1, 0.5]}, {"coherence": "lexical overlap"})
    with pytest.raises(SpecError, match="recalibrate"):
        HumanLikeness(other, Resources(embed=lambda texts: np.ones((len(texts), 4))))


def row(*deviations: float, gap: float | None = None) -> list[Verdict]:
    out = [Verdict.allow(f"rule{i}", deviation=d) for i, d in enumerate(deviations)]
    return out if gap is None else [*out, Verdict.allow(PREFERENCE, margin=-gap)]


def test_the_arbiter_ranks_boundary_verdicts_then_the_draw_then_the_order() -> None:
    arbiter = RankingArbiter(ObserverConfig())
    cands = [Candidate(t, t) for t in ("a", "b", "c")]
    rows = [row(0.0, 2.0, gap=0.1), row(0.0, 0.0, gap=0.4), row(0.0, 0.0, gap=0.2)]
    assert arbiter.arbitrate(cands, rows).chosen == 2  # b, c inside every bound; c nearer
    rows = [row(0.0, 0.0, gap=0.3), row(0.0, 0.0, gap=0.3), row(1.0, 0.0, gap=0.0)]
    assert arbiter.arbitrate(cands, rows).chosen == 0  # a tie keeps the policy's order
    rows = [row(0.0), row(0.0), [Verdict.reject("rule0", 3.0, "too long")]]
    assert arbiter.arbitrate(cands, rows).chosen == 0  # no column: the paper's ranking alone


def test_the_column_joins_only_with_several_candidates_and_a_reference() -> None:
    names = lambda cfg: [c.name for c in small_talk_constraints(OVERLAYS, cfg)]  # noqa: E731
    assert names(SmallTalkConfig(n_candidates=3))[-1] == PREFERENCE
    assert PREFERENCE not in names(SmallTalkConfig(n_candidates=1))
    assert PREFERENCE not in names(SmallTalkConfig(n_candidates=3, prefer_human=False))


def test_among_admissible_replies_the_observer_takes_the_one_nearest_the_draw() -> None:
    """Both replies pass every overlay; which one is taken follows the seeded draw."""
    replies = [words(30), words(5)]
    user = "I went hiking with my dog this weekend."
    overlays = [
        dataclasses.replace(o, resources=dataclasses.replace(o.resources, reference=LENGTHS))
        for o in OVERLAYS
    ]
    picked = []
    for seed in range(12):
        config = SmallTalkConfig(n_candidates=2, seed=seed)
        observer = small_talk_observer(
            ScriptedReplies(lambda t, f: replies), overlays, config=config
        )
        result = ChatSession(observer).respond(user)
        scores = [likeness(seed=seed).score((Turn("user", user),), r) for r in replies]
        assert result.reply == replies[int(np.argmin(scores))]
        assert result.decision.verdicts[-1].constraint == PREFERENCE
        picked.append(result.reply)
    assert len(set(picked)) == 2  # a draw, not a fixed preference for the shortest
