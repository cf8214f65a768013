"""The checks of a reply's calls as calls (offered tools, calls that run alone), the LTL reading of
parallel calls, arguments without repeated keys, and what a summary says of a refusal."""

from __future__ import annotations

import pytest

from governor.backends.messages import parse_arguments
from governor.core import Decision, DecisionKind, Trajectory, Verdict
from governor.errors import ConfigError
from governor.guard import policy_from_mapping
from governor.guard.call_checks import (
    OfferedToolsConstraint,
    ParallelCallsConstraint,
    folded,
    resembles,
)
from governor.guard.constraints import ToolLTLConstraint
from governor.guard.exchange import Conversation, Reply, ToolCall
from governor.guard.spec.tools_section import ToolsPolicy
from governor.guard.summary import decision_summary, public_error, public_reason

OFFERED = ("lookup_order", "refund", "verify_identity")


def schemas(*names: str) -> tuple[dict[str, object], ...]:
    return tuple({"type": "function", "function": {"name": n}} for n in names)


def calls(*names: str) -> Reply:
    return Reply(None, tuple(ToolCall(f"c{i}", n, "{}") for i, n in enumerate(names)))


def at(*tools: str) -> Trajectory:
    return Trajectory(Conversation((), schemas(*tools)))


@pytest.mark.parametrize(
    "name", ["Refund", "refund\u200b", "r\u0435fund", "\uff52\uff45\uff46\uff55\uff4e\uff44",
             "functions.refund", "refund\x00"],
)  # fmt: skip
def test_a_lookalike_is_not_offered_and_the_refusal_names_what_it_resembles(name: str) -> None:
    verdict = OfferedToolsConstraint().check(at(*OFFERED), calls(name))
    assert not verdict.admissible and "resembles the offered tool refund" in verdict.descriptor
    assert name not in verdict.descriptor
    assert folded(name) == "refund" and resembles(name, OFFERED) == "refund"


def test_the_offered_names_are_the_request_s_the_policy_s_or_both() -> None:
    check = OfferedToolsConstraint(ToolsPolicy(offered=("refund", "lookup_order")))
    assert check.check(at(), calls("refund")).admissible  # the policy's list alone
    assert not check.check(at("lookup_order"), calls("refund")).admissible  # both: the overlap
    assert check.check(at("refund", "send_email"), calls("refund")).admissible
    assert not check.check(at("refund", "send_email"), calls("send_email")).admissible
    assert OfferedToolsConstraint().check(at("refund"), calls("refund")).admissible
    nothing = OfferedToolsConstraint().check(at(), calls("refund"))  # neither: none offered
    assert not nothing.admissible and "offered: none" in nothing.descriptor
    assert OfferedToolsConstraint().check(at(), Reply("just text")).admissible


def test_a_tool_listed_not_in_parallel_runs_alone() -> None:
    check = ParallelCallsConstraint(("send_email",))
    assert check.check(at(), calls("send_email")).admissible
    assert check.check(at(), calls("refund", "lookup_order")).admissible
    assert not check.check(at(), calls("send_email", "lookup_order")).admissible


def test_the_tools_section_is_validated() -> None:
    with pytest.raises(ConfigError, match=r"tools\.not_in_parallel\[0\]: expected one of refund"):
        policy_from_mapping({"tools": {"offered": ["refund"], "not_in_parallel": ["email"]}})
    with pytest.raises(ConfigError, match=r"tools\.offered\[1\]: expected a tool name given once"):
        policy_from_mapping({"tools": {"offered": ["refund", "refund"]}})
    with pytest.raises(ConfigError, match="unknown key"):
        policy_from_mapping({"tools": {"parallel": []}})


def rule(formula: str) -> ToolLTLConstraint:
    policy = policy_from_mapping(
        {
            "propositions": {"verify": {"tool": "verify_identity"}, "refund": {"tool": "refund"},
                             "over": {"sum": {"tool": "refund", "path": "amount"}, "op": ">",
                                      "value": 200}},
            "ltl": [{"name": "r", "text": "the rule", "formula": formula}],
        }
    )  # fmt: skip
    return ToolLTLConstraint(policy.ltl[0], policy.vocabulary)


def test_a_sibling_does_not_count_as_an_earlier_call() -> None:
    verify_first = rule("!refund W verify")
    traj = Trajectory(Conversation(), memory={"r": verify_first.initial_state(None)})
    both = calls("verify_identity", "refund")
    verdict = verify_first.check(traj, both)
    assert not verdict.admissible and "call 2 of 2" in verdict.descriptor
    assert verify_first.check(traj, calls("verify_identity")).admissible


def test_the_calls_of_one_reply_add_up_in_a_running_sum() -> None:
    cap = rule("G !over")
    traj = Trajectory(Conversation(), memory={"r": cap.initial_state(None)})
    one = ToolCall("a", "refund", '{"amount": 150}')
    assert cap.check(traj, Reply(None, (one,))).admissible
    assert not cap.check(traj, Reply(None, (one, ToolCall("b", "refund", '{"amount": 150}')))).admissible  # fmt: skip


def test_a_repeated_key_at_any_depth_is_refused_without_quoting_the_text() -> None:
    for text in ('{"amount": 500, "amount": 10}', '{"a": {"b": 1, "b": 2}}'):
        with pytest.raises(ConfigError, match="without repeated keys") as caught:
            parse_arguments(text, "call")
        assert "500" not in str(caught.value) and '"b"' not in str(caught.value)
    with pytest.raises(ConfigError, match="found a JSON array"):
        parse_arguments("[1, 2]", "call")
    assert parse_arguments('{"a": {"b": 1}, "b": 2}', "call") == {"a": {"b": 1}, "b": 2}


def test_a_summary_names_a_refusal_by_kind_and_drops_error_messages() -> None:
    refused = Verdict.reject("r", 1.0, 'the tool call send_email({"body": "s3cr3t"}) violates')
    failed = Verdict.failed("v", "ConfigError: s3cr3t inside")
    decision = Decision(
        DecisionKind.FALLBACK,
        Reply("no"),
        (refused, failed),
        reason="policy failed: BackendError: s3cr3t in the answer; guard fallback acts",
        errors=("policy: BackendError: s3cr3t in the answer", "store: OSError: disk full"),
    )
    summary = decision_summary(decision, Reply("no"), session="s", t=0, seconds=0.0, kinds={"r": "rule"})  # fmt: skip
    assert "s3cr3t" not in repr(summary)
    assert [v["violation"] for v in summary["verdicts"]] == ["rule", "check_failed"]
    assert summary["errors"] == ["policy: BackendError", "store: OSError: disk full"]
    assert public_reason(decision) == "policy failed: BackendError; guard fallback acts"
    assert public_error("constraint r: ValueError: x") == "constraint r: ValueError"
