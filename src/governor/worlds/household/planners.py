"""Household planners for the Safety Chip tasks: what they see, and a simulated planner.

Every household policy proposes one script line at a time, chosen among the actions the simulator
lists as available (:class:`HouseholdView`). :class:`SimulatedPlanner` is a seeded, scripted
stand-in for an LLM planner; it is not a model. The LLM planner is in
:mod:`governor.worlds.household.prompts`, the Safety Chip guard in
:mod:`governor.worlds.household.guard`.
"""

from __future__ import annotations

import dataclasses
import random
from collections import Counter
from typing import Any

from governor.config import check_range
from governor.core import Candidate, Feedback, FeedbackKind, Policy, Trajectory
from governor.ltl.progression import accepts_empty, progress
from governor.worlds.household.env import (
    ROOM_NAMES,
    HouseholdSim,
    SceneGraph,
    State,
    Task,
    action_catalogue,
    default_scene,
    describe,
    parse_action,
)
from governor.worlds.household.plans import (
    DONE,
    achieved,
    intentions,
    mentioned,
    objects_of,
    obligations,
    predict_labels,
    steps_to,
)

_HANDED = ("GRAB", "OPEN")


@dataclasses.dataclass(frozen=True)
class HouseholdView:
    """What a household policy sees at one step: the text, the labels, the available actions."""

    text: str
    labels: frozenset[str]
    actions: tuple[str, ...]
    state: State
    t: int


def view(sim: HouseholdSim) -> HouseholdView:
    """The simulator's current view (the observation of a household trajectory)."""
    actions = sim.available_actions()
    text = describe(
        sim.state,
        task=sim.task,
        actions=actions,
        error=sim.error,
        t=sim.t,
        max_steps=sim.params.max_steps,
    )
    return HouseholdView(text, sim.labels(), tuple(actions), sim.state, sim.t)


