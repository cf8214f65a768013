"""The admin endpoints: pause, resume, end, reset and show a session, under their own key; the
operator's acts are kept in the session store (they survive a restart) and audited."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from fake_openai_server import FakeOpenAIServer
from serve_helpers import TOOLS, text, tool_call

from governor.guard import Guard
from governor.guard.facade import MAX_STORED_ID
from governor.serve import KeyChecker, create_app
from governor.serve.auth import digest
from governor.serve.local import serving

ADMIN_KEY = "admin-key-0123456789"
CLIENT_KEY = "client-key-0123456789"
ADMIN = {"Authorization": f"Bearer {ADMIN_KEY}"}
CLIENT = {"Authorization": f"Bearer {CLIENT_KEY}"}
DEFAULT_TEXT = "Sorry, I can't do that."  # the tools policy's default fallback
OWNER = digest(CLIENT_KEY)[:32]  # the client key's sessions are stored under this prefix


@pytest.fixture
def admin_base(guard: Guard) -> Iterator[str]:
    app = create_app(guard, keys=KeyChecker([digest(CLIENT_KEY)]), admin_key_hash=digest(ADMIN_KEY))
    with serving(app) as url:
        yield url


def chat(http: httpx.Client, session: str, messages: list[Any], **extra: Any) -> httpx.Response:
    body = {"model": "m", "messages": messages, "metadata": {"governor_session": session}, **extra}
    return http.post("/v1/chat/completions", json=body, headers=CLIENT)


def test_without_an_admin_key_the_routes_do_not_exist(base: str) -> None:
    with httpx.Client(base_url=base) as http:
        paused = http.post("/admin/sessions/s/pause", headers=ADMIN)
        shown = http.get("/admin/sessions/s", headers=ADMIN)
    for answer in (paused, shown):
        assert answer.status_code == 404
        assert answer.json()["error"]["code"] == "unknown_route"


@pytest.mark.parametrize(
    "headers",
    [{}, CLIENT, {"Authorization": "Bearer wrong"}, {"Authorization": f"Basic {ADMIN_KEY}"}],
)
def test_the_admin_routes_ask_for_the_admin_key(admin_base: str, headers: dict[str, str]) -> None:
    with httpx.Client(base_url=admin_base) as http:
        for method, path in [
            ("POST", "/admin/sessions/s/pause"),
            ("POST", "/admin/sessions/s/resume"),
            ("POST", "/admin/sessions/s/end"),
            ("POST", "/admin/sessions/s/reset"),
            ("GET", "/admin/sessions/s"),
        ]:
            answer = http.request(method, path, headers=headers)
            assert answer.status_code == 401, (method, path)
            assert answer.json()["error"]["code"] == "invalid_admin_key"
            assert ADMIN_KEY not in answer.text


def test_the_admin_key_is_not_a_client_key(admin_base: str) -> None:
    with httpx.Client(base_url=admin_base) as http:
        answer = http.post(
            "/v1/chat/completions",
            json={
                "model": "m",
                "messages": [{"role": "user", "content": "hi"}],
                "metadata": {"governor_session": "s"},
            },
            headers=ADMIN,
        )
    assert answer.status_code == 401


def test_a_paused_session_answers_the_default_text_without_the_upstream(
    admin_base: str, server: FakeOpenAIServer
) -> None:
    hello = [{"role": "user", "content": "hi"}]
    with httpx.Client(base_url=admin_base) as http:
        paused = http.post(
            f"/admin/sessions/{OWNER}/p1/pause",
            headers=ADMIN,
            json={"who": "dr. lee", "why": "review"},
        )
        assert paused.status_code == 200, paused.text
        body = paused.json()
        assert (body["session"], body["paused"], body["ended"]) == (f"{OWNER}/p1", True, False)
        assert (body["act"]["kind"], body["act"]["who"], body["act"]["why"]) == (
            "pause",
            "dr. lee",
            "review",
        )
        answer = chat(http, "p1", hello)
        streamed = chat(http, "p1", hello, stream=True)
        other = chat(http, "p2", hello)  # another session is not paused
        assert len(server.requests_to("/chat/completions")) == 1
        metrics = http.get("/metrics", headers=ADMIN).text  # with keys: a key reads them

        assert answer.status_code == 200, answer.text
        body = answer.json()
        assert body["choices"][0]["message"] == {"role": "assistant", "content": DEFAULT_TEXT}
        governor = body["governor"]
        assert governor["kind"] == "paused" and governor["paused"] is True
        assert governor["llm"]["calls"] == 0 and governor["session"] == "p1"
        assert answer.headers["X-Governor-Decision"] == "paused"
        events = [
            json.loads(line[len("data: ") :])
            for line in streamed.text.splitlines()
            if line.startswith("data: {")
        ]
        said = "".join(e["choices"][0]["delta"].get("content") or "" for e in events)
        assert said == DEFAULT_TEXT and events[-1]["governor"]["kind"] == "paused"
        assert other.json()["governor"]["kind"] == "execute"
        assert 'governor_decisions_total{kind="paused"} 2' in metrics

        shown = http.get(f"/admin/sessions/{OWNER}/p2", headers=ADMIN).json()
        assert shown["paused"] is False
        resumed = http.post(f"/admin/sessions/{OWNER}/p1/resume", headers=ADMIN)
        assert resumed.json()["paused"] is False
        assert resumed.json()["act"]["who"] == "admin"  # no body: the defaults
        again = chat(http, "p1", hello)
        audit = http.get(f"/admin/sessions/{OWNER}/p1", headers=ADMIN).json()
    assert again.json()["governor"]["kind"] == "execute"
    assert again.json()["choices"][0]["message"]["content"] == "answer 0"
    assert len(server.requests_to("/chat/completions")) == 2
    assert [a["kind"] for a in audit["operator"]] == ["pause", "resume"]
    assert [d.get("type") for d in audit["decisions"]][:2] == ["operator", "operator"]
    assert audit["t"] == 1 and len(audit["messages"]) == 2  # the paused turns left no trace


def test_acts_survive_a_restart_and_an_ended_session_takes_no_more(
    server: FakeOpenAIServer, tmp_path: Any
) -> None:
    from serve_helpers import tools_guard

    from governor.guard import SqliteStore

    hello = [{"role": "user", "content": "hi"}]

    def app() -> Any:
        guard = tools_guard(server.url, store=SqliteStore(tmp_path / "s.sqlite3"))
        keys = KeyChecker([digest(CLIENT_KEY)])
        return create_app(guard, keys=keys, admin_key_hash=digest(ADMIN_KEY))

    with serving(app()) as url, httpx.Client(base_url=url) as http:
        assert http.post(f"/admin/sessions/{OWNER}/e1/pause", headers=ADMIN).status_code == 200
    with serving(app()) as url, httpx.Client(base_url=url) as http:  # a new process's view
        held = chat(http, "e1", hello).json()
        ended = http.post(
            f"/admin/sessions/{OWNER}/e1/end", headers=ADMIN, json={"why": "session over"}
        )
        resumed = http.post(f"/admin/sessions/{OWNER}/e1/resume", headers=ADMIN)
        after = chat(http, "e1", hello).json()
        bad = http.post(f"/admin/sessions/{OWNER}/e2/pause", headers=ADMIN, json={"who": 7})
    assert held["governor"]["kind"] == "paused"
    assert ended.json()["ended"] is True and ended.json()["act"]["why"] == "session over"
    assert resumed.status_code == 409 and "ended" in resumed.json()["error"]["message"]
    assert after["governor"]["kind"] == "ended"
    assert after["choices"][0]["message"]["content"] == DEFAULT_TEXT
    assert server.requests_to("/chat/completions") == []
    assert bad.status_code == 400 and "who" in bad.json()["error"]["message"]


def test_show_gives_the_trajectory_and_reset_forgets_it(
    admin_base: str, server: FakeOpenAIServer
) -> None:
    server.script(
        "/chat/completions",
        tool_call("c1", "read_secret", key="db"),
        tool_call("c2", "send_email", to="x@y.z", body="hello"),
    )
    first = [{"role": "user", "content": "read the db secret"}]
    with httpx.Client(base_url=admin_base) as http:
        answer = chat(http, "r1", first, tools=TOOLS)
        call = answer.json()["choices"][0]["message"]
        assert call["tool_calls"][0]["function"]["name"] == "read_secret"

        shown = http.get(f"/admin/sessions/{OWNER}/r1", headers=ADMIN)
        assert shown.status_code == 200, shown.text
        body = shown.json()
        assert body["session"] == f"{OWNER}/r1" and body["t"] == 1 and body["paused"] is False
        assert [m["role"] for m in body["messages"]] == ["user", "assistant"]
        assert body["monitors"]["no_exfiltration"]["labels"] == ["read_secret"]
        assert body["monitors"]["no_exfiltration"]["kind"] == "ltl"
        assert [d["kind"] for d in body["decisions"]] == ["execute"]

        reset = http.post(f"/admin/sessions/{OWNER}/r1/reset", headers=ADMIN)
        assert reset.status_code == 200, reset.text
        assert reset.json()["reset"] is True
        after = http.get(f"/admin/sessions/{OWNER}/r1", headers=ADMIN).json()
        assert after["t"] == 0 and after["messages"] == []
        assert after["monitors"]["no_exfiltration"]["labels"] == []
        assert [d.get("type") for d in after["decisions"]][-1] == "reset"
        assert len(after["decisions"]) == 2  # the decision records stay

        # A new history is accepted, and the rule no longer remembers the secret.
        second = [{"role": "user", "content": "email x@y.z"}]
        mail = chat(http, "r1", second, tools=TOOLS).json()
    assert mail["governor"]["kind"] == "execute"
    assert mail["choices"][0]["message"]["tool_calls"][0]["function"]["name"] == "send_email"


def test_unknown_sessions_are_404_and_long_ids_400(admin_base: str, guard: Guard) -> None:
    with httpx.Client(base_url=admin_base) as http:
        shown = http.get("/admin/sessions/nobody", headers=ADMIN)
        reset = http.post("/admin/sessions/nobody/reset", headers=ADMIN)
        too_long = http.post(f"/admin/sessions/{'x' * (MAX_STORED_ID + 1)}/pause", headers=ADMIN)
        wrong_method = http.get("/admin/sessions/s/pause", headers=ADMIN)
    for answer in (shown, reset):
        assert answer.status_code == 404
        assert answer.json()["error"]["code"] == "unknown_session"
    assert guard.store.load("nobody") is None  # a reset of nobody writes nothing
    assert too_long.status_code == 400
    assert wrong_method.status_code == 404  # read as GET of the session "s/pause"


def test_a_session_id_with_a_slash_is_addressed(admin_base: str, server: FakeOpenAIServer) -> None:
    server.script("/chat/completions", text("Hello."))
    with httpx.Client(base_url=admin_base) as http:
        chat(http, "team/ann", [{"role": "user", "content": "hi"}])
        shown = http.get(f"/admin/sessions/{OWNER}/team/ann", headers=ADMIN)
        paused = http.post(f"/admin/sessions/{OWNER}/team/ann/pause", headers=ADMIN)
    assert shown.json()["session"] == f"{OWNER}/team/ann" and shown.json()["t"] == 1
    assert paused.json()["session"] == f"{OWNER}/team/ann"


@pytest.mark.parametrize(
    ("body", "status", "found"),
    [
        (b"\xff\xfe not utf-8", 400, "malformed JSON"),
        (b"[" * 100_000 + b"]" * 100_000, 413, "at most 8192 bytes"),
        (b'{"who": ' + b"[" * 3_000 + b"]" * 3_000 + b"}", 400, "malformed JSON"),
        (b'["pause"]', 400, "a JSON object"),
        (b'{"why": ""}', 400, "why"),
        # a proxy reading the first "who" and the service the last would log two operators
        (b'{"who": "ann", "why": "audit", "who": "mallory"}', 400, "'who' twice"),
        (b'{"who": NaN}', 400, "malformed JSON"),
    ],
)
def test_a_bad_operator_act_body_is_a_clear_error_and_nothing_is_recorded(
    admin_base: str, guard: Guard, body: bytes, status: int, found: str
) -> None:
    with httpx.Client(base_url=admin_base) as http:
        answer = http.post(f"/admin/sessions/{OWNER}/b1/pause", headers=ADMIN, content=body)
    assert answer.status_code == status, answer.text
    assert found in answer.json()["error"]["message"]
    assert guard.store.load(f"{OWNER}/b1") is None  # no act was recorded
