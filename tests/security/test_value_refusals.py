"""A safety value's refusal names the rule and the kind of violation, never what it found: the
call's arguments, the tool result it read its observation from, Q or the safest action stay in
the decision record. Through the official openai client, in front of the safety-value example
policy (a driving planner), whose refusal text quotes the refusal's ``{reason}``."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest
from fake_openai_server import API_KEY, FakeOpenAIServer
from security_helpers import ROOT, answer, arguments, client, served

from governor.guard import Guard, load_policy
from governor.serve import with_upstream

POLICY = ROOT / "examples" / "policies" / "safety_value.yaml"
TOOLS = [
    {"type": "function", "function": {"name": n, "parameters": {"type": "object"}}}
    for n in ("observe", "steer")
]
RISKY_STATE = [5.6, 1.5, -1.4]  # heading hard toward the right edge: straight is refused
SECRET = "s3cr3t-4111-1111"


def value_guard(upstream_url: str, *, recovery: bool) -> Guard:
    policy = with_upstream(load_policy(POLICY), base_url=upstream_url, model="fake-model")
    assert policy.safety_value is not None
    policy = replace(
        policy,
        upstream=replace(policy.upstream, max_retries=0, timeout_s=5.0),
        safety_value=replace(policy.safety_value, recovery=recovery),
    )
    return Guard.from_policy(policy)


@pytest.fixture
def plain(server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, Guard]]:
    """The policy without its recovery: a refusal answers with the refusal text."""
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
    guard = value_guard(server.url, recovery=False)
    with served(guard) as url:
        yield url, guard


def observed(content: str) -> list[dict[str, Any]]:
    fn = {"name": "observe", "arguments": "{}"}
    return [
        {"role": "user", "content": "drive to the goal"},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "o1", "type": "function", "function": fn}]},
        {"role": "tool", "tool_call_id": "o1", "content": content},
    ]  # fmt: skip


def ask(base: str, session: str, messages: list[dict[str, Any]]) -> tuple[str, str, str]:
    """The reply's text, the raw body and the headers of one request through the openai client."""
    raw = client(base, session).chat.completions.with_raw_response.create(
        model="fake-model",
        messages=messages,  # type: ignore[arg-type]
        tools=TOOLS,  # type: ignore[arg-type]
    )
    reply = raw.parse()
    assert reply.choices[0].message.tool_calls is None
    return reply.choices[0].message.content or "", raw.http_response.text, str(dict(raw.headers))


def records_of(guard: Guard, session: str) -> str:
    return repr(guard.store.records(session))  # type: ignore[attr-defined]


def test_the_tool_result_it_could_not_read_is_not_quoted(
    plain: tuple[str, Guard], server: FakeOpenAIServer
) -> None:
    base, guard = plain
    server.script("/chat/completions", answer(None, ("steer", arguments(direction="left"))))
    text, body, headers = ask(base, "v1", observed(f"the card is {SECRET}"))
    assert text.startswith('I did not steer that way: it would break the rule "keep the car')
    assert "expected JSON content in the latest tool message" in text  # the kind of violation
    assert SECRET not in body.replace(json.dumps(observed(f"the card is {SECRET}")), "")
    assert SECRET not in text and SECRET not in headers
    assert SECRET in records_of(guard, "v1")  # the record keeps what was found


def test_an_argument_that_is_not_an_action_is_not_quoted(
    plain: tuple[str, Guard], server: FakeOpenAIServer
) -> None:
    base, guard = plain
    steer = ("steer", arguments(direction=f"left {SECRET}"))
    server.script("/chat/completions", answer(None, steer), answer(None, steer))
    text, body, headers = ask(base, "v2", observed(json.dumps({"state": RISKY_STATE})))
    assert "direction: expected 'right' or 'straight' or 'left'" in text
    assert SECRET not in body and SECRET not in headers
    assert SECRET in records_of(guard, "v2")


def test_an_unsafe_action_is_refused_without_q_or_the_safest_action(
    plain: tuple[str, Guard], server: FakeOpenAIServer
) -> None:
    base, guard = plain
    steer = ("steer", arguments(direction="straight"))
    server.script("/chat/completions", answer(None, steer), answer(None, steer))
    text, body, _ = ask(base, "v3", observed(json.dumps({"state": RISKY_STATE})))
    assert text.endswith(
        "(the steer call leads toward failure: its safety value is at or below the margin)."
    )
    for detail in ("safest", "safety value -", "<= margin", "straight leads"):
        assert detail not in body
    assert "the safest action is direction=" in records_of(guard, "v3")
