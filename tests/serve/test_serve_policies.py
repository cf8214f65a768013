"""Several policies served from one process (``governor serve --policy NAME=FILE ...``): chosen by
the request's model or a header, listed by ``/v1/models``, sessions namespaced by policy, reloaded
from their files without a restart (a broken file keeps the old policy); the decision log, the
per-policy and per-rule counters, the ``developer`` role and ``user`` as the end-user id, all
through the official client."""

from __future__ import annotations

import gc
import io
import json
import logging
import os
import re
import signal
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
from fake_openai_server import API_KEY, FakeOpenAIServer
from rich.console import Console
from serve_helpers import TOOLS, TOOLS_POLICY, tool_call

from governor.cli import build_parser
from governor.cli.serve import YOUNG_OBJECTS, _settle_heap, build_app, watch_policies
from governor.errors import ConfigError
from governor.serve.local import serving
from governor.serve.policies import ServedPolicies

SAID = [{"role": "user", "content": "hi"}]


def policy_text(upstream_url: str, model: str, default: str = "Sorry, I can't do that.") -> str:
    """The example tool policy in front of the fake upstream, under the upstream model ``model``."""
    body = TOOLS_POLICY.read_text()
    body = body.replace("http://127.0.0.1:8000/v1", upstream_url)
    body = body.replace("model: my-agent-model", f"model: {model}\n  max_retries: 0")
    return body.replace("default: Sorry, I can't do that.", f"default: {default}")


def write(path: Path, content: str) -> None:
    """Write ``content`` so that a poll sees it changed (its size or modification time)."""
    before = path.stat().st_mtime_ns if path.exists() else 0
    path.write_text(content)
    if path.stat().st_mtime_ns == before:
        os.utime(path, ns=(before + 1_000_000, before + 1_000_000))


def app_of(argv: list[str], console: Console | None = None) -> Any:
    args = build_parser().parse_args(["serve", "--store", "memory", *argv])
    return build_app(args, console or Console(file=io.StringIO()))