class SimulatedPlanner(Policy):
    """A seeded stand-in for an LLM planner; it is not a model and makes no LLM call.

    It follows the task's program (:func:`intentions`) with deviations drawn once from ``seed``:
    each adjacent pair of steps on different objects is swapped with probability
    ``deviation_rate``, each CLOSE is skipped with that probability, and with that probability a
    walk to a random other room is inserted at a random place. To do a step it walks to the
    object's room and to the object, stands up first and frees a hand when needed; a step it
    cannot do is dropped. It proposes ``[DONE]`` at the end.

    Under forced feedback it never repeats an action rejected at this step, and drops a step
    refused twice. It takes an action that meets an obligation written ``still to meet: [...]``;
    otherwise it inserts into its plan the steps that flip the propositions the feedback names
    (those of the obligations, else those of the violated formula that the rejected action did
    not change) and goes on from there. Failing that: an action that changes such an obligation,
    a later step of its plan, a seeded random available action.
    """

    name = "simulated_planner"

    def __init__(
        self,
        task: Task,
        seed: int = 0,
        deviation_rate: float = 0.2,
        scene: SceneGraph | None = None,
    ) -> None:
        check_range("deviation_rate", deviation_rate, 0.0, 1.0)
        self.task, self.seed, self.deviation_rate = task, seed, deviation_rate
        self.scene = scene or default_scene()
        self.deviations: list[str] = []
        self.program = self._deviate(
            intentions(task, self.scene), random.Random(f"{seed}/{task.key}")
        )
        self._reset()

    def _reset(self) -> None:
        self.plan, self._pointer, self._seen, self._t = list(self.program), 0, 0, -1
        self._last: str | None = None
        self._rejected: set[str] = set()  # at this step
        self._refused: Counter[str] = Counter()  # over the episode
        self._inserted: Counter[str] = Counter()

    def _deviate(self, plan: list[str], rng: random.Random) -> list[str]:
        rate, out = self.deviation_rate, list(plan)
        for i in range(len(out) - 1):
            a, b = out[i], out[i + 1]
            if not set(objects_of(a)) & set(objects_of(b)) and rng.random() < rate:
                out[i], out[i + 1] = b, a
                self.deviations.append(f"swapped {a} and {b}")
        for line in list(out):
            if line.startswith("[CLOSE]") and rng.random() < rate:
                out.remove(line)
                self.deviations.append(f"skipped {line}")
        if rng.random() < rate:
            room = rng.choice([r for r in ROOM_NAMES if r != self.task.init_room])
            at = rng.randrange(len(out) + 1)
            out.insert(at, f"[WALK] <{room}>")
            self.deviations.append(f"extra visit to the {room} at step {at}")
        return [*out, DONE]

    def propose(self, traj: Trajectory, feedback: Feedback | None, n: int) -> list[Candidate[Any]]:
        seen: HouseholdView = traj.observation
        self._sync(traj)
        if feedback is not None and feedback.kind is FeedbackKind.FORCED and self._last:
            self._rejected.add(self._last)
            self._refused[self._last] += 1
            action = self._replan(seen, feedback)
        else:  # a step's first proposal
            self._rejected = set()
            action = self._next(seen) or DONE
        self._last = action
        return [Candidate(action, action)]

    def _sync(self, traj: Trajectory) -> None:
        """Advance the plan over the steps executed since the last call."""
        if traj.t < self._seen or (traj.t == 0 and self._t > 0):  # a new episode
            self._reset()
        for step in traj.steps[self._seen :]:
            if self._pointer < len(self.plan) - 1 and step.action == self.plan[self._pointer]:
                self._pointer += 1
        self._seen = traj.t
        if traj.t != self._t:
            self._t, self._rejected, self._last = traj.t, set(), None

    def _next(self, seen: HouseholdView) -> str | None:
        """The next action of the plan (None: it was rejected at this step)."""
        while self._pointer < len(self.plan) - 1:
            step = self.plan[self._pointer]
            action = None if achieved(step, seen.labels) else self._ground(step, seen)
            if action is None:
                del self.plan[self._pointer]
                continue
            return None if action in self._rejected else action
        return None if DONE in self._rejected else DONE

    def _ground(self, step: str, seen: HouseholdView) -> str | None:
        """An available action that does ``step`` or brings it closer; None if it cannot."""
        if step in seen.actions:
            return step
        if step not in action_catalogue(self.scene):
            return None
        act = parse_action(step)
        if act.verb in ("PUTIN", "PUTBACK") and f"is_grabbed({act.objects[0]})" not in seen.labels:
            return self._ground(f"[GRAB] <{act.objects[0]}>", seen)
        if act.verb in _HANDED and len(seen.state.holding) >= 2:
            return self._free_hand(seen)
        if "[STANDUP]" in seen.actions:
            return "[STANDUP]"
        target = act.objects[-1] if act.objects else None
        if target is None or f"agent_at({target})" in seen.labels:
            return None
        return self._towards(target, seen)

    def _towards(self, target: str, seen: HouseholdView) -> str | None:
        """A walk to ``target`` (an object or a room), or to a room it is in."""
        walks = [f"[WALK] <{target}>"]
        walks += [f"[WALK] <{r}>" for r in ROOM_NAMES if f"is_in({target}, {r})" in seen.labels]
        walks = [w for w in walks if w in seen.actions]
        return next((w for w in walks if w not in self._rejected), walks[0] if walks else None)

    def _free_hand(self, seen: HouseholdView) -> str | None:
        needed = {o for step in self.plan[self._pointer :] for o in objects_of(step)}
        held = [a for a in seen.actions if a.startswith(("[PUTBACK]", "[PUTIN]"))]
        spare = [a for a in held if objects_of(a)[0] not in needed]
        return next(iter(spare or held), None)

    def _replan(self, seen: HouseholdView, feedback: Feedback) -> str:
        step = self.plan[self._pointer] if self._pointer < len(self.plan) - 1 else None
        if step and self._refused[self._last or ""] >= 2 and self._ground(step, seen) == self._last:
            del self.plan[self._pointer]  # refused twice: given up
        options = [a for a in seen.actions if a not in self._rejected and a != DONE]
        owed = obligations(feedback.text)
        after = {a: predict_labels(seen.state, a) for a in options} if owed else {}
        for a in options:
            if any(_advances(ob, seen.labels, after[a], True) for ob in owed):
                return a
        changed = set().union(
            *(seen.labels ^ predict_labels(seen.state, a) for a in self._rejected)
        )
        wanted = [p for ob in owed for p in sorted(ob.atom_labels())]
        wanted = wanted or [p for p in mentioned(feedback.text) if p not in changed]
        for p in reversed(wanted):
            ahead = self.plan[self._pointer : self._pointer + 3]
            steps = [s for s in steps_to(p, p not in seen.labels) if s not in ahead]
            if steps and self._inserted[p] < 2:
                self._inserted[p] += 1
                self.plan[self._pointer : self._pointer] = steps
        action = self._next(seen)
        if action is not None:
            return action
        for a in options:
            if any(_advances(ob, seen.labels, after[a], False) for ob in owed):
                return a
        later = [self._ground(s, seen) for s in self.plan[self._pointer + 1 : -1]]
        found = next((g for g in later if g is not None and g in options), None)
        if found is not None:
            return found
        rng = random.Random(f"{self.seed}/{self.task.key}/{seen.t}/{len(self._rejected)}")
        rng.shuffle(options)
        return options[0] if options else DONE


def _advances(owed: Any, now: frozenset[str], after: frozenset[str], meets: bool) -> bool:
    """Whether moving to ``after`` meets (or, with ``meets`` false, changes) the obligation."""
    nxt = progress(owed, after)
    return accepts_empty(nxt) if meets else nxt != progress(owed, now)
