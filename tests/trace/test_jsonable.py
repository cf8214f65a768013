"""to_jsonable's bounds (depth, cycles, shared values, precedence) and the decision record's
verdicts, each converted once."""

from __future__ import annotations

import dataclasses
import enum
import json
import math
from typing import Any

import numpy as np

from governor.core import Attempt, Candidate, Decision, DecisionKind, Severity, Verdict
from governor.trace import decision_from_record, decision_record, step_seconds, to_jsonable


@dataclasses.dataclass
class Node:
    child: Any


@dataclasses.dataclass(init=False)
class Tag(str):
    """A dataclass that is also a string: converted as a string."""

    weight: int = 1


def _levels(out: Any, step: Any) -> int:
    """How many containers deep ``out`` goes before a text (a cut) or a number."""
    n = 0
    while not isinstance(out, (str, int)):
        out, n = step(out), n + 1
    return n


def test_nesting_is_cut_at_depth_64_for_lists_dicts_and_dataclasses() -> None:
    deep_list: Any = 0
    deep_dict: Any = 0
    deep_node: Any = 0
    for _ in range(100):
        deep_list, deep_dict, deep_node = [deep_list], {"k": deep_dict}, Node(deep_node)
    assert _levels(to_jsonable(deep_list), lambda x: x[0]) == 64
    assert _levels(to_jsonable(deep_dict), lambda x: x["k"]) == 64
    assert _levels(to_jsonable(deep_node), lambda x: x["child"]) == 64
    assert to_jsonable(deep_node)
    shallow: Any = 0
    for _ in range(10):
        shallow = [shallow]
    assert _levels(to_jsonable(shallow), lambda x: x[0]) == 10  # the 0 at the bottom survives


def test_a_value_shared_without_a_cycle_is_converted_everywhere() -> None:
    shared = [1, {"x": math.inf}]
    out = to_jsonable({"a": shared, "b": (shared, Node(shared))})
    converted = [1, {"x": "Infinity"}]
    assert out == {"a": converted, "b": [converted, {"child": converted}]}


def test_cycles_through_dataclasses_become_text() -> None:
    node = Node(None)
    node.child = [node]
    out = to_jsonable(node)
    assert isinstance(out["child"][0], str) and out["child"][0].startswith("Node(")
    json.dumps(out, allow_nan=False)


def test_a_dataclass_that_is_also_a_string_is_converted_as_the_string() -> None:
    assert to_jsonable({"tag": Tag("blue")}) == {"tag": "blue"}
    assert to_jsonable(Node(np.float64(0.5))) == {"child": 0.5}


def test_each_verdict_record_is_its_own_dict_with_the_severity_by_name() -> None:
    shared = Verdict.allow("tone", margin=math.inf, descriptor="warm")
    odd = Verdict("brevity", True, np.float64(0.25), confidence=1, severity=Severity.MEDIUM)
    row = (shared, odd)
    decision = Decision(
        DecisionKind.EXECUTE_WITH_FEEDBACK,
        "hi",
        row,
        attempts=(Attempt((Candidate("hi"), Candidate("hey")), (row, row), None, 0, None),),
    )
    record = decision_record(decision, episode="e", t=3)
    first, second = record["attempts"][0]["verdicts"]
    records = [*record["verdicts"], *first, *second]
    assert len({id(r) for r in records}) == len(records) == 6
    assert record["verdicts"] == first == second
    assert record["verdicts"][0]["margin"] == "Infinity"
    assert record["verdicts"][0]["severity"] == "LOW"
    assert record["verdicts"][1] == {
        "constraint": "brevity",
        "admissible": True,
        "deviation": 0.25,
        "margin": None,
        "confidence": 1,
        "descriptor": "",
        "severity": "MEDIUM",
        "error": None,
        "cause": None,
        "repair": None,
    }
    back = decision_from_record(json.loads(json.dumps(record)))
    assert back.verdicts[0] == shared and back.attempts[0].verdicts[1][1].deviation == 0.25
    record["verdicts"][0]["descriptor"] = "changed"
    assert first[0]["descriptor"] == second[0]["descriptor"] == "warm"