@pytest.fixture
def files(tmp_path: Path, server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
    (tmp_path / "a.yaml").write_text(policy_text(server.url, "model-a"))
    (tmp_path / "b.yaml").write_text(policy_text(server.url, "model-b"))
    return tmp_path


@pytest.fixture
def served(files: Path) -> Iterator[tuple[str, ServedPolicies]]:
    app = app_of(["--policy", f"a={files / 'a.yaml'}", "--policy", f"b={files / 'b.yaml'}"])
    with serving(app) as base:
        yield base, app.state.service.policies


def client(base: str, **headers: str) -> openai.OpenAI:
    return openai.OpenAI(
        base_url=f"{base}/v1", api_key="x", max_retries=0, default_headers=headers or None
    )


def session(name: str) -> dict[str, Any]:
    return {"metadata": {"governor_session": name}}


def test_the_model_or_the_header_chooses_the_policy_and_models_lists_them(
    served: tuple[str, ServedPolicies], server: FakeOpenAIServer
) -> None:
    base, _ = served
    c = client(base)
    listed = c.models.list()
    assert [m.id for m in listed.data] == ["governor/a", "governor/b"]
    assert all(m.owned_by == "governor" and m.created > 0 for m in listed.data)
    # the reply's model is the one that answered (the fake upstream echoes the model it was asked)
    assert c.chat.completions.create(model="governor/a", messages=SAID).model == "model-a"  # type: ignore[arg-type]
    assert c.chat.completions.create(model="b", messages=SAID).model == "model-b"  # type: ignore[arg-type]
    by_header = client(base, **{"X-Governor-Policy": "a"})
    assert by_header.chat.completions.create(model="gpt-4o", messages=SAID).model == "model-a"  # type: ignore[arg-type]
    assert [r.body["model"] for r in server.requests_to("/chat/completions")] == [
        "model-a",
        "model-b",
        "model-a",
    ]
    with pytest.raises(openai.NotFoundError) as caught:
        c.chat.completions.create(model="gpt-4o", messages=SAID)  # type: ignore[arg-type]
    error = caught.value.body
    assert isinstance(error, dict) and error["code"] == "model_not_found"
    assert "governor/a, governor/b" in error["message"] and "'gpt-4o'" in error["message"]
    with pytest.raises(openai.NotFoundError):
        client(base, **{"X-Governor-Policy": "c"}).chat.completions.create(
            model="governor/a",
            messages=SAID,  # type: ignore[arg-type]
        )
    assert len(server.requests_to("/chat/completions")) == 3  # a refused request calls nothing


def test_the_same_session_id_under_two_policies_is_two_sessions(
    served: tuple[str, ServedPolicies],
) -> None:
    base, policies = served
    c = client(base)
    first = c.chat.completions.create(model="governor/a", messages=SAID, **session("s"))  # type: ignore[arg-type]
    other = [{"role": "user", "content": "something else entirely"}]
    second = c.chat.completions.create(model="governor/b", messages=other, **session("s"))  # type: ignore[arg-type]
    assert (
        first.model_extra["governor"]["session"] == "s" == second.model_extra["governor"]["session"]
    )
    store = next(iter(policies)).guard.store
    assert store.load("a:s")["messages"][0]["content"] == "hi"  # type: ignore[index]
    assert store.load("b:s")["messages"][0]["content"] == "something else entirely"  # type: ignore[index]
    assert store.load("s") is None


def test_a_changed_file_is_used_by_the_next_request_and_a_broken_one_keeps_the_old(
    served: tuple[str, ServedPolicies], files: Path, server: FakeOpenAIServer, caplog: Any
) -> None:
    base, policies = served
    c = client(base)
    stop = policies.watch(0.02)
    try:
        assert c.chat.completions.create(model="governor/b", messages=SAID).model == "model-b"  # type: ignore[arg-type]
        guard_a = policies.get("a").guard  # type: ignore[union-attr]
        write(files / "b.yaml", policy_text(server.url, "model-b2"))
        wait_for(lambda: policies.reloads == 1)
        assert c.chat.completions.create(model="governor/b", messages=SAID).model == "model-b2"  # type: ignore[arg-type]
        assert policies.get("a").guard is guard_a  # type: ignore[union-attr]  # untouched
        with caplog.at_level(logging.WARNING, logger="governor.serve.policies"):
            write(files / "b.yaml", policy_text(server.url, "model-b3") + "\nltl: [{name: 3}]\n")
            wait_for(lambda: "not reloaded, the old policy stays" in caplog.text)
        assert "b.yaml" in caplog.text and "ltl" in caplog.text  # says which file and why
        assert c.chat.completions.create(model="governor/b", messages=SAID).model == "model-b2"  # type: ignore[arg-type]
        assert policies.reloads == 1
    finally:
        stop()


def test_sighup_reloads_every_policy(
    served: tuple[str, ServedPolicies], files: Path, server: FakeOpenAIServer
) -> None:
    base, policies = served
    # a change the poll cannot see (same size, same modification time): only SIGHUP reloads it
    path = files / "a.yaml"
    stat = path.stat()
    path.write_text(policy_text(server.url, "model-A"))
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    stop = watch_policies(policies, 3600)
    try:
        os.kill(os.getpid(), signal.SIGHUP)
        wait_for(lambda: policies.reloads == 2)
    finally:
        stop()
    assert signal.getsignal(signal.SIGHUP) is signal.SIG_DFL  # put back
    reply = client(base).chat.completions.create(model="governor/a", messages=SAID)  # type: ignore[arg-type]
    assert reply.model == "model-A"


def test_a_refusal_is_logged_counted_and_recorded_with_the_end_user(
    served: tuple[str, ServedPolicies], server: FakeOpenAIServer, caplog: Any
) -> None:
    base, policies = served
    server.script(
        "/chat/completions",
        tool_call("c1", "read_secret"),
        tool_call("c2", "send_email", to="x"),
        tool_call("c3", "send_email", to="x"),
        tool_call("c4", "send_email", to="x"),
    )
    c = client(base)
    asked = [{"role": "developer", "content": "Be brief."}, *SAID]
    with caplog.at_level(logging.INFO, logger="governor.decisions"):
        first = c.chat.completions.create(
            model="governor/a",
            messages=asked,
            tools=TOOLS,
            user="ann",
            **session("t"),  # type: ignore[arg-type]
        )
        said = [*asked, first.choices[0].message.model_dump(exclude_none=True)]
        said.append({"role": "tool", "tool_call_id": "c1", "content": "s3cr3t"})
        second = c.chat.completions.create(
            model="governor/a",
            messages=said,
            tools=TOOLS,
            user="ann",
            **session("t"),  # type: ignore[arg-type]
        )
    assert first.choices[0].message.tool_calls[0].function.name == "read_secret"  # type: ignore[index]
    assert not second.choices[0].message.tool_calls  # every send_email refused: the fallback
    sent = server.requests_to("/chat/completions")[0].body["messages"]
    assert [m["role"] for m in sent][:3] == ["system", "system", "user"]  # developer: a system one
    lines = [json.loads(r.getMessage()) for r in caplog.records if r.name == "governor.decisions"]
    assert [line["kind"] for line in lines] == ["execute", second.model_extra["governor"]["kind"]]
    last = lines[-1]
    assert last["policy"] == "a" and last["session"] == "a:t" and last["user"] == "ann"
    assert last["refused"] == ["no_exfiltration"]
    assert last["model_calls"] == second.model_extra["governor"]["llm"]["calls"] >= 2
    assert last["latency_ms"] > 0 and last["endpoint"] == "chat"
    assert "s3cr3t" not in caplog.text
    store = next(iter(policies)).guard.store
    assert [r["extra"]["user"] for r in store.records("a:t")] == ["ann", "ann"]
    metrics = httpx.get(f"{base}/metrics").text
    assert 'governor_rule_refusals_total{policy="a",rule="no_exfiltration"} 1' in metrics
    assert 'governor_policy_decisions_total{policy="a",kind="execute"} 1' in metrics
    assert 'policy="b"' not in metrics


def test_a_check_is_counted_under_its_policy(served: tuple[str, ServedPolicies]) -> None:
    base, _ = served
    call = {"tool_calls": [{"id": "1", "function": {"name": "send_email", "arguments": "{}"}}]}
    read = {"tool_calls": [{"id": "0", "function": {"name": "read_secret", "arguments": "{}"}}]}
    with httpx.Client(base_url=base) as http:
        ok = http.post(
            "/v1/checks", json={"session": "k", "candidate": read, "commit": True, "model": "b"}
        )
        refused = http.post(
            "/v1/checks",
            json={"session": "k", "candidate": call},
            headers={"X-Governor-Policy": "b"},
        )
        unknown = http.post("/v1/checks", json={"session": "k", "candidate": call})
        metrics = http.get("/metrics").text
    assert ok.json()["admissible"] and not refused.json()["admissible"]
    assert unknown.status_code == 404 and unknown.json()["error"]["code"] == "model_not_found"
    assert 'governor_policy_decisions_total{policy="b",kind="refused"} 1' in metrics
    assert 'governor_rule_refusals_total{policy="b",rule="no_exfiltration"} 1' in metrics


def test_models_asks_for_a_client_key_when_keys_are_configured(files: Path) -> None:
    digest = "2bb80d537b1da3e38bd30361aa855686bde0eacd7162fef6a25fe97bf527a25b"  # sha256("secret")
    app = app_of(["--policy", str(files / "a.yaml"), "--api-key-hash", digest])
    with serving(app) as base:
        with pytest.raises(openai.AuthenticationError):
            client(base).models.list()
        keyed = openai.OpenAI(base_url=f"{base}/v1", api_key="secret", max_retries=0)
        assert [m.id for m in keyed.models.list().data] == ["governor/a"]


def test_metrics_ask_for_a_client_or_the_admin_key_when_keys_are_configured(files: Path) -> None:
    digest = "2bb80d537b1da3e38bd30361aa855686bde0eacd7162fef6a25fe97bf527a25b"  # sha256("secret")
    admin = "8c6976e5b5410415bde908bd4dee15dfb167a9c873fc4bb8a81f6f2ab448a918"  # sha256("admin")
    argv = ["--policy", str(files / "a.yaml"), "--api-key-hash", digest, "--admin-key-hash", admin]
    with serving(app_of(argv)) as base:
        assert httpx.get(f"{base}/metrics").status_code == 401
        assert httpx.get(f"{base}/metrics", headers=bearer("wrong")).status_code == 401
        for key in ("secret", "admin"):
            answer = httpx.get(f"{base}/metrics", headers=bearer(key))
            assert answer.status_code == 200 and "governor_" in answer.text
    with serving(app_of(["--policy", str(files / "a.yaml")])) as base:  # no keys: open
        assert httpx.get(f"{base}/metrics").status_code == 200


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def test_a_header_and_a_model_naming_two_policies_are_refused(
    served: tuple[str, ServedPolicies], server: FakeOpenAIServer
) -> None:
    base, _ = served
    strict = client(base, **{"X-Governor-Policy": "a"})
    with pytest.raises(openai.BadRequestError) as caught:
        strict.chat.completions.create(model="governor/b", messages=SAID)  # type: ignore[arg-type]
    error = caught.value.body
    assert isinstance(error, dict) and error["code"] == "policy_conflict"
    assert strict.chat.completions.create(model="governor/a", messages=SAID).model == "model-a"  # type: ignore[arg-type]
    assert len(server.requests_to("/chat/completions")) == 1  # the refused one called nothing


@pytest.mark.parametrize("sid", [" s", "s ", "s\u202e", "s\x00", "s\nX-Evil: 1", "\t"])
def test_a_session_id_a_header_would_trim_or_a_log_would_carry_is_refused(
    served: tuple[str, ServedPolicies], sid: str
) -> None:
    base, _ = served
    with pytest.raises(openai.BadRequestError) as caught:
        client(base).chat.completions.create(model="governor/a", messages=SAID, **session(sid))  # type: ignore[arg-type]
    assert "session id" in str(caught.value)


def test_a_reload_that_removes_rules_names_them(
    served: tuple[str, ServedPolicies], files: Path, caplog: Any
) -> None:
    _, policies = served
    text = (files / "a.yaml").read_text()
    assert "verify_first" in text
    rule = (
        "  - name: verify_first\n" + text.split("  - name: verify_first\n")[1].split("  - name")[0]
    )
    write(files / "a.yaml", text.replace(rule, ""))  # a valid policy, one rule fewer
    with caplog.at_level(logging.WARNING, logger="governor.serve.policies"):
        assert "a" in policies.reload()
    removed = [r.getMessage() for r in caplog.records if "removed the rules" in r.getMessage()]
    assert len(removed) == 1 and "verify_first" in removed[0]


def test_one_bare_policy_takes_any_model_and_keeps_the_session_ids(
    files: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY")
    out = Console(record=True, width=300, file=io.StringIO())
    app = app_of(["--policy", str(files / "a.yaml")], out)
    said = out.export_text()
    assert "governor/a: a.yaml in front of model-a" in said
    assert (
        "warning: governor/a: upstream.api_key_env names $OPENAI_API_KEY, which is not set" in said
    )
    with serving(app) as base:
        reply = client(base).chat.completions.create(
            model="anything", messages=SAID, **session("u")
        )  # type: ignore[arg-type]
        assert reply.model == "model-a"
    assert app.state.service.guard.store.load("u") is not None  # not namespaced


def test_a_directory_serves_each_yaml_by_its_stem(files: Path) -> None:
    policies = app_of(["--policy", str(files)]).state.service.policies
    assert policies.models == ["governor/a", "governor/b"]
    assert [s.namespace for s in policies] == ["a:", "b:"]


def test_a_policy_pinned_to_a_key_is_served_to_that_key_only(
    files: Path, server: FakeOpenAIServer
) -> None:
    ops, team = (
        "2c69bc9111c27110a9b9a7974ba3f8ac0c053c16b23a0738115ee829fbc4d57b",
        "e5c4224ebc9128d62514e9289e8e299c92872e2590deb3afac3ca0b84afb26a8",
    )
    argv = ["--policy", f"a={files / 'a.yaml'}", "--policy", f"b={files / 'b.yaml'}"]
    argv += ["--api-key-hash", ops, "--api-key-hash", team, "--policy-key", f"b={ops}"]
    with serving(app_of(argv)) as base:
        as_team = openai.OpenAI(base_url=f"{base}/v1", api_key="team-key", max_retries=0)
        as_ops = openai.OpenAI(base_url=f"{base}/v1", api_key="ops-key", max_retries=0)
        assert [m.id for m in as_team.models.list().data] == ["governor/a"]
        assert [m.id for m in as_ops.models.list().data] == ["governor/a", "governor/b"]
        with pytest.raises(openai.PermissionDeniedError) as caught:
            as_team.chat.completions.create(model="governor/b", messages=SAID)  # type: ignore[arg-type]
        assert isinstance(caught.value.body, dict)
        assert caught.value.body["code"] == "policy_not_allowed"
        assert len(server.requests_to("/chat/completions")) == 0  # refused before the upstream
        assert as_ops.chat.completions.create(model="governor/b", messages=SAID).model == "model-b"  # type: ignore[arg-type]
        assert as_team.chat.completions.create(model="governor/a", messages=SAID).model == "model-a"  # type: ignore[arg-type]
        as_team.close()
        as_ops.close()


@pytest.mark.parametrize(
    ("extra", "says"),
    [
        (["--policy-key", "c=" + "0" * 64], "naming a served policy (a, b)"),
        (["--policy-key", "b"], "naming a served policy"),
        (["--policy-key", "b=" + "0" * 64], "expected client keys"),
        (["--policy-key", "b=nothex", "--api-key-hash", "0" * 64], "sha256 hex digest"),
    ],
)
def test_bad_policy_keys_name_what_was_expected(files: Path, extra: list[str], says: str) -> None:
    argv = ["--policy", f"a={files / 'a.yaml'}", "--policy", f"b={files / 'b.yaml'}", *extra]
    with pytest.raises(ConfigError, match=re.escape(says)):
        app_of(argv)


@pytest.mark.parametrize(
    ("specs", "says"),
    [
        (["x=missing.yaml"], "expected a policy file, found none"),
        (["a={dir}/a.yaml", "a={dir}/b.yaml"], "expected each name once, found a twice"),
        (["{dir}/a.yaml", "{dir}"], "expected each name once"),
        (["bad name={dir}/a.yaml"], "expected a policy file"),
    ],
)
def test_bad_policy_flags_name_what_was_expected(files: Path, specs: list[str], says: str) -> None:
    argv = [a for spec in specs for a in ("--policy", spec.format(dir=files))]
    with pytest.raises(ConfigError, match=says):
        app_of(argv)


def wait_for(condition: Callable[[], bool], timeout_s: float = 5.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("the condition did not hold in time")
        time.sleep(0.01)


def test_the_admin_routes_name_a_session_by_its_policy(files: Path) -> None:
    admin = "2bb80d537b1da3e38bd30361aa855686bde0eacd7162fef6a25fe97bf527a25b"  # sha256("secret")
    argv = ["--policy", f"a={files / 'a.yaml'}", "--policy", f"b={files / 'b.yaml'}"]
    app = app_of([*argv, "--admin-key-hash", admin])
    with serving(app) as base:
        client(base).chat.completions.create(model="governor/b", messages=SAID, **session("s"))  # type: ignore[arg-type]
        with httpx.Client(base_url=base, headers={"Authorization": "Bearer secret"}) as http:
            shown = http.get("/admin/sessions/b:s")
            paused = http.post("/admin/sessions/b:s/pause")
            elsewhere = http.get("/admin/sessions/a:s")
            unknown = http.get("/admin/sessions/c:s")
        held = client(base).chat.completions.create(
            model="governor/b", messages=SAID, **session("s")
        )  # type: ignore[arg-type]
    assert shown.status_code == 200 and shown.json()["t"] == 1
    assert paused.json()["paused"] is True and held.model_extra["governor"]["kind"] == "paused"
    assert elsewhere.status_code == 404  # the same id under a: no such session
    assert (
        unknown.status_code == 404 and "served policy's name" in unknown.json()["error"]["message"]
    )


def test_the_heap_is_settled_before_serving() -> None:
    """What was loaded at start is frozen out of the collector's view, and the youngest objects
    are collected every YOUNG_OBJECTS, not every 700 (the older generations as they were)."""
    before = gc.get_threshold()
    gc.set_threshold(700, 11, 12)
    try:
        restore = _settle_heap()
        assert gc.get_threshold() == (YOUNG_OBJECTS, 11, 12)
        assert YOUNG_OBJECTS >= 10 * 700
        assert gc.get_freeze_count() > 0
        restore()  # as _serve does when the service ends: the collector as it was
        assert gc.get_threshold() == (700, 11, 12) and gc.get_freeze_count() == 0
    finally:
        gc.unfreeze()
        gc.set_threshold(*before)
