"""Adaptive rigidity: the tolerance shrinks with the margin, and a repair is forced near zero."""

from __future__ import annotations

import dataclasses

import pytest

from governor.errors import SpecError
from governor.overlays import load_overlays, parse_overlays
from governor.overlays.constraint import overlay_constraints
from governor.overlays.features.dialogue import Turn
from governor.overlays.rigidity import TUTORING_OVERLAYS, Margin
from governor.overlays.rules import Overlay

BLUNT = "That answer is incorrect; try again."  # negativity 0.6
MILD = "Not quite. Check the second step."  # negativity 0.2
GENTLE = "You're close. Let's work through it step by step."  # encouraging, negativity 0
PLAIN = "The answer is 12."  # negativity 0, not encouraging


def harsh() -> Overlay:
    return next(o for o in load_overlays(TUTORING_OVERLAYS) if o.name == "harsh_feedback")


def after(*replies: str) -> tuple[Turn, ...]:
    turns: list[Turn] = [Turn("user", "I got 15?")]
    for r in replies:
        turns += [Turn("assistant", r), Turn("user", "I got 15?")]
    return tuple(turns)


def test_the_shipped_example_carries_a_margin() -> None:
    overlay = harsh()
    assert isinstance(overlay.margin, Margin)
    assert overlay.margin.bound == 0.35 and overlay.margin.window == 4
    assert overlay.margin.requires is not None and "encourag" in overlay.margin.repair


def test_the_tolerance_tightens_as_the_margin_shrinks() -> None:
    overlay = harsh()
    fixed = dataclasses.replace(overlay, margin=None)
    fresh, worn = after(), after(BLUNT)
    assert overlay.evaluate(fresh, BLUNT).admissible  # a large margin: a direct correction
    tight = overlay.evaluate(worn, BLUNT)
    assert not tight.admissible and "tolerance 0.30" in tight.descriptor
    assert fixed.evaluate(worn, BLUNT).admissible  # fixed rigidity keeps tolerating it
    assert overlay.evaluate(worn, MILD).admissible  # inside the bounds: still fine
    margin = overlay.margin
    assert isinstance(margin, Margin)
    tolerances = [margin.tolerance(overlay.epsilon, m) for m in (0.35, 0.2, 0.1, 0.0, -0.1)]
    assert tolerances == sorted(tolerances, reverse=True) and tolerances[-1] == 0.0


def test_near_zero_a_repair_is_forced_and_named() -> None:
    overlay = harsh()
    context = after(BLUNT, BLUNT)  # running 0.3 of 0.35: margin 0.05 <= repair_below
    for reply in (MILD, PLAIN):
        verdict = overlay.evaluate(context, reply)
        assert not verdict.admissible
        assert "near zero" in verdict.descriptor and "encourage the learner" in verdict.descriptor
    assert overlay.evaluate(context, GENTLE).admissible
    assert dataclasses.replace(overlay, margin=None).evaluate(context, PLAIN).admissible


def test_it_works_through_the_overlay_constraints_of_the_loop() -> None:
    from governor.core import Trajectory

    constraints = {c.name: c for c in overlay_constraints(load_overlays(TUTORING_OVERLAYS))}
    traj = Trajectory(after(BLUNT, BLUNT))
    assert not constraints["harsh_feedback"].check(traj, PLAIN).admissible


@pytest.mark.parametrize(
    ("margin", "message"),
    [
        ({"window": 3}, "missing 'bound'"),
        ({"bound": 0.3, "speed": 1}, "unknown key 'speed'"),
        ({"bound": 0.3, "requires": "nonsense >= 1"}, "unknown feature"),
        ({"bound": 0.3, "window": 0}, "window"),
        ([1, 2], "expected a mapping"),
    ],
)
def test_a_bad_margin_is_refused_naming_the_rule(margin: object, message: str) -> None:
    rule = {"name": "harsh", "feature": "negativity", "bounds": {"max": 0.2}, "epsilon": 0.1}
    rule |= {"kind": "prohibitory", "margin": margin}
    with pytest.raises(SpecError, match=message) as info:
        parse_overlays({"overlays": [rule]})
    assert "'harsh'" in str(info.value) and "margin" in str(info.value)
