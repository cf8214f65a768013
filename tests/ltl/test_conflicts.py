"""The domain-aware joint check (governor.ltl.conflicts) over a small hand-written action domain."""

from __future__ import annotations

import pytest

from governor.errors import SpecError
from governor.ltl import holds, jointly_satisfiable, one_hot, parse
from governor.ltl.actions import Action, ActionDomain, Invariant, facts
from governor.ltl.conflicts import check_conflicts, find_execution
from governor.ltl.english.domain_file import flag_domain
from governor.ltl.english.translate import translate_offline
from governor.ltl.operators import Eventually
from governor.ltl.simplify import conj
from governor.worlds.household.ltl_phrases import HOUSEHOLD_PHRASES

PLACES = ("bed", "desk", "shelf", "door")
AT = {p: f"agent_at({p})" for p in PLACES}
ON_SHELF, HOLD = "is_on(book, shelf)", "is_grabbed(book)"
GOAL = parse(ON_SHELF)
# the Safety Chip paper's abort example: three "before" constraints that close a cycle with the goal
CYCLE = (
    "don't go to the shelf before the desk",
    "don't go to the desk before the bed",
    "don't go to the bed before you put the book on the shelf",
)


def study(put_needs_shelf: bool = True) -> ActionDomain:
    """One room of four places; the book starts at the door; putting it on the shelf needs being
    at the shelf (unless ``put_needs_shelf`` is off) and holding it."""
    moves = [
        Action(f"go to the {p}", add=facts(AT[p]), delete=facts(AT[q] for q in PLACES if q != p))
        for p in PLACES
    ]
    where = facts(AT["shelf"]) if put_needs_shelf else facts()
    acts = [
        *moves,
        Action("pick up the book", facts(AT["door"]), facts(HOLD), add=facts(HOLD)),
        Action(
            "put the book on the shelf", where | {HOLD}, add=facts(ON_SHELF), delete=facts(HOLD)
        ),
    ]
    rooms = Invariant(facts(AT.values()), 1, 1, "one place at a time")
    return ActionDomain("study", facts(AT["door"]), tuple(acts), (rooms,))


def translated(*sentences: str) -> list[tuple[str, object]]:
    domain = flag_domain(f"{ON_SHELF},{HOLD}", ",".join(PLACES), HOUSEHOLD_PHRASES)
    out = []
    for s in sentences:
        found = translate_offline(s, domain)
        assert found.formula is not None, found.error
        out.append((s, found.formula))
    return out


def test_the_papers_cycle_is_a_conflict_only_with_the_domains_rules():
    named = translated(*CYCLE)
    report = check_conflicts(named, study(), GOAL)
    assert report.conflict and not report.undecided and report.witness is None
    assert set(report.minimal) == set(CYCLE) and report.minimal_exact
    # the alphabet check without the rules finds a trace: the book is on the shelf at once
    alphabet = one_hot(AT.values(), [ON_SHELF])
    assert jointly_satisfiable([f for _, f in named] + [Eventually(GOAL)], alphabet)
    # nor is it a conflict in a domain where the book can be put on the shelf from anywhere
    assert not check_conflicts(named, study(put_needs_shelf=False), GOAL).conflict


def test_a_conflict_through_a_precondition_only():
    named = translated("never go to the shelf")
    report = check_conflicts(named, study(), GOAL)
    assert report.conflict and report.minimal == ("never go to the shelf",) and report.goal_involved
    assert not check_conflicts(named, study(), None).conflict  # alone it is fine
    holding = [("never hold the book", parse(f"G !{HOLD}"))]
    assert check_conflicts(holding, study(put_needs_shelf=False), GOAL).conflict


def test_the_named_subset_is_minimal():
    extra = translated("you have to visit the door", "never go to the bed more than twice")
    named = translated(*CYCLE) + extra
    report = check_conflicts(named, study(), GOAL)
    assert report.conflict and set(report.minimal) == set(CYCLE)
    kept = [x for x in named if x[0] in report.minimal]
    for left_out in kept:  # every proper subset is satisfiable
        rest = [x for x in kept if x is not left_out]
        assert not check_conflicts(rest, study(), GOAL).conflict


def test_no_conflict_comes_with_a_witness_that_meets_everything():
    named = translated("don't go to the shelf before the desk", "you have to visit the bed")
    report = check_conflicts(named, study(), GOAL)
    assert not report.conflict and not report.undecided and report.witness is not None
    domain, state, trace = study(), study().initial, [study().labels(study().initial)]
    by_name = {a.name: a for a in domain.actions}
    for step in report.witness:
        assert by_name[step].applicable(state)
        state = by_name[step].apply(state)
        trace.append(domain.labels(state))
    assert GOAL.atom_labels() <= trace[-1]
    assert all(holds(f, trace) for _, f in named)
    assert list(report.witness_labels or ()) == trace


def test_a_search_stopped_by_its_cap_is_undecided_not_a_conflict():
    named = translated(*CYCLE)
    report = check_conflicts(named, study(), GOAL, max_states=1)
    assert report.undecided and not report.conflict and report.witness is None
    assert not find_execution(study(), [f for _, f in named], GOAL, max_states=1).exhaustive


def test_goal_reached_mid_way_ends_the_execution_when_asked():
    later = [("then the door", parse(f"G({ON_SHELF} -> F {AT['door']})"))]
    assert not check_conflicts(later, study(), GOAL).conflict
    assert check_conflicts(later, study(), GOAL, stop_at_goal=True).conflict


def test_bad_inputs_are_named():
    with pytest.raises(SpecError, match="temporal"):
        find_execution(study(), [], Eventually(GOAL))
    with pytest.raises(SpecError, match="invariant"):
        ActionDomain("bad", facts([AT["bed"], AT["desk"]]), (), study().invariants)
    assert conj(GOAL) == GOAL
