"""Tutoring (extension 2, the journal paper's section 5.7.2): fixed against adaptive rigidity, on
the same seeded simulated learners.

A simulated learner (:class:`~.tutoring_agents.Learner`, skill drawn in [0.3, 0.7]) answers an
exercise per turn; an offline tutor-reply generator (:class:`~.tutoring_agents.TutorReplies`, not
a model) corrects it, more bluntly the more wrong answers came in a row. The observer runs the
shipped tutoring overlays (:data:`~governor.overlays.rigidity.TUTORING_OVERLAYS`): ``adaptive``
with the harsh-feedback overlay's margin, ``fixed`` with the same overlay at its fixed rigidity
(no margin), ``unguarded`` with no observer.

Primary metric: the share of turns after which the running negativity (the mean negativity of the
tutor's last four turns, the overlay's own running value) is above the bound 0.35 (lower is
better). The table adds the upward crossings per 100 turns, the regenerations and repairs per
turn, blunt corrections executed and the learners' final accuracy.
"""

from __future__ import annotations

import dataclasses
import random
from dataclasses import dataclass

from governor.config import ObserverConfig
from governor.core import Constraint, DecisionKind
from governor.observer import Observer
from governor.overlays.constraint import overlay_constraints
from governor.overlays.features.critique import encouragement, negativity
from governor.overlays.loader import load_overlays
from governor.overlays.rigidity import TUTORING_OVERLAYS, Margin
from governor.worlds.scenarios.scenario import ScenarioResult
from governor.worlds.scenarios.tutoring_agents import Learner, TutorRepair, TutorReplies

TURNS = 20
CONDITIONS = ("unguarded", "fixed", "adaptive")


def constraints(condition: str) -> list[Constraint]:
    """The overlays of ``condition`` (see the module doc)."""
    if condition == "unguarded":
        return []
    overlays = load_overlays(TUTORING_OVERLAYS)
    if condition == "fixed":
        overlays = [dataclasses.replace(o, margin=None) for o in overlays]
    return list(overlay_constraints(overlays))


def margin_of_example() -> Margin:
    """The harsh-feedback overlay's margin (its bound and window define the metric)."""
    for o in load_overlays(TUTORING_OVERLAYS):
        if isinstance(o.margin, Margin):
            return o.margin
    raise AssertionError("the tutoring overlays carry a margin")


@dataclass(frozen=True)
class Tally:
    """One learner's episode: the running negativity after each turn and what the tutor did."""

    running: tuple[float, ...]
    above: float  # share of turns with the running negativity above the bound
    crossings: int
    regenerations: int
    repairs: int
    blunt: int
    accuracy: float


def episode(condition: str, seed: int, index: int) -> Tally:
    """One seeded learner (the same in every condition) with ``condition``'s tutor."""
    setup = random.Random(seed * 1_000_003 + index)
    learner = Learner(setup.uniform(0.3, 0.7))
    rng = random.Random(setup.getrandbits(64))
    config = ObserverConfig(max_regenerations=2, stop_on_repeat=False)
    guard = Observer(
        TutorReplies(seed * 7919 + index), constraints(condition), TutorRepair(), config=config
    )
    margin = margin_of_example()
    correct = learner.answer(rng)
    streak = 0 if correct else 1
    traj = guard.start(_said(correct), {"correct": correct, "streak": streak})
    said: list[float] = []
    running: list[float] = []
    regen = repairs = blunt = 0
    for _ in range(TURNS):
        decision = guard.step(traj)
        reply = str(decision.action) if decision.executed else ""
        regen += decision.regenerations
        repairs += decision.kind is DecisionKind.FALLBACK
        n = negativity((), reply)
        blunt += n >= 0.5
        said.append(n)
        running.append(sum(said[-margin.window :]) / margin.window)
        learner.hear(n, encouragement((), reply))
        correct = learner.answer(rng)
        streak = 0 if correct else streak + 1
        info = {"correct": correct, "streak": streak}
        traj = guard.commit(traj, decision, _said(correct), info) if decision.executed else traj
    above = [r > margin.bound for r in running]
    crossings = sum(1 for a, b in zip([False, *above], above, strict=False) if b and not a)
    return Tally(tuple(running), sum(above) / TURNS, crossings, regen, repairs, blunt, learner.p)


def run(*, episodes: int = 100, seed: int = 0) -> ScenarioResult:
    """The three conditions on ``episodes`` seeded learners."""
    rows, conditions, series = [], {}, {}
    for cond in CONDITIONS:
        eps = [episode(cond, seed, i) for i in range(episodes)]
        turns = episodes * TURNS

        def mean(key: str, eps: list[Tally] = eps) -> float:
            return sum(float(getattr(e, key)) for e in eps) / len(eps)

        conditions[cond] = mean("above")
        series[cond] = tuple(sum(e.running[t] for e in eps) / len(eps) for t in range(TURNS))
        rows.append(
            {
                "condition": cond,
                "turns_above_bound": mean("above"),
                "crossings_per_100_turns": 100.0 * mean("crossings") / TURNS,
                "regenerations_per_turn": mean("regenerations") / TURNS,
                "repairs_per_turn": mean("repairs") / TURNS,
                "blunt_corrections_per_episode": mean("blunt"),
                "final_learner_accuracy": mean("accuracy"),
                "turns": turns,
            }
        )
    notes = (
        "learners: simulated (seeded skill; accuracy rises with encouragement and falls with"
        " negativity), not people; tutor replies: an offline generator drawing from fixed"
        " phrasings, not a model",
        "negativity and encouragement are lexical proxies; the bounds of the tutoring overlays"
        " are set by hand for the example, not calibrated on human data",
    )
    return ScenarioResult(
        name="tutoring",
        metric="turns_above_bound",
        lower_is_better=True,
        treatment="adaptive",
        ablation="fixed",
        conditions=conditions,
        table=tuple(rows),
        series=series,
        series_label="mean running negativity (last four tutor turns) after each turn",
        notes=notes,
    )


def _said(correct: bool) -> str:
    return "I got 12." if correct else "I got 15?"
