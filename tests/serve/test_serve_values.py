"""The safety-value example policy end to end through the service: a driving planner behind the
fake upstream steers; ``/v1/chat/completions`` executes a safe steer, replaces an unsafe one by
the safest direction and refuses a steer without an observation; ``/v1/checks`` judges the same
without an upstream call."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import httpx
import numpy as np
import pytest
from fake_openai_server import API_KEY, FakeOpenAIServer
from serve_helpers import ROOT, tool_call

from governor.guard import Guard, load_policy
from governor.serve import create_app, with_upstream
from governor.serve.local import serving

POLICY = ROOT / "examples" / "policies" / "safety_value.yaml"
SAFE_STATE = [1.0, 1.5, 0.0]  # the start of the track, heading down it
RISKY_STATE = [5.6, 1.5, -1.4]  # heading hard toward the right edge
ACTIONS = ("right", "straight", "left")
TOOLS = [
    {"type": "function", "function": {"name": n, "parameters": {"type": "object"}}}
    for n in ("observe", "steer")
]


@pytest.fixture
def guard(server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch) -> Iterator[Guard]:
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
    policy = with_upstream(load_policy(POLICY), base_url=server.url, model="fake-model")
    policy = replace(policy, upstream=replace(policy.upstream, max_retries=0, timeout_s=5.0))
    made = Guard.from_policy(policy)
    yield made
    made.backend.close()  # type: ignore[attr-defined]


@pytest.fixture
def http(guard: Guard) -> Iterator[httpx.Client]:
    with serving(create_app(guard)) as url, httpx.Client(base_url=url, timeout=10.0) as client:
        yield client


def q_at(guard: Guard, state: list[float]) -> np.ndarray:
    spec = guard.policy.safety_value
    assert spec is not None
    return np.asarray(spec.learned({"state": np.asarray(state)}))


def observed(state: Any) -> list[dict[str, Any]]:
    """A conversation in which the planner called observe and got ``state`` (or that text)."""
    content = state if isinstance(state, str) else json.dumps({"state": state})
    fn = {"name": "observe", "arguments": "{}"}
    return [
        {"role": "user", "content": "drive to the goal"},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "o1", "type": "function", "function": fn}]},
        {"role": "tool", "tool_call_id": "o1", "content": content},
    ]  # fmt: skip


def chat(http: httpx.Client, session: str, messages: list[dict[str, Any]]) -> httpx.Response:
    body = {"model": "m", "messages": messages, "tools": TOOLS}
    r = http.post("/v1/chat/completions", json=body, headers={"X-Governor-Session": session})
    assert r.status_code == 200, r.text
    return r


def steer_of(r: httpx.Response) -> str | None:
    calls = r.json()["choices"][0]["message"].get("tool_calls") or []
    return json.loads(calls[0]["function"]["arguments"])["direction"] if calls else None


def test_a_safe_steer_is_executed(
    http: httpx.Client, guard: Guard, server: FakeOpenAIServer
) -> None:
    assert q_at(guard, SAFE_STATE)[1] > 0.0
    server.script("/chat/completions", tool_call("c1", "steer", direction="straight"))
    r = chat(http, "safe", observed(SAFE_STATE))
    assert steer_of(r) == "straight" and r.headers["X-Governor-Decision"] == "execute"
    assert r.json()["choices"][0]["finish_reason"] == "tool_calls"


def test_an_unsafe_steer_is_replaced_by_the_safest_and_the_next_step_reads_its_result(
    http: httpx.Client, guard: Guard, server: FakeOpenAIServer
) -> None:
    q = q_at(guard, RISKY_STATE)
    assert q[1] <= 0.0 < q.max()
    safest = ACTIONS[int(np.argmax(q))]
    server.script(
        "/chat/completions",
        tool_call("c1", "steer", direction="straight"),
        tool_call("c2", "steer", direction="straight"),
    )
    messages = observed(RISKY_STATE)
    r = chat(http, "risky", messages)
    body = r.json()
    governor = body["governor"]
    assert steer_of(r) == safest and r.headers["X-Governor-Decision"] == "fallback"
    assert governor["recovery"] is True and body["choices"][0]["finish_reason"] == "tool_calls"
    assert body["choices"][0]["message"]["tool_calls"][0]["id"] == "c1"
    (rejected,) = governor["rejected"]
    assert rejected["constraint"] == "stay_on_road" and rejected["violation"] == "safety_value"
    assert "descriptor" not in rejected  # the refused call stays in the decision record
    # the client ran the recovery; the car is now on the track's start, where straight is safe
    messages += [
        body["choices"][0]["message"],
        {"role": "tool", "tool_call_id": "c1", "content": json.dumps({"state": SAFE_STATE})},
    ]
    again = chat(http, "risky", messages)
    assert steer_of(again) == "straight" and again.headers["X-Governor-Decision"] == "execute"


def test_a_steer_without_an_observation_is_refused_with_the_reason(
    http: httpx.Client, server: FakeOpenAIServer
) -> None:
    server.script("/chat/completions", tool_call("c1", "steer", direction="left"))
    r = chat(http, "blind", observed("the car moved"))
    body = r.json()
    assert steer_of(r) is None and body["choices"][0]["finish_reason"] == "stop"
    assert body["governor"]["recovery"] is False
    content = body["choices"][0]["message"]["content"]
    assert content.startswith('I did not steer that way: it would break the rule "keep the car')
    assert "expected JSON content in the latest tool message" in content


def test_checks_judge_steers_without_an_upstream_call(
    http: httpx.Client, guard: Guard, server: FakeOpenAIServer
) -> None:
    def check(session: str, state: Any, direction: str) -> dict[str, Any]:
        fn = {"name": "steer", "arguments": json.dumps({"direction": direction})}
        candidate = {"tool_calls": [{"id": "c9", "type": "function", "function": fn}]}
        body = {"session": session, "candidate": candidate, "messages": observed(state)}
        r = http.post("/v1/checks", json=body)
        assert r.status_code == 200, r.text
        return dict(r.json())

    safe = check("k1", SAFE_STATE, "straight")
    unsafe = check("k2", RISKY_STATE, "straight")
    blind = check("k3", {"speed": 1}, "straight")
    assert safe["admissible"] is True and safe["rejected_by"] == []
    assert unsafe["admissible"] is False and unsafe["rejected_by"] == ["stay_on_road"]

    def value_of(answer: dict[str, Any]) -> str:
        (verdict,) = (v for v in answer["verdicts"] if v["constraint"] == "stay_on_road")
        return str(verdict["descriptor"])

    # the kind of violation, never the values found (Q, the safest action, the tool result)
    assert value_of(unsafe) == (
        "the steer call leads toward failure: its safety value is at or below the margin"
    )
    assert blind["admissible"] is False
    assert value_of(blind) == (
        "refused unchecked: the steer call: no observation to judge it on: expected 3 finite"
        " numbers (the driving state) at state in the latest tool result"
    )
    assert "speed" not in json.dumps(blind)
    assert server.requests_to("/chat/completions") == []
