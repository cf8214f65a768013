"""Overlay rules: loading and its errors, verdicts, kinds, scopes, and the runtime constraint."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from governor.core import (
    Candidate,
    DecisionKind,
    Feedback,
    Policy,
    Severity,
    Step,
    Trajectory,
)
from governor.errors import SpecError
from governor.observer import Observer
from governor.overlays import (
    Bounds,
    Overlay,
    OverlayConstraint,
    Turn,
    load_overlays,
    overlay_constraints,
    parse_overlays,
    repeated_violations,
)

BREVITY = {
    "name": "brevity",
    "feature": "word_count",
    "bounds": {"max": 10},
    "epsilon": 5,
    "kind": "prohibitory",
    "descriptor": "too long: {value:.0f} words, humans rarely exceed {max:.0f}",
    "feedback": "be brief",
}
COMFORT = {
    "name": "comfort_first",
    "feature": "suggestions",
    "condition": "user_affect < -0.3",
    "bounds": {"max": 0},
    "epsilon": 0,
    "kind": "transfer",
    "feedback": "acknowledge the feeling instead",
}
DETAIL = {
    "name": "detail",
    "feature": "word_count",
    "condition": "user_request >= 1",
    "bounds": {"max": 30},
    "epsilon": 0,
    "kind": "permissive",
    "target": "brevity",
}


def words(n: int) -> str:
    return " ".join(["word"] * n)


def user(text: str) -> tuple[Turn, ...]:
    return (Turn("user", text),)


def build(*rules: dict[str, Any]) -> dict[str, Overlay]:
    return {o.name: o for o in parse_overlays({"overlays": list(rules)}, where="test.yaml")}


def spec_error(rule: dict[str, Any], *others: dict[str, Any]) -> str:
    with pytest.raises(SpecError) as info:
        parse_overlays({"overlays": [*others, rule]}, where="test.yaml")
    return str(info.value)


def test_load_from_yaml_file(tmp_path: Path) -> None:
    path = tmp_path / "rules.yaml"
    path.write_text(yaml.safe_dump({"overlays": [BREVITY, DETAIL]}), encoding="utf-8")
    overlays = load_overlays(path)
    assert [o.name for o in overlays] == ["brevity", "detail"]
    assert overlays[0].permits[0].name == "detail"
    with pytest.raises(SpecError, match="cannot read"):
        load_overlays(tmp_path / "missing.yaml")


@pytest.mark.parametrize(
    ("change", "field", "says"),
    [
        ({"epsilon": None}, "epsilon", "missing"),
        ({"kind": "mandatory"}, "kind", "prohibitory or transfer or permissive"),
        ({"feature": "verbosity"}, "feature", "known features: .*word_count"),
        ({"bounds": {}}, "bounds", "min and/or max"),
        ({"bounds": {"min": 5, "max": 1}}, "bounds", "min <= max"),
        ({"epsilon": -1}, "epsilon", ">= 0"),
        ({"scope": "week"}, "scope", "last_n"),
        ({"condition": "user_affect <"}, "condition", "feature op number"),
        ({"condition": "mood < 1"}, "condition", "unknown feature 'mood'"),
        ({"priority": "high"}, "priority", "integer"),
        ({"severity": "dire"}, "severity", "low or medium"),
        ({"descriptor": "{words}"}, "descriptor", "KeyError"),
        ({"descriptor": "{value.x}"}, "descriptor", "AttributeError"),
        ({"feedback": "{value[0]}"}, "feedback", "TypeError"),
        (
            {"kind": "permissive", "condition": "word_count > 1", "target": ["a"]},
            "target",
            "name of an overlay",
        ),
        ({"colour": "red"}, "colour", "unknown field"),
    ],
)
def test_rule_errors_name_the_rule_and_the_field(change: dict, field: str, says: str) -> None:
    message = spec_error({**BREVITY, **change})
    assert "overlay 'brevity'" in message and f"field '{field}'" in message
    assert re.search(says, message), message


def test_kind_specific_and_file_level_errors() -> None:
    no_name = spec_error({k: v for k, v in BREVITY.items() if k != "name"})
    assert "overlay #1" in no_name and "field 'name'" in no_name
    assert "field 'condition'" in spec_error({**COMFORT, "condition": None})
    assert "field 'target'" in spec_error({**DETAIL, "target": "nope"}, BREVITY)
    assert "field 'feature'" in spec_error({**DETAIL, "feature": "questions"}, BREVITY)
    assert "defined more than once" in spec_error(BREVITY, BREVITY)
    trajectory_feature = {**BREVITY, "feature": "word_count_drift", "scope": {"last_n": 3}}
    assert "field 'scope'" in spec_error(trajectory_feature)
    with pytest.raises(SpecError, match="unknown key"):
        parse_overlays({"overlays": [BREVITY], "rules": []})
    with pytest.raises(SpecError, match="non-empty list"):
        parse_overlays({"overlays": []})


def test_calibrated_method_must_match_the_resources() -> None:
    rule = {**BREVITY, "feature": "assistance", "calibration": {"method": "lexicon"}}
    parse_overlays({"overlays": [rule]})
    with pytest.raises(SpecError, match=r"field 'calibration'.*recalibrate"):
        parse_overlays({"overlays": [rule]}, embed=lambda texts: np.ones((len(texts), 4)))


def test_verdicts_inside_within_tolerance_and_beyond() -> None:
    brevity = build(BREVITY)["brevity"]
    inside = brevity.evaluate((), words(8))
    assert inside.admissible and inside.deviation == 0 and inside.margin == 2
    assert not inside.descriptor
    near = brevity.evaluate((), words(13))
    assert near.admissible and near.deviation == 3 and near.needs_feedback
    assert near.descriptor == "too long: 13 words, humans rarely exceed 10; be brief"
    far = brevity.evaluate((), words(20))
    assert not far.admissible and far.deviation == 10 and far.severity is Severity.HIGH
    assert far.constraint == "brevity" and far.margin == -10


def test_lower_bounds() -> None:
    rule = {**BREVITY, "name": "tone", "feature": "tone", "bounds": {"min": -0.2}, "epsilon": 0.2}
    tone = build(rule)["tone"]
    assert tone.evaluate((), "What a lovely day!").admissible
    assert tone.evaluate((), "It is a bit sad.").deviation > 0
    assert not tone.evaluate((), "This is horrible, awful and I hate it.").admissible


@pytest.mark.parametrize("bad", ["", "   \n", None, 42, ["hi"]])
def test_empty_or_non_text_responses_are_rejected(bad: Any) -> None:
    for overlay in build(BREVITY, COMFORT).values():
        verdict = overlay.evaluate(user("hi"), bad)
        assert not verdict.admissible and "expected a text response" in verdict.descriptor


def test_transfer_rejects_a_class_only_under_its_condition() -> None:
    comfort = build(COMFORT)["comfort_first"]
    advice = "You should try going for a walk."
    calm = comfort.evaluate(user("I went for a walk today."), advice)
    assert calm.admissible and calm.deviation == 0
    upset = comfort.evaluate(user("I feel terrible and sad today."), advice)
    assert not upset.admissible and upset.severity is Severity.MEDIUM
    assert "acknowledge the feeling instead" in upset.descriptor
    assert comfort.evaluate(user("I feel terrible and sad."), "Oh no, I'm sorry.").admissible


def test_permissive_widens_its_target_under_its_condition() -> None:
    overlays = build(BREVITY, DETAIL)
    brevity, detail = overlays["brevity"], overlays["detail"]
    long = words(25)
    assert not brevity.evaluate(user("I had a nice day."), long).admissible
    assert brevity.evaluate(user("Can you tell me more about it?"), long).admissible
    note = detail.evaluate(user("Can you tell me more about it?"), long)
    assert note.admissible and "brevity widened" in note.descriptor
    assert not brevity.evaluate(user("Can you tell me more about it?"), words(40)).admissible
    assert [c.name for c in overlay_constraints(list(overlays.values()))] == ["brevity"]


def dialogue(*bot: str) -> tuple[Turn, ...]:
    turns: tuple[Turn, ...] = ()
    for text in bot:
        turns += (Turn("user", "hm"), Turn("assistant", text))
    return (*turns, Turn("user", "hm"))


def test_last_n_and_trajectory_scopes_average_the_assistant_turns() -> None:
    recent = build({**BREVITY, "name": "recent", "scope": {"last_n": 3}})["recent"]
    whole = build({**BREVITY, "name": "whole", "scope": "trajectory"})["whole"]
    ctx = dialogue(words(30), words(12), words(12))
    assert recent.value(ctx, words(6)) == pytest.approx(10)
    assert whole.value(ctx, words(6)) == pytest.approx(15)
    assert recent.evaluate(ctx, words(6)).admissible
    assert not recent.active(dialogue(words(30)), words(30))  # fewer than 3 turns so far
    assert recent.evaluate(dialogue(words(30)), words(6)).deviation == 0


def test_repeated_violations_counts_assistant_turns_past_the_bound() -> None:
    brevity = build(BREVITY)["brevity"]
    ctx = dialogue(words(12), words(3), words(40))
    assert repeated_violations(brevity, ctx) == 2
    assert repeated_violations(brevity, ctx, words(11)) == 3


def test_constraint_reads_the_dialogue_from_the_trajectory() -> None:
    constraint = OverlayConstraint(build(BREVITY)["brevity"])
    step = Step("hi", words(3), "tell me about your day", DecisionKind.EXECUTE)
    traj = Trajectory("tell me about your day", steps=(step,))
    verdict = constraint.check(traj, words(30))
    assert constraint.name == verdict.constraint == "brevity" and not verdict.admissible
    assert constraint.check(traj, None).admissible is False


class Replies(Policy):
    """Proposes the next scripted reply each time it is asked."""

    def __init__(self, replies: Sequence[str]) -> None:
        self.replies = list(replies)
        self.feedback: list[Feedback | None] = []

    def propose(self, traj: Trajectory, feedback: Feedback | None, n: int) -> list[Candidate[Any]]:
        self.feedback.append(feedback)
        return [Candidate(self.replies.pop(0))]


def test_the_default_overlays_steer_the_observer_away_from_assistant_talk() -> None:
    llm = "Great question! Here are some tips: 1) Rest. 2) Stretch. Let me know if you need more!"
    policy = Replies([llm, "Oh nice, walks are the best this time of year."])
    observer = Observer(policy, overlay_constraints(load_overlays()))
    decision = observer.step(observer.start("I just got back from a walk."))
    assert decision.kind in (DecisionKind.EXECUTE, DecisionKind.EXECUTE_WITH_FEEDBACK)
    assert decision.action == "Oh nice, walks are the best this time of year."
    forced = policy.feedback[1]
    assert forced is not None and "assistance" in forced.constraints
    assert "offering help" in forced.text


finite = st.floats(-1e6, 1e6, allow_nan=False)


@given(finite, finite, finite, finite)
def test_bounds_deviation_and_widening(a: float, b: float, c: float, v: float) -> None:
    bounds = Bounds(min(a, b), max(a, b))
    inside = bounds.min <= v <= bounds.max  # type: ignore[operator]
    assert (bounds.deviation(v) == 0) == inside
    margin = bounds.margin(v)
    assert margin is not None and (margin >= 0) == inside
    wider = bounds.widen(Bounds(max=c))
    assert wider.min is None and wider.max == max(bounds.max, c)  # type: ignore[type-var]
    assert wider.deviation(v) <= bounds.deviation(v)
    assert Bounds(min=a).widen(Bounds(min=b)).min == min(a, b)


def test_overlays_built_in_code_are_checked() -> None:
    with pytest.raises(SpecError, match="epsilon"):
        Overlay("x", "word_count", Bounds(max=1), epsilon=-1)
    with pytest.raises(SpecError, match="kind"):
        Overlay("x", "word_count", Bounds(max=1), kind="strict")  # type: ignore[arg-type]


def test_a_huge_reply_is_rejected_and_a_huge_turn_is_read_in_part() -> None:
    from governor.overlays.features.dialogue import MAX_TURN_CHARS, Turn

    overlay = build(BREVITY)["brevity"]
    verdict = overlay.evaluate((), "word " * (MAX_TURN_CHARS // 2))
    assert not verdict.admissible and "at most 20,000 characters" in verdict.descriptor
    assert len(Turn("user", "x" * 20_000_000).text) == MAX_TURN_CHARS