def test_a_verdict_met_again_in_later_records_has_the_record_of_its_fields_then() -> None:
    """Verdict records kept across decision records (checks memoise their verdicts) equal a
    fresh conversion of each verdict as it is when the record is made; each record gets its own
    dicts; a verdict holding a mutable value is converted again each time; a kept verdict's id
    is not taken by a new verdict while it is kept."""

    def fresh(v: Verdict) -> dict[str, Any]:
        return {**to_jsonable(v), "severity": v.severity.name}

    memo = Verdict.allow("tone", margin=-math.inf, descriptor="warm")
    repair = {"path": "a"}
    mutable = Verdict.reject("write", 1.0, descriptor="no", repair=repair)
    decision = Decision(DecisionKind.EXECUTE, "hi", (memo, mutable))
    one = decision_record(decision, episode="e", t=1)
    repair["path"] = "b"
    two = decision_record(decision, episode="e", t=2)
    assert one["verdicts"] == [fresh(memo), {**fresh(mutable), "repair": {"path": "a"}}]
    assert two["verdicts"] == [fresh(memo), fresh(mutable)]
    assert two["verdicts"][1]["repair"] == {"path": "b"}
    one["verdicts"][0]["descriptor"] = "changed"
    assert decision_record(decision, episode="e", t=3)["verdicts"][0] == fresh(memo)
    for k in range(3000):  # many short-lived verdicts: ids reused once a verdict is gone
        v = Verdict.allow(f"rule{k % 7}", margin=float(k), confidence=k % 5 / 4)
        rows = decision_record(Decision(DecisionKind.EXECUTE, "a", (v,)), episode="e", t=k)
        assert rows["verdicts"] == [fresh(v)], k
        del v


@dataclasses.dataclass
class Row:
    a: Any
    b: Any = 0.5


class Level(enum.IntEnum):
    HIGH = 2


class Bag(dict):  # type: ignore[type-arg]
    """A dict subclass: converted as a mapping, its values through the general path."""


def test_plain_children_of_lists_dicts_and_dataclasses_keep_their_conversion() -> None:
    odd = [math.nan, math.inf, -math.inf, np.float64(1.5), np.int64(3), Level.HIGH, True, 2**70]
    want = ["NaN", "Infinity", "-Infinity", 1.5, 3, 2, True, 2**70]
    assert to_jsonable(odd) == want
    assert to_jsonable(tuple(odd)) == want
    assert to_jsonable({str(i): v for i, v in enumerate(odd)}) == {
        str(i): v for i, v in enumerate(want)
    }
    assert to_jsonable(Bag(x=math.inf, y=1.0)) == {"x": "Infinity", "y": 1.0}
    assert to_jsonable([Row(v) for v in odd]) == [{"a": v, "b": 0.5} for v in want]
    assert to_jsonable(Row(-0.0, 1e308)) == {"a": -0.0, "b": 1e308}
    out = to_jsonable({"k": [Row({1: (2.5, None)})]})
    assert out == {"k": [{"a": {"1": [2.5, None]}, "b": 0.5}]}
    assert type(to_jsonable([np.float64(2.0)])[0]) is float
    assert type(to_jsonable(Row(Level.HIGH))["a"]) is int


def test_an_object_that_says_it_is_a_string_is_converted_as_one() -> None:
    class Posing:
        __class__ = str  # type: ignore[assignment]

        def __str__(self) -> str:
            return "posing"

    assert to_jsonable([Posing(), {"k": Posing()}]) == ["posing", {"k": "posing"}]


