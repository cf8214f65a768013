"""The household simulator's rules as an action domain, checked against the simulator, and the
domain-aware joint check on the Safety Chip tasks."""

from __future__ import annotations

import random

import pytest

from governor.ltl import MonitorSet, MonitorVerdict, minimal_conflict, parse
from governor.ltl.english.translate import translate_offline
from governor.ltl.operators import Eventually
from governor.worlds.household.env import HouseholdParams, HouseholdSim
from governor.worlds.household.episode import run_household_episode
from governor.worlds.household.guard import alphabet, preflight, safety_chip
from governor.worlds.household.ltl_domain import household_domain
from governor.worlds.household.ltl_facts import Facts
from governor.worlds.household.ltl_rules import check_task, goal_condition, household_rules
from governor.worlds.household.planners import view
from governor.worlds.household.sim import default_scene
from governor.worlds.household.step import action_catalogue, available_actions, execute
from governor.worlds.household.tasks import KNOWN_PROGRAM_ISSUES, find_task, load_tasks

OBJECTS = ["salmon", "fridge", "microwave", "pie", "apple", "sofa", "pillow", "window", "bed"]
SALMON_CYCLE = (
    "you have to enter bathroom before kitchen",
    "don't go to bathroom before living room",
    "don't go to living room before you put the salmon in the fridge",
)


def specs(task_key: str, sentences: tuple[str, ...] | list[str]) -> list[tuple[str, str, object]]:
    task = find_task(task_key)
    domain = household_domain(task)
    out = []
    for i, s in enumerate(sentences, 1):
        found = translate_offline(s, domain)
        if found.formula is not None:
            out.append((f"c{i}", s, found.formula))
    return out


def _split(fs: frozenset[str]) -> tuple[frozenset[str], frozenset[str]]:
    reach = frozenset(f for f in fs if f.startswith("reach#"))
    return fs - reach, reach


def test_every_simulator_step_is_a_step_of_the_rules_and_back():
    scene, rng = default_scene(), random.Random(7)
    facts = Facts.of(scene, OBJECTS, touch=True)
    catalogue = list(action_catalogue(scene))
    forward = backward = 0
    for room in ("kitchen", "bedroom"):
        domain = household_rules(scene, room, OBJECTS, touch=True)
        state = scene.initial_state(room)
        for _ in range(20):
            now = facts.project(state)
            steps = [(a.name, nxt) for a, nxt in domain.successors(now)]
            moved = []
            for act in available_actions(state) + rng.sample(catalogue, 8):
                after, _ = execute(state, act)
                if after == state:
                    continue  # a failed step changes nothing: the rules' [STANDUP]
                seen, reach = _split(facts.project(after))
                assert any(_split(n)[0] == seen and _split(n)[1] >= reach for _, n in steps), (
                    f"{act} from {sorted(now)} is not a step of the rules"
                )
                forward += 1
                moved.append(after)
            if state.posture == "standing" and set(state.holding) <= facts.ids:
                outcomes: dict[str, list[frozenset[str]]] = {}
                for name, n in steps:
                    outcomes.setdefault(name, []).append(_split(n)[0])
                for name, outs in outcomes.items():
                    if name == "[STANDUP]" or not _covered(name, facts):
                        continue
                    after, _ = execute(state, name)
                    assert _split(facts.project(after))[0] in outs, f"{name} from {sorted(now)}"
                    backward += 1
            state = rng.choice(moved) if moved else state
    assert forward > 300 and backward > 100


def _covered(name: str, facts: Facts) -> bool:
    objs = [x.split(">")[0] for x in name.split("<")[1:]]
    return all(o in facts.names or o in facts.scene.rooms for o in objs)


def test_a_cycle_through_the_goals_room_aborts_before_the_first_step():
    task = find_task("rooms/0_10")  # start in the bedroom; goal: the salmon in the fridge
    found = specs(task.key, SALMON_CYCLE)
    assert len(found) == 3
    start = view(HouseholdSim(task))
    assert set(preflight(found, task, start)) >= {"c1", "c2", "c3"}
    # the alphabet check without the rules finds no conflict (the salmon may be in the fridge at once)
    goal = goal_condition(task, default_scene())
    named = {n: f for n, _, f in found} | {"goal": Eventually(goal)}
    assert minimal_conflict(named, alphabet(named.values())) == ()
    ep = run_household_episode(HouseholdSim(task), safety_chip(_Never(), found), specs=found)
    assert ep.outcome == "conflict" and ep.actions == () and set(ep.conflict) >= {"c1", "c2", "c3"}


class _Never:
    """A policy that must never be asked (the episode aborts first)."""

    name = "never"

    def propose(self, *args: object, **kwargs: object) -> object:
        raise AssertionError("the policy was asked for an action")

    def __call__(self, *args: object, **kwargs: object) -> object:
        raise AssertionError("the policy was asked for an action")


@pytest.mark.parametrize(
    "sentence", ["never open the fridge", "never pick up the salmon", "never go to the kitchen"]
)
def test_conflicts_through_a_precondition(sentence):
    task = find_task("rooms/0_10")
    found = specs(task.key, [sentence])
    report = check_task(task, [(n, f) for n, _, f in found])
    assert report.conflict and report.minimal == ("c1",) and report.goal_involved


def test_the_witness_replays_in_the_simulator():
    task = find_task("mobile_manip/0_9")  # the pie in the microwave; bathroom before kitchen, ...
    found = specs(task.key, task.constraints["5"])
    report = check_task(task, [(n, f) for n, _, f in found])
    assert not report.conflict and report.witness
    sim = HouseholdSim(task, params=HouseholdParams(stop_on_goal=False))
    trace = [sim.labels()]
    for step in report.witness:
        moved = sim.step(step)
        assert moved.error is None, moved.error
        trace.append(moved.labels)
    assert sim.goal_reached()
    monitors = MonitorSet.from_specs(found)
    state = monitors.start(trace[0])
    for labels in trace[1:]:
        state = monitors.step(state, labels)
    assert all(v is MonitorVerdict.OK for v in monitors.final_verdicts(state).values())


def _expert_meets(task, found) -> bool:
    sim = HouseholdSim(task, params=HouseholdParams(stop_on_goal=False, max_steps=200))
    trace = [sim.labels()]
    for line in task.program:
        trace.append(sim.step(line).labels)
    if not sim.goal_reached():
        return False
    monitors = MonitorSet.from_specs(found)
    state = monitors.start(trace[0])
    for labels in trace[1:]:
        state = monitors.step(state, labels)
    return all(v is MonitorVerdict.OK for v in monitors.final_verdicts(state).values())


@pytest.mark.slow
def test_shipped_tasks_met_by_their_expert_plans_are_never_conflicts():
    met = 0
    for task in load_tasks():
        for group in ("3", "5_diverse"):
            found = specs(task.key, task.constraints[group])
            report = check_task(task, [(n, f) for n, _, f in found])
            if _expert_meets(task, found):
                met += 1
                assert not report.conflict, (task.key, group, report.minimal)
            if report.conflict and task.key not in KNOWN_PROGRAM_ISSUES:
                assert not _expert_meets(task, found)
    assert met >= 5


def test_a_set_the_rules_allow_is_no_conflict():
    task = find_task("rooms/0_10")
    ok = ["you have to enter bathroom before kitchen", "you can only go to kitchen twice"]
    report = check_task(task, [(n, f) for n, _, f in specs(task.key, ok)])
    assert not report.conflict and report.witness is not None
    assert parse("is_in(salmon, fridge)").atom_labels() <= (report.witness_labels or ())[-1]
