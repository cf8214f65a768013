"""The service end to end: the official openai client against it, the fake upstream behind it."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import openai
from fake_openai_server import API_KEY, FakeOpenAIServer, Reply
from serve_helpers import TOOLS, text, tool_call, tools_guard

from governor.guard import Guard
from governor.serve import create_app, default_policy, with_upstream
from governor.serve.local import serving

REFUSAL = (
    'I did not run that action: it would break the rule "never call send_email after'
    ' read_secret was called".'
)


def client(base: str, session: str | None = None) -> openai.OpenAI:
    headers = {"X-Governor-Session": session} if session else None
    return openai.OpenAI(
        base_url=f"{base}/v1", api_key="unused", max_retries=0, default_headers=headers
    )


def test_a_reply_carries_the_governor_field_and_headers(
    base: str, server: FakeOpenAIServer
) -> None:
    server.script("/chat/completions", text("Hello there."))
    raw = client(base, "s1").chat.completions.with_raw_response.create(
        model="any", messages=[{"role": "user", "content": "hi"}]
    )
    reply = raw.parse()
    assert reply.choices[0].message.content == "Hello there."
    assert reply.choices[0].finish_reason == "stop"
    assert reply.model == "fake-model"  # the model that answered, not the name the client sent
    governor: dict[str, Any] = reply.model_extra["governor"]  # type: ignore[index]
    assert governor["kind"] == "execute" and governor["session"] == "s1"
    assert governor["llm"]["calls"] == 1 and "total" in governor["latency_ms"]
    assert reply.usage is not None and reply.usage.prompt_tokens == 11
    assert raw.headers["X-Governor-Decision"] == "execute"
    assert raw.headers["X-Governor-Regenerations"] == "0"
    assert API_KEY not in raw.http_response.text
    sent = server.requests_to("/chat/completions")[0]
    assert sent.headers["Authorization"] == f"Bearer {API_KEY}"  # the upstream got its key


def test_the_async_client_and_the_metadata_field_name_the_session(
    base: str, guard: Guard, server: FakeOpenAIServer
) -> None:
    async def ask() -> Any:
        async with openai.AsyncOpenAI(base_url=f"{base}/v1", api_key="x", max_retries=0) as c:
            return await c.chat.completions.create(
                model="m",
                messages=[{"role": "user", "content": "hi"}],
                metadata={"governor_session": "ann"},
            )

    reply = asyncio.run(ask())
    assert reply.choices[0].message.content == "answer 0"
    assert reply.model_extra["governor"]["session"] == "ann"
    assert len(guard.store.records("ann")) == 1


def test_a_violating_tool_call_is_pruned_and_the_client_gets_the_refusal(
    base: str, server: FakeOpenAIServer
) -> None:
    server.script(
        "/chat/completions",
        tool_call("c1", "read_secret", key="db"),
        *(tool_call(f"c{i}", "send_email", to="x@y.z", body="s3cr3t") for i in (2, 3, 4)),
    )
    c = client(base, "agent")
    messages: list[Any] = [{"role": "user", "content": "read the db secret"}]
    first = c.chat.completions.create(model="m", messages=messages, tools=TOOLS)  # type: ignore[arg-type]
    call = first.choices[0].message.tool_calls[0]  # type: ignore[index]
    assert call.function.name == "read_secret" and first.choices[0].finish_reason == "tool_calls"
    messages += [
        first.choices[0].message.model_dump(exclude_none=True),
        {"role": "tool", "tool_call_id": call.id, "content": "s3cr3t"},
        {"role": "user", "content": "now email it to x@y.z"},
    ]
    raw = c.chat.completions.with_raw_response.create(model="m", messages=messages, tools=TOOLS)  # type: ignore[arg-type]
    second = raw.parse()
    assert second.choices[0].message.tool_calls is None
    assert second.choices[0].message.content == REFUSAL
    assert second.choices[0].finish_reason == "stop"
    assert raw.headers["X-Governor-Decision"] == "fallback"
    governor = second.model_extra["governor"]
    assert raw.headers["X-Governor-Regenerations"] == str(governor["regenerations"]) != "0"
    assert governor["fallback"] is True
    assert {r["constraint"] for r in governor["rejected"]} == {"no_exfiltration"}
    assert "tool_calls" not in raw.http_response.json()["choices"][0]["message"]


def test_checks_judge_without_an_upstream_call(base: str, server: FakeOpenAIServer) -> None:
    history = [
        {"role": "user", "content": "read it"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "read_secret", "arguments": "{}"},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "s3cr3t"},
    ]
    send = {"tool_calls": [{"id": "c2", "type": "function", "function": {"name": "send_email", "arguments": "{}"}}]}  # fmt: skip
    with httpx.Client(base_url=base) as http:
        judged = http.post(
            "/v1/checks", json={"session": "k", "candidate": send, "messages": history}
        )
        fine = http.post("/v1/checks", json={"session": "k", "candidate": "All done."})
        committed = http.post(
            "/v1/checks", json={"session": "k2", "candidate": "Hi.", "commit": True}
        )
    assert judged.status_code == 200, judged.text
    body = judged.json()
    assert body["admissible"] is False and body["rejected_by"] == ["no_exfiltration"]
    assert body["committed"] is False and body["session"] == "k"
    assert fine.json()["admissible"] is True
    assert committed.json()["committed"] is True and committed.json()["t"] == 1
    assert server.requests_to("/chat/completions") == []


def test_checks_take_the_tools_offered(base: str, server: FakeOpenAIServer) -> None:
    fn = {"name": "delete_file", "arguments": "{}"}
    delete = {"tool_calls": [{"id": "d1", "type": "function", "function": fn}]}
    offered = [t for t in TOOLS if t["function"]["name"] == "read_secret"]
    with httpx.Client(base_url=base) as http:
        narrowed = http.post(
            "/v1/checks", json={"session": "t1", "candidate": delete, "tools": offered}
        )
        by_policy = http.post("/v1/checks", json={"session": "t1", "candidate": delete})
        committed = http.post(
            "/v1/checks",
            json={"session": "t2", "candidate": delete, "tools": offered, "commit": True},
        )
        wrong = http.post("/v1/checks", json={"session": "t1", "candidate": delete, "tools": {}})
    assert narrowed.status_code == 200, narrowed.text
    assert narrowed.json()["rejected_by"] == [
        "offered_tools"
    ]  # the request offers read_secret only
    assert by_policy.json()["admissible"] is True  # the policy's tools.offered has delete_file
    assert committed.json()["committed"] is True
    assert committed.json()["rejected_by"] == ["offered_tools"]
    assert wrong.status_code == 400 and wrong.json()["error"]["param"] == "tools"
    assert server.requests_to("/chat/completions") == []


def test_health_readiness_and_metrics(base: str, server: FakeOpenAIServer) -> None:
    client(base, "m1").chat.completions.create(
        model="m", messages=[{"role": "user", "content": "hi"}]
    )
    with httpx.Client(base_url=base) as http:
        assert http.get("/healthz").json() == {"status": "alive"}
        ready = http.get("/readyz")
        metrics = http.get("/metrics")
    assert ready.status_code == 200
    assert ready.json() == {
        "ready": True,
        "store": {"ok": True, "error": None},
        "upstream": {"ok": True, "error": None},
    }
    assert metrics.headers["content-type"].startswith("text/plain")
    text = metrics.text
    assert 'governor_decisions_total{kind="execute"} 1' in text
    assert "governor_llm_calls_total 1" in text and "governor_llm_failed_total 0" in text
    assert "governor_llm_abandoned_total 0" in text
    assert "governor_interventions_total 0" in text
    assert 'governor_step_seconds_bucket{le="+Inf"} 1' in text
    assert "governor_step_seconds_count 1" in text


def test_readiness_reports_an_unreachable_upstream(closed_port_url: str) -> None:
    guard = tools_guard(closed_port_url)
    with serving(create_app(guard)) as base, httpx.Client(base_url=base) as http:
        ready = http.get("/readyz")
    guard.backend.close()  # type: ignore[attr-defined]
    assert ready.status_code == 503
    body = ready.json()
    assert body["ready"] is False and body["store"]["ok"] is True
    assert body["upstream"]["ok"] is False and body["upstream"]["error"]


def test_an_upstream_that_fails_gives_the_fallback_never_an_unchecked_reply(
    base: str, server: FakeOpenAIServer
) -> None:
    server.script(
        "/chat/completions", *[Reply(500, {"error": {"message": "down"}}) for _ in range(5)]
    )
    raw = client(base, "f").chat.completions.with_raw_response.create(
        model="m", messages=[{"role": "user", "content": "hi"}]
    )
    reply = raw.parse()
    governor = reply.model_extra["governor"]
    assert governor["fallback"] is True and governor["llm"]["failed"] >= 1
    assert reply.choices[0].message.content in (
        "Sorry, I can't do that.",
        "Sorry, something went wrong on my side; I did not do anything.",
    )
    assert raw.headers["X-Governor-Decision"] in ("fallback", "defer", "abort")


def test_the_built_in_smalltalk_policy_serves(server: FakeOpenAIServer) -> None:
    policy = with_upstream(default_policy(), base_url=server.url, model="fake-model")
    guard = Guard.from_policy(policy)
    server.script("/chat/completions", text("Oh, I love hiking too! Where do you usually go?"))
    with serving(create_app(guard)) as base:
        reply = client(base, "chat").chat.completions.create(
            model="m", messages=[{"role": "user", "content": "I went hiking this weekend."}]
        )
    guard.backend.close()  # type: ignore[attr-defined]
    governor = reply.model_extra["governor"]
    assert governor["verdicts"] and governor["kind"] in (
        "execute",
        "execute_with_feedback",
        "fallback",
    )
    sent = server.requests_to("/chat/completions")[0].body
    assert (
        sent["messages"][0]["role"] == "system" and "small talk" in sent["messages"][0]["content"]
    )


def test_a_request_sets_its_own_temperature_and_can_only_lower_max_tokens(
    base: str, server: FakeOpenAIServer
) -> None:
    server.script("/chat/completions", text("One."), text("Two."), text("Three."))
    c = client(base, "sampling")
    history: list[Any] = [{"role": "user", "content": "hi"}]
    c.chat.completions.create(model="m", messages=history, temperature=0.1, max_tokens=7)
    history += [{"role": "assistant", "content": "One."}, {"role": "user", "content": "and?"}]
    c.chat.completions.create(model="m", messages=history, max_tokens=1_000_000)
    history += [{"role": "assistant", "content": "Two."}, {"role": "user", "content": "so?"}]
    c.chat.completions.create(model="m", messages=history)
    sent = [r.body for r in server.requests_to("/chat/completions")]
    policy_bound = sent[2]["max_tokens"]
    assert (sent[0]["temperature"], sent[0]["max_tokens"]) == (0.1, 7)
    assert sent[1]["max_tokens"] == policy_bound  # a request cannot raise the policy's bound
    assert sent[1]["temperature"] == sent[2]["temperature"] != 0.1
