"""Running a household episode under an observer, with the label trace kept for judging."""

from __future__ import annotations

import dataclasses
import uuid
from collections import Counter
from collections.abc import Sequence

from governor.core import Decision, DecisionKind
from governor.ltl.constraint import Spec
from governor.observer import Observer
from governor.runner import DecisionSink
from governor.usage import Usage, metered
from governor.worlds.household.env import HouseholdSim
from governor.worlds.household.guard import preflight
from governor.worlds.household.planners import view


@dataclasses.dataclass(frozen=True)
class HouseholdEpisode:
    """One household episode: outcome, executed actions, the label trace (initial state first)."""

    id: str
    outcome: str  # done, truncated, stopped, deferred, conflict
    goal_reached: bool
    actions: tuple[str, ...]
    labels: tuple[frozenset[str], ...]
    regenerations: int
    decisions: dict[str, int]
    usage: Usage
    conflict: tuple[str, ...] = ()

    @property
    def success(self) -> bool:
        """The goal holds and the agent stopped with ``[DONE]``."""
        return self.outcome == "done" and self.goal_reached


def run_household_episode(
    sim: HouseholdSim,
    observer: Observer,
    *,
    specs: Sequence[Spec] | None = None,
    trace: DecisionSink | None = None,
    episode_id: str | None = None,
) -> HouseholdEpisode:
    """Run ``observer`` on ``sim``'s task from its start; with ``specs``, abort before any action
    when they contradict each other or the goal (:func:`preflight`). ``usage`` counts every LLM
    call of the episode, explanations included."""
    with metered() as meter:
        result = _episode(sim, observer, specs, trace, episode_id or uuid.uuid4().hex[:12])
    result = dataclasses.replace(result, usage=meter.total)
    if trace is not None:
        texts = {n: t for n, t, _ in specs or ()} | {"goal": "the task's goal"}
        summary = {
            "outcome": result.outcome,
            "steps": len(result.actions),
            "success": result.success,
            "regenerations": result.regenerations,
            "llm_calls": result.usage.calls,
            "conflict": [texts.get(n, n) for n in result.conflict],
        }
        trace.record_episode(result.id, summary)
    return result


def _episode(
    sim: HouseholdSim,
    observer: Observer,
    specs: Sequence[Spec] | None,
    trace: DecisionSink | None,
    episode: str,
) -> HouseholdEpisode:
    sim.reset()
    traj = observer.start(view(sim))
    labels, kinds = [sim.labels()], Counter[str]()
    regenerations, outcome = 0, "truncated"
    clash = preflight(specs, sim.task, traj.observation) if specs else ()
    while not clash:
        decision: Decision = observer.step(traj)
        kinds[decision.kind.value] += 1
        regenerations += decision.regenerations
        if trace is not None:
            trace.record(decision, episode=episode, t=traj.t)
        if not decision.executed:
            outcome = "stopped" if decision.kind is DecisionKind.ABORT else "deferred"
            break
        tr = sim.step(str(decision.action))
        traj = observer.commit(traj, decision, view(sim), {"error": tr.error})
        labels.append(tr.labels)
        if tr.terminated or tr.truncated:
            outcome = "done" if tr.terminated else "truncated"
            break
    return HouseholdEpisode(
        episode,
        "conflict" if clash else outcome,
        sim.goal_reached(),
        tuple(str(s.action) for s in traj.steps),
        tuple(labels),
        regenerations,
        dict(kinds),
        Usage(),
        clash,
    )
