"""Running an observer-guarded episode in a gymnasium environment, with an optional trace."""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import gymnasium as gym

from governor.core import Decision, Trajectory
from governor.observer import Observer
from governor.usage import Usage


class DecisionSink(Protocol):
    """Where decisions go (a trace writer)."""

    def record(
        self, decision: Decision, *, episode: str, t: int, extra: Mapping[str, Any] | None = None
    ) -> None: ...

    def record_episode(self, episode: str, summary: Mapping[str, Any]) -> None: ...


@dataclass(frozen=True)
class Episode:
    """The outcome of one guarded episode."""

    id: str
    outcome: str  # success, failure, truncated, stopped (abort), deferred
    steps: int
    interventions: int
    regenerations: int
    decisions: Mapping[str, int]
    usage: Usage
    trajectory: Trajectory
    info: Mapping[str, Any] = field(default_factory=dict)
    propose_seconds: float = 0.0  # the base policy's time over the episode (the model's)
    judging_seconds: float = 0.0  # the guard's time over the episode (checks, feedback, fallback)

    @property
    def intervention_rate(self) -> float:
        return self.interventions / max(1, sum(self.decisions.values()))

    def summary(self) -> dict[str, Any]:
        return {
            "outcome": self.outcome,
            "steps": self.steps,
            "interventions": self.interventions,
            "regenerations": self.regenerations,
            "decisions": dict(self.decisions),
            "llm_calls": self.usage.calls,
            "llm_failed": self.usage.failed,
            "tokens": self.usage.tokens,
        }


def run_episode(
    env: gym.Env[Any, Any],
    observer: Observer,
    *,
    seed: int | None = None,
    options: Mapping[str, Any] | None = None,
    trace: DecisionSink | None = None,
    episode_id: str | None = None,
    extra: Callable[[Trajectory], Mapping[str, Any]] | None = None,
) -> Episode:
    """Run one episode under ``observer``; every decision goes to ``trace`` when given.

    ``extra(traj)`` adds what a reader of the trace needs beside the decision (e.g. the state).
    Outcomes come from the environment's ``info`` ("success"/"failed") at termination.
    """
    episode = episode_id or uuid.uuid4().hex[:12]
    observation, info = env.reset(seed=seed, options=dict(options) if options else None)
    traj = observer.start(observation, info)
    kinds: Counter[str] = Counter()
    interventions = regenerations = 0
    usage = Usage()
    outcome = "truncated"
    proposing = judging = 0.0
    while True:
        decision = observer.step(traj)
        proposing += decision.proposing_seconds
        judging += decision.judging_seconds
        kinds[decision.kind.value] += 1
        interventions += decision.intervened
        regenerations += decision.regenerations
        usage = usage + decision.total_usage
        if trace is not None:
            trace.record(decision, episode=episode, t=traj.t, extra=extra(traj) if extra else None)
        if not decision.executed:
            outcome = "stopped" if decision.kind.value == "abort" else "deferred"
            break
        observation, _, terminated, truncated, info = env.step(decision.action)
        traj = observer.commit(traj, decision, observation, info)
        if terminated:
            outcome = (
                "failure"
                if info.get("failed")
                else "success"
                if info.get("success")
                else "terminated"
            )
            break
        if truncated:
            break
    result = Episode(
        episode,
        outcome,
        traj.t,
        interventions,
        regenerations,
        dict(kinds),
        usage,
        traj,
        traj.info,
        proposing,
        judging,
    )
    if trace is not None:
        trace.record_episode(episode, result.summary())
    return result


def run_episodes(
    env: gym.Env[Any, Any],
    observer: Observer,
    starts: Sequence[Any],
    *,
    seeds: Sequence[int] | None = None,
    trace: DecisionSink | None = None,
    label: str,
    extra: Callable[[Trajectory], Mapping[str, Any]] | None = None,
    on_episode: Callable[[Episode], None] | None = None,
) -> list[Episode]:
    """One episode from each start (reset with ``options={"state": start}``), in order.

    Episode i is seeded ``seeds[i]`` (default: i) and named ``f"{label}-{i}"``; ``on_episode``
    sees each as it ends.
    """
    if seeds is not None and len(seeds) != len(starts):
        raise ValueError(f"{len(starts)} starts but {len(seeds)} seeds")
    episodes = []
    for i, start in enumerate(starts):
        ep = run_episode(
            env,
            observer,
            seed=i if seeds is None else seeds[i],
            options={"state": start},
            trace=trace,
            episode_id=f"{label}-{i}",
            extra=extra,
        )
        episodes.append(ep)
        if on_episode is not None:
            on_episode(ep)
    return episodes
