"""The labelling of tool calls: conditions, bounded regexes, running sums, user propositions."""

from __future__ import annotations

import pytest

from governor.errors import ConfigError
from governor.guard import Reply, ToolCall, policy_from_mapping
from governor.guard.exchange import Message
from governor.guard.spec.propositions import MAX_MATCH_CHARS, Vocabulary

POLICY = {
    "propositions": {
        "email": {"tool": "send_email"},
        "outside": {"tool": "send_email", "where": {"path": "to.domain", "not_equals": "corp.com"}},
        "cc_boss": {"tool": "send_email", "where": [{"path": "cc.0", "equals": "boss"}]},
        "secret_text": {"tool": "*", "where": {"path": "body", "matches": "(?i)password"}},
        "big": {"tool": "transfer_funds", "where": {"path": "amount", "op": ">=", "value": 50}},
        "total_over": {
            "sum": {"tool": "transfer_funds", "path": "amount"},
            "op": ">",
            "value": 100,
        },
        "yes": {"user": r"(?i)^\s*(yes|confirm|go ahead)\b"},
    }
}


def vocab() -> Vocabulary:
    return policy_from_mapping(POLICY).vocabulary


def act(name: str, arguments: str) -> Reply:
    return Reply(None, (ToolCall("c1", name, arguments),))


def test_tool_name_paths_and_regexes() -> None:
    v = vocab()
    inside = act("send_email", '{"to": {"domain": "corp.com"}, "cc": ["boss"], "body": "hi"}')
    labels, _, _ = v.labels({}, inside, ())
    assert labels == {"email", "cc_boss"}
    outside = act("send_email", '{"to": {"domain": "evil.com"}, "body": "my PASSWORD is"}')
    assert v.labels({}, outside, ())[0] == {"email", "outside", "secret_text"}
    missing = act("send_email", "{}")
    assert v.labels({}, missing, ())[0] == {"email", "outside"}  # no domain: not inside corp.com
    far = act("note", '{"body": "' + "x" * MAX_MATCH_CHARS + ' password"}')
    assert "secret_text" not in v.labels({}, far, ())[0]  # regexes read a bounded prefix
    assert v.labels({}, Reply("plain text"), ())[0] == frozenset()


def test_numeric_comparison_reads_numbers_and_numeric_text() -> None:
    v = vocab()
    assert "big" in v.labels({}, act("transfer_funds", '{"amount": 50}'), ())[0]
    assert "big" in v.labels({}, act("transfer_funds", '{"amount": "75.5"}'), ())[0]
    assert "big" not in v.labels({}, act("transfer_funds", '{"amount": 49.9}'), ())[0]
    assert "big" not in v.labels({}, act("transfer_funds", '{"amount": true}'), ())[0]


def test_running_sum_is_pure_and_fails_closed_on_unknown_amounts() -> None:
    v = vocab()
    sums: dict[str, float] = {}
    labels, after, _ = v.labels(sums, act("transfer_funds", '{"amount": 60}'), ())
    assert sums == {} and after == {"total_over": 60.0} and "total_over" not in labels
    labels, after, _ = v.labels(after, act("transfer_funds", '{"amount": 41}'), ())
    assert after == {"total_over": 101.0} and "total_over" in labels
    for bad in ('{"amount": "lots"}', '{"amount": -500}', "{}"):
        labels, kept, _ = v.labels({"total_over": 10.0}, act("transfer_funds", bad), ())
        assert "total_over" in labels and kept == {"total_over": 10.0}


def test_user_propositions_read_the_latest_user_turn_since_the_last_action() -> None:
    v = vocab()
    said = (Message("user", "delete it"), Message("assistant", "sure?"))
    assert "yes" not in v.labels({}, Reply("ok"), said)[0]
    yes = (*said, Message("user", "Yes, go ahead"))
    assert "yes" in v.labels({}, Reply("ok"), yes)[0]
    tool_after = (*yes, Message("tool", "done", tool_call_id="c1"))
    assert "yes" in v.labels({}, Reply("ok"), tool_after)[0]
    stale = (*yes, Message("assistant", "done"))
    assert "yes" not in v.labels({}, Reply("ok"), stale)[0]
    assert "yes" not in v.labels({}, Reply("ok"), (Message("user", "no, not yes"),))[0]


def alone(v: Vocabulary) -> Vocabulary:
    """``v`` without the vocabulary it was restricted from (so it labels by itself)."""
    return Vocabulary(v.props, v.groups, v.trusted)


def test_a_rule_reads_the_plain_labels_computed_once_for_its_policy_and_they_are_its_own() -> None:
    v = vocab()
    said = (Message("user", "yes, send it"),)
    actions = [
        act("send_email", '{"to": {"domain": "evil.com"}, "cc": ["boss"], "body": "password"}'),
        act("transfer_funds", '{"amount": 70}'),
        Reply(None, (ToolCall("c1", "send_email", "{}"), ToolCall("c2", "transfer_funds", "{}"))),
        Reply("plain text"),
    ]
    rules = [frozenset({n}) for n in v.names] + [
        frozenset({"email", "total_over"}),
        frozenset({"yes", "big", "outside"}),
        v.names,
    ]
    for action in actions:
        first = v.plain_labels(action, said)
        assert first is not None and v.plain_labels(action, said) is first  # kept, not redone
        for names in rules:
            rule = v.restricted(names)
            for sums in ({}, {"total_over": 90.0}):
                own = alone(rule).labels(sums, action, said)
                assert rule.labels(sums, action, said) == own
                assert rule.labels(sums, action, said, kept=False) == own


def test_a_proposition_that_raises_fails_only_the_rules_that_read_it() -> None:
    v = vocab()
    broken = act("send_email", "not json")  # arguments a where condition cannot read
    assert v.plain_labels(broken, ()) is None
    email, outside = v.restricted(frozenset({"email"})), v.restricted(frozenset({"outside"}))
    assert email.labels({}, broken, ())[0] == {"email"}
    with pytest.raises(ConfigError, match="arguments"):
        outside.labels({}, broken, ())
    with pytest.raises(ConfigError, match="arguments"):
        alone(outside).labels({}, broken, ())


def test_labels_of_messages_that_could_change_are_not_kept() -> None:
    v = vocab()
    rule = v.restricted(frozenset({"yes"}))
    said = [Message("user", "no")]
    assert v.plain_labels(Reply("ok"), said) is None
    assert "yes" not in rule.labels({}, Reply("ok"), said)[0]
    said[0] = Message("user", "yes")
    assert "yes" in rule.labels({}, Reply("ok"), said)[0]
