"""The supervised companion served: the official openai client sees the supervisor's decision in
the ``governor`` field; the admin ``mode`` and ``release`` acts are honoured and audited; the
supervisor's state survives a restart of the service."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
from fake_openai_server import API_KEY, FakeOpenAIServer
from serve_helpers import ROOT, text

from governor.config import ObserverConfig
from governor.guard import Guard, SessionStore, SqliteStore, load_policy
from governor.serve import create_app, with_upstream
from governor.serve.auth import digest
from governor.serve.local import serving

SUPERVISED = ROOT / "examples" / "policies" / "supervised.yaml"
ADMIN_KEY = "admin-key-0123456789"
ADMIN = {"Authorization": f"Bearer {ADMIN_KEY}"}


def supervised_guard(upstream_url: str, store: SessionStore | None = None) -> Guard:
    policy = with_upstream(load_policy(SUPERVISED), base_url=upstream_url, model="fake-model")
    policy = replace(
        policy,
        upstream=replace(policy.upstream, max_retries=0, timeout_s=5.0),
        observer=ObserverConfig(n_candidates=1, max_regenerations=0, time_budget_s=None),
    )
    return Guard.from_policy(policy, store=store)


@pytest.fixture
def served(server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
    guard = supervised_guard(server.url)
    with serving(create_app(guard, admin_key_hash=digest(ADMIN_KEY))) as url:
        yield url
    guard.backend.close()  # type: ignore[attr-defined]


def client(base: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{base}/v1", api_key="unused", max_retries=0)


def test_the_openai_client_sees_the_supervision_field(
    served: str, server: FakeOpenAIServer
) -> None:
    server.script("/chat/completions", text("Nice! Where did you walk?"),
                  text("I'm worried about you. Please call a crisis line now."))  # fmt: skip
    c = client(served)
    messages: list[Any] = [{"role": "user", "content": "I walked by the river today"}]
    first = c.chat.completions.create(
        model="m", messages=messages, metadata={"governor_session": "u1"}
    )
    sup = first.model_extra["governor"]["supervision"]  # type: ignore[index]
    assert (sup["kind"], sup["mode"], sup["rule"]) == ("act", "small_talk", None)
    messages += [
        {"role": "assistant", "content": first.choices[0].message.content},
        {"role": "user", "content": "I want to kill myself"},
    ]
    second = c.chat.completions.create(
        model="m", messages=messages, metadata={"governor_session": "u1"}
    )
    sup = second.model_extra["governor"]["supervision"]  # type: ignore[index]
    assert (sup["kind"], sup["mode"], sup["rule"]) == ("override", "crisis", "crisis_statement")
    assert second.choices[0].message.content.startswith("I'm worried about you")  # type: ignore[union-attr]
    sent = server.requests_to("/chat/completions")[-1].body["messages"][0]
    assert sent["role"] == "system" and "may be in danger" in sent["content"]


def test_admin_mode_and_release_are_honoured_and_audited(
    served: str, server: FakeOpenAIServer
) -> None:
    server.script("/chat/completions", text("In, and out."), text("Lovely, tell me more."))
    hello: list[Any] = [{"role": "user", "content": "what a sunny day"}]
    with httpx.Client(base_url=served) as http:
        no_mode = http.post("/admin/sessions/a1/mode", headers=ADMIN, json={"who": "kay"})
        unknown = http.post("/admin/sessions/a1/mode", headers=ADMIN, json={"mode": "nap"})
        held = http.post(
            "/admin/sessions/a1/mode",
            headers=ADMIN,
            json={"mode": "breathing", "who": "ms. kay", "why": "calm first"},
        )
        body = {"model": "m", "messages": hello, "metadata": {"governor_session": "a1"}}
        first = http.post("/v1/chat/completions", json=body).json()
        released = http.post("/admin/sessions/a1/release", headers=ADMIN, json={"who": "ms. kay"})
        body["messages"] = [*hello, first["choices"][0]["message"],
                            {"role": "user", "content": "I saw ducks"}]  # fmt: skip
        second = http.post("/v1/chat/completions", json=body).json()
        shown = http.get("/admin/sessions/a1", headers=ADMIN).json()
    assert no_mode.status_code == 400 and "mode" in no_mode.json()["error"]["message"]
    assert unknown.status_code == 409 and "found 'nap'" in unknown.json()["error"]["message"]
    assert held.status_code == 200 and held.json()["supervision"]["operator_mode"] == "breathing"
    sup = first["governor"]["supervision"]
    assert (sup["kind"], sup["mode"], sup["rule"]) == ("operator", "breathing", "operator")
    assert released.json()["supervision"]["operator_mode"] is None
    assert second["governor"]["supervision"]["kind"] == "act"
    audit = shown["supervision"]["audit"]
    assert [(a["kind"], a["who"], a["mode"]) for a in audit] == [
        ("set_mode", "ms. kay", "breathing"), ("release", "ms. kay", None)]  # fmt: skip
    assert shown["supervision"]["mode"] == second["governor"]["supervision"]["mode"]
    assert [a["kind"] for a in shown["operator"]] == ["set_mode", "release"]
    kinds = [d.get("type") for d in shown["decisions"]]
    assert kinds.count("operator") == 2


def test_a_policy_without_modes_refuses_the_mode_act(
    server: FakeOpenAIServer, guard: Guard
) -> None:
    app = create_app(guard, admin_key_hash=digest(ADMIN_KEY))
    with serving(app) as url, httpx.Client(base_url=url) as http:
        answer = http.post("/admin/sessions/t/mode", headers=ADMIN, json={"mode": "x"})
    assert answer.status_code == 409
    assert "has no modes" in answer.json()["error"]["message"]


def test_the_supervisor_state_survives_a_restart_of_the_service(
    server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
    db = tmp_path / "sessions.db"
    server.script("/chat/completions", text("Sure, no pressure."))
    messages: list[Any] = []
    for said in ("leave me alone", "go away"):
        guard = supervised_guard(server.url, SqliteStore(db))
        with serving(create_app(guard)) as url, httpx.Client(base_url=url) as http:
            messages.append({"role": "user", "content": said})
            out = http.post(
                "/v1/chat/completions",
                json={"model": "m", "messages": messages, "metadata": {"governor_session": "r"}},
            ).json()
            messages.append(out["choices"][0]["message"])
        guard.close()
    assert out["governor"]["supervision"]["kind"] == "disengage"
    guard = supervised_guard(server.url, SqliteStore(db))
    with serving(create_app(guard)) as url, httpx.Client(base_url=url) as http:
        messages.append({"role": "user", "content": "hm"})
        out = http.post(
            "/v1/chat/completions",
            json={"model": "m", "messages": messages, "metadata": {"governor_session": "r"}},
        ).json()
    guard.close()
    sup = out["governor"]["supervision"]
    assert (sup["kind"], sup["rule"]) == ("wait", "refusal_cooldown")
    assert len(server.requests_to("/chat/completions")) == 1