def _record_in_one_walk(
    decision: Decision, *, episode: Any, t: Any, extra: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The decision record as one to_jsonable walk of the whole record makes it (the verdicts
    placed after, severity by name): what decision_record, which converts each value where it
    sits, must equal."""
    total = decision.total_usage
    record = to_jsonable(
        {
            "type": "decision",
            "episode": episode,
            "t": t,
            "kind": decision.kind,
            "action": decision.action,
            "reason": decision.reason,
            "cause": decision.cause,
            "errors": decision.errors,
            "latency_ms": {stage: 1000.0 * s for stage, s in decision.latency.items()},
            "step_latency_ms": 1000.0 * step_seconds(decision.latency),
            "usage": dict(decision.usage),
            "usage_total": {**to_jsonable(total), "tokens": total.tokens},
            "feedback": decision.feedback,
            "verdicts": None,
            "attempts": [
                {
                    "candidates": a.candidates,
                    "verdicts": None,
                    "feedback": a.feedback,
                    "chosen": a.chosen,
                    "cause": a.cause,
                }
                for a in decision.attempts
            ],
            "intervened": decision.intervened,
            "regenerations": decision.regenerations,
            "extra": dict(extra or {}),
        }
    )

    def verdict(v: Verdict) -> dict[str, Any]:
        return {**to_jsonable(v), "severity": v.severity.name}

    record["verdicts"] = [verdict(v) for v in decision.verdicts]
    for out, a in zip(record["attempts"], decision.attempts, strict=True):
        out["verdicts"] = [[verdict(v) for v in row] for row in a.verdicts]
    return record


def test_a_decision_record_is_what_one_walk_of_the_whole_record_makes() -> None:
    from governor.backends.messages import ToolCall
    from governor.core import Feedback, FeedbackKind, RejectionCause
    from governor.guard.exchange import Reply
    from governor.usage import Usage

    deep: Any = "bottom"
    for _ in range(70):  # cut at depth 64 counted from the record, not from the extra
        deep = [deep]
    cyclic: list[Any] = [1]
    cyclic.append(cyclic)
    calls = (ToolCall("c1", "read", '{"path": "a"}'),)
    refused = Verdict("tone", False, 2.0, margin=-math.inf, cause=RejectionCause.ERROR)
    odd = Verdict("brevity", True, np.float64(0.25), severity=Severity.HIGH, repair={1: Row(2)})
    row = (Verdict.allow("ok", margin=0.5), refused, odd)
    feedback = Feedback(FeedbackKind.FORCED, "be kind", ("tone",))
    decisions = [
        Decision(DecisionKind.EXECUTE, Reply("hi"), row[:1], latency={"propose": 0.002}),
        Decision(
            DecisionKind.EXECUTE_WITH_FEEDBACK,
            Reply(None, calls),
            row,
            feedback=feedback,
            reason="admissible",
            cause=RejectionCause.ERROR,
            attempts=(
                Attempt((Candidate(Reply("no")),), (row,), None, None, RejectionCause.ERROR),
                Attempt(
                    (Candidate(Reply(None, calls), "text", None, math.inf),),
                    (row,),
                    feedback,
                    0,
                    None,
                ),
            ),
            latency={"propose": 0.001, "check": math.inf},
            usage={"propose": Usage(2, 10, 5, 0.5, 1, 0)},
            errors=("upstream: late",),
        ),
    ]
    extras = [
        None,
        {"reply": {"content": None, "tool_calls": [{"id": "c1"}]}, "user": "u"},
        {"deep": deep, "cyclic": cyclic, "level": Level.HIGH, "n": np.int64(7), 3: {4.5}},
    ]
    refusal = Verdict.reject("tone", 1.5, "too sharp", margin=math.inf)
    refused = Attempt((Candidate(Reply("no"), "no", None, -0.5),), ((refusal,),), None, None, None)
    invalid = Candidate.invalid("{", "parse: ValueError: bad")
    decisions += [
        Decision(
            DecisionKind.REGENERATE,
            None,
            (refusal,),
            feedback=feedback,
            attempts=(refused, Attempt((invalid,), ((),), feedback, None, RejectionCause.ERROR)),
        ),
        Decision(
            DecisionKind.FALLBACK,
            Reply("sorry"),
            (),
            reason="nothing admissible",
            cause=RejectionCause.EMPTY,
            attempts=(refused,),
            latency={"propose": -math.inf},
            errors=("check: RuntimeError: x", "store: OSError: disk"),
        ),
    ]
    for decision in [*decisions, *decisions]:  # the second time with its verdicts met before
        for extra in extras:
            for episode, t in (("e", 3), (Level.HIGH, np.int64(4))):
                made = decision_record(decision, episode=episode, t=t, extra=extra)
                assert made == _record_in_one_walk(decision, episode=episode, t=t, extra=extra)
                assert json.dumps(made, sort_keys=True) == json.dumps(
                    _record_in_one_walk(decision, episode=episode, t=t, extra=extra),
                    sort_keys=True,
                )
