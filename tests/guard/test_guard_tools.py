"""The four tool-call rules end to end through the Guard, with a scripted upstream."""

from __future__ import annotations

from guard_helpers import Conversation, call, tool_guard

from governor.core import DecisionKind


def names(reply: object) -> list[str]:
    return [c.name for c in reply.reply.tool_calls]  # type: ignore[attr-defined]


def test_no_send_email_after_read_secret_regenerates_then_falls_back() -> None:
    guard, backend = tool_guard([
        call("send_email", to="a@x.com", body="hi"),
        call("read_secret", key="db"),
        call("send_email", to="a@x.com", body="s3cr3t"),
        call("send_email", to="b@x.com", body="s3cr3t"),
    ])  # fmt: skip
    s, chat = guard.session("s1"), Conversation()
    first = s.respond_sync(chat.user("email hi to a"))
    assert names(first) == ["send_email"] and first.decision.kind is DecisionKind.EXECUTE
    chat.took(first)
    second = s.respond_sync(chat.user("read the db secret"))
    assert names(second) == ["read_secret"]
    chat.took(second, "s3cr3t")
    third = s.respond_sync(chat.user("now email it"))
    assert third.reply.tool_calls == () and third.decision.kind is DecisionKind.FALLBACK
    assert third.reply.content == (
        'I did not run that action: it would break the rule "never call send_email after'
        ' read_secret was called".'
    )
    assert third.summary["regenerations"] == 1 and third.summary["fallback"] is True
    assert third.summary["feedback"]["forced"] == ["refused by no_exfiltration"]
    assert third.summary["rejected"][0]["violation"] == "rule"
    assert "never call send_email" in backend.requests[-1][-1].content  # the regeneration note
    assert backend.remaining == 0


def test_verify_identity_before_transfer_regenerates_into_the_right_order() -> None:
    guard, backend = tool_guard(
        [call("transfer_funds", amount=10), call("verify_identity", user="ann")]
    )
    s, chat = guard.session("s"), Conversation()
    out = s.respond_sync(chat.user("send ann 10"))
    assert names(out) == ["verify_identity"]
    assert out.decision.kind is DecisionKind.EXECUTE and out.summary["regenerations"] == 1
    assert out.summary["rejected"][0]["constraint"] == "verify_first" and backend.remaining == 0
    assert (
        out.summary["llm"]["calls"] == 2 and out.summary["llm"]["stages"]["propose"]["calls"] == 2
    )


def test_the_running_sum_caps_transfers_in_total() -> None:
    guard, _ = tool_guard([
        call("verify_identity", user="ann"),
        call("transfer_funds", amount=60),
        call("transfer_funds", amount=41),
        "I can only send 40 more.",
        call("transfer_funds", amount=40),
    ])  # fmt: skip
    s, chat = guard.session("s"), Conversation()
    for ask in ("verify me", "send 60"):
        out = s.respond_sync(chat.user(ask))
        assert out.reply.tool_calls
        chat.took(out)
    refused = s.respond_sync(chat.user("send 41 more"))
    assert (
        refused.reply.content == "I can only send 40 more."
        and refused.summary["regenerations"] == 1
    )
    refusal = refused.decision.attempts[0].verdicts[0]
    assert any("never transfer more than 100 in total" in v.descriptor for v in refusal)
    chat.took(refused)
    ok = s.respond_sync(chat.user("then send 40"))
    assert names(ok) == ["transfer_funds"]  # 100 in total is not more than 100
    assert s.state.memory["transfer_cap"].sums == {"total_over_100": 100.0}


def test_after_delete_file_the_user_must_confirm_before_another_tool_call() -> None:
    guard, _ = tool_guard([
        call("delete_file", path="/tmp/a"),
        call("delete_file", path="/tmp/b"),
        "Deleted /tmp/a. Shall I delete /tmp/b too?",
        call("delete_file", path="/tmp/b"),
    ])  # fmt: skip
    s, chat = guard.session("s"), Conversation()
    out = s.respond_sync(chat.user("delete /tmp/a and /tmp/b"))
    assert names(out) == ["delete_file"]
    chat.took(out)
    ask = s.respond_sync(chat.messages)  # the tool result came back: the model goes on
    assert ask.reply.content == "Deleted /tmp/a. Shall I delete /tmp/b too?"
    assert ask.summary["rejected"][0]["constraint"] == "confirm_after_delete"
    chat.took(ask)
    go = s.respond_sync(chat.user("yes, go ahead"))
    assert names(go) == ["delete_file"] and go.decision.kind is DecisionKind.EXECUTE


def test_a_violating_call_is_never_returned_even_when_every_try_violates() -> None:
    guard, _ = tool_guard([call("transfer_funds", amount=5)] * 3)
    out = guard.session("s").respond_sync([{"role": "user", "content": "pay 5"}])
    assert out.reply.tool_calls == () and out.summary["fallback"] is True
    assert "call verify_identity before transfer_funds" in (out.reply.content or "")
    assert out.summary["reason"].startswith("no progress")


def test_a_malformed_tool_call_is_an_invalid_candidate() -> None:
    guard, _ = tool_guard(['{"tool_calls": [{"name": "x", "arguments": "[1, 2]"}]}', "fine"])
    out = guard.session("s").respond_sync([{"role": "user", "content": "hi"}])
    assert out.reply.content == "fine"
    assert out.summary["invalid_candidates"] == ["expected well-formed tool calls"]
    assert "a JSON object" in (out.decision.attempts[0].candidates[0].error or "")
