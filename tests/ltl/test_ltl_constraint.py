"""LTLConstraint on a toy four-room world, directly and inside the observer loop."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from governor.config import ObserverConfig
from governor.core import Candidate, DecisionKind, Feedback, Policy, Step, Trajectory
from governor.ltl import patterns as p
from governor.ltl.constraint import LTLConstraint, describe_change, state_change, valuation
from governor.ltl.monitor import MonitorSetState, MonitorVerdict
from governor.ltl.satisfiability import exactly_one, one_hot
from governor.observer import Observer

ROOMS = ("bathroom", "bedroom", "kitchen", "living_room")
AT = {r: f"agent_at({r})" for r in ROOMS}
# The paper's example: both constraints of its re-prompting dialogue.
SPECS = [
    ("lr_before_bath", "you have to enter living room before bathroom", p.past_avoidance(AT["bathroom"], AT["living_room"])),
    ("bed_before_lr", "you have to enter bedroom before going into living room", p.past_avoidance(AT["living_room"], AT["bedroom"])),
]  # fmt: skip


def observe(room: str) -> frozenset[str]:
    return frozenset({AT[room]})


def predict(traj: Trajectory, action: str) -> frozenset[str]:
    return observe(action)  # "walk to <room>" always succeeds in this world


def make(specs: Sequence[Any] = SPECS) -> LTLConstraint:
    return LTLConstraint(specs, predict, observe, name="safety_chip")


def start(c: LTLConstraint, room: str = "kitchen") -> Trajectory:
    return Trajectory(room, memory={c.name: c.initial_state(room)})


def walk(c: LTLConstraint, traj: Trajectory, room: str) -> Trajectory:
    step = Step(traj.observation, room, room, DecisionKind.EXECUTE)
    return traj.advance(step, {c.name: c.commit(traj, step)}, None)


def test_rejects_and_names_the_violated_constraint() -> None:
    c = make()
    traj = start(c)
    bath = c.check(traj, "bathroom")
    assert not bath.admissible and bath.deviation == 1.0 and bath.constraint == "safety_chip"
    assert '"you have to enter living room before bathroom"' in bath.descriptor
    assert "agent_at(bathroom) becomes true" in bath.descriptor
    living = c.check(traj, "living_room")
    assert not living.admissible
    assert "enter bedroom before going into living room" in living.descriptor
    assert "living room before bathroom" not in living.descriptor


def test_pending_obligations_are_admissible_and_mentioned() -> None:
    c = make()
    verdict = c.check(start(c), "bedroom")
    assert verdict.admissible and verdict.deviation == 0.0
    assert "pending" in verdict.descriptor and "agent_at(living_room)" in verdict.descriptor


def test_check_is_a_what_if_and_commit_advances() -> None:
    c = make()
    traj = start(c)
    before = traj.memory[c.name]
    c.check(traj, "bathroom")
    assert traj.memory[c.name] is before
    assert c.what_if(traj, "bathroom").violated == ("lr_before_bath",)
    for room in ("bedroom", "living_room"):
        assert c.check(traj, room).admissible
        traj = walk(c, traj, room)
    assert c.check(traj, "bathroom").admissible
    state = traj.memory[c.name]
    assert isinstance(state, MonitorSetState) and state.labels == {AT["living_room"]}
    assert c.final_verdicts(state) == {
        "lr_before_bath": MonitorVerdict.OK,
        "bed_before_lr": MonitorVerdict.OK,
    }


def test_end_of_episode_with_a_pending_obligation_is_a_violation() -> None:
    spec = ("react", "go to the bedroom after the kitchen", "G(kitchen -> F bedroom)")
    c = LTLConstraint([spec], lambda t, a: {a}, lambda o: {o})
    state = c.initial_state("kitchen")
    assert c.final_verdicts(state) == {"react": MonitorVerdict.VIOLATED}
    assert c.final_verdicts(c.monitors.step(state, {"bedroom"})) == {"react": MonitorVerdict.OK}


def test_already_violated_constraint_is_reported_as_such() -> None:
    c = LTLConstraint(
        [("avoid", "never the kitchen", "G !kitchen")], lambda t, a: {a}, lambda o: {o}
    )
    traj = Trajectory("kitchen", memory={c.name: c.initial_state("kitchen")})
    verdict = c.check(traj, "bedroom")
    assert not verdict.admissible and "already violated" in verdict.descriptor


def test_missing_memory_before_the_first_step_starts_from_the_observation() -> None:
    c = make()
    assert not c.check(Trajectory("kitchen"), "bathroom").admissible
    with pytest.raises(TypeError, match="expected a MonitorSetState"):
        c.check(Trajectory("kitchen", memory={c.name: "junk"}), "bathroom")


def test_conflicting_constraints_are_found() -> None:
    specs = [
        *SPECS,
        (
            "bath_first",
            "go to the bathroom before the bedroom",
            p.past_avoidance(AT["bedroom"], AT["bathroom"]),
        ),
    ]
    c = make(specs)
    rooms = [AT[r] for r in ROOMS]
    assert c.conflicts(one_hot(rooms), [exactly_one(rooms)]) == (
        "lr_before_bath",
        "bed_before_lr",
        "bath_first",
    )
    assert make().conflicts(one_hot(rooms)) == ()


def test_state_change_helpers() -> None:
    before, after = {AT["kitchen"], "x"}, {AT["bathroom"], "x"}
    assert state_change(before, after) == ([AT["bathroom"]], [AT["kitchen"]])
    assert state_change(before, after, {AT["bathroom"]}) == ([AT["bathroom"]], [])
    assert describe_change(before, after, {"x"}) == "no change in its propositions"
    assert valuation(after, [AT["bedroom"], AT["bathroom"]]) == (
        "agent_at(bathroom) & !agent_at(bedroom)"
    )


class Walker(Policy):
    """Proposes rooms from a script, one candidate per call."""

    name = "walker"

    def __init__(self, script: Sequence[str]) -> None:
        self.script, self.calls = list(script), 0

    def propose(self, traj: Trajectory, feedback: Feedback | None, n: int) -> list[Candidate[Any]]:
        room = self.script[min(self.calls, len(self.script) - 1)]
        self.calls += 1
        return [Candidate(room)]


def test_inside_the_observer_loop() -> None:
    c = make()
    # two different monitors reject in a row; the observer's no-progress rule sees only the
    # constraint's name, so it is turned off here
    config = ObserverConfig(stop_on_repeat=False)
    observer = Observer(Walker(["bathroom", "living_room", "bedroom"]), [c], config=config)
    traj = observer.start("kitchen")
    decision = observer.step(traj)
    assert decision.executed and decision.action == "bedroom" and decision.regenerations == 2
    assert "pending" in decision.verdicts[0].descriptor
    traj = observer.commit(traj, decision, "bedroom")
    assert traj.memory[c.name].labels == {AT["bedroom"]}


def test_a_fallback_that_would_violate_a_monitor_is_not_executed() -> None:
    from governor.core import Candidate, Fallback, Policy

    class Bathroom(Policy):
        def propose(self, traj: Trajectory, feedback: Any, n: int) -> list[Candidate[str]]:
            return [Candidate("bathroom")]

    class Go(Fallback):
        def __init__(self, room: str) -> None:
            self.room = room

        def act(self, traj: Trajectory, verdicts: Sequence[Any]) -> str:
            return self.room

    c = make()
    observer = Observer(Bathroom(), [c], Go("living_room"))  # living room before bedroom: no
    refused = observer.step(observer.start("kitchen"))
    assert refused.kind is DecisionKind.DEFER and "refused by safety_chip" in refused.reason
    observer = Observer(Bathroom(), [c], Go("bedroom"))
    assert observer.step(observer.start("kitchen")).kind is DecisionKind.FALLBACK
