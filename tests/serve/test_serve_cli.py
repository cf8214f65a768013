"""The ``governor serve`` command: flags, the default policy, the store, errors as one line."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from guard_helpers import TOOLS_POLICY

from governor.cli import main
from governor.errors import ConfigError
from governor.guard import MemoryStore, SqliteStore
from governor.guard.stores import store_from


@pytest.fixture
def ran(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    calls: list[dict[str, Any]] = []
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: calls.append({"app": app, **kw}))
    return calls


def test_serve_builds_the_default_policy_with_the_upstream_override(
    ran: list[dict[str, Any]], capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["serve", "--upstream", "http://127.0.0.1:9/v1", "--model", "m1", "--store", "memory"]
    assert main([*argv, "--port", "8099"]) == 0
    (call,) = ran
    assert call["host"] == "127.0.0.1" and call["port"] == 8099
    guard = call["app"].state.service.guard
    assert guard.policy.upstream.base_url == "http://127.0.0.1:9/v1"
    assert guard.policy.upstream.model == "m1" and guard.policy.overlays_from == "smalltalk"
    assert isinstance(guard.store, MemoryStore)
    out = capsys.readouterr().out
    assert "client keys not required" in out and "one shared budget" not in out


def test_a_rate_limit_without_client_keys_is_warned_of(
    ran: list[dict[str, Any]], capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["serve", "--store", "memory", "--rate-limit", "5", "--session-quota", "100"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "warning: --rate-limit and --session-quota without client keys" in out
    flag = ["--api-key-hash", hashlib.sha256(b"k").hexdigest()]
    assert main([*argv, *flag]) == 0  # with keys: each client its own budget
    assert "one shared budget" not in capsys.readouterr().out


def test_serve_reads_a_policy_and_client_key_digests(
    ran: list[dict[str, Any]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    keys = tmp_path / "keys"
    keys.write_text(hashlib.sha256(b"k1").hexdigest() + "\n")
    monkeypatch.setenv("GOVERNOR_API_KEY_HASHES_FILE", str(keys))
    store = f"sqlite:{tmp_path / 's.db'}"
    flag = hashlib.sha256(b"k2").hexdigest()
    assert (
        main(["serve", "--policy", str(TOOLS_POLICY), "--store", store, "--api-key-hash", flag])
        == 0
    )
    service = ran[0]["app"].state.service
    assert len(service.keys.digests) == 2 and service.guard.policy.source == "tools.yaml"


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["serve", "--store", "redis:x"], "--store: expected sqlite:PATH or memory"),
        (["serve", "--store", "memory", "--port", "70000"], "--port: expected a port"),
        (["serve", "--store", "memory", "--api-key-hash", "xyz"], "expected a sha256 hex digest"),
        (["serve", "--store", "memory", "--admin-key-hash", "xyz"], "--admin-key-hash: expected"),
    ],
)
def test_bad_flags_end_in_one_line(
    argv: list[str], says: str, ran: list[Any], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2 and ran == []
    err = capsys.readouterr().err
    assert says in err and len(err.strip().splitlines()) == 1


def test_store_from(tmp_path: Path) -> None:
    assert isinstance(store_from("memory"), MemoryStore)
    assert isinstance(store_from(f"sqlite:{tmp_path / 'x.db'}"), SqliteStore)
    with pytest.raises(ConfigError):
        store_from("sqlite:")


def test_the_decision_log_goes_where_the_flag_says_while_the_service_runs(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import logging

    from governor.serve.decision_log import log_decision

    summary = {"kind": "execute", "llm": {"calls": 1}}
    seen: list[bool] = []

    def run(app: Any, **kw: Any) -> None:  # the service "runs": one decision is logged
        seen.append(logging.getLogger("governor.decisions").isEnabledFor(logging.INFO))
        log_decision("smalltalk", "s", "ann", "chat", summary, 0.002)

    monkeypatch.setattr(uvicorn, "run", run)
    path = tmp_path / "decisions.jsonl"
    assert main(["serve", "--store", "memory", "--decision-log", str(path)]) == 0
    (line,) = path.read_text().splitlines()
    assert '"policy":"smalltalk"' in line and '"user":"ann"' in line and '"latency_ms":2.0' in line
    assert main(["serve", "--store", "memory", "--decision-log", "off"]) == 0
    assert seen == [True, False]
    assert len(path.read_text().splitlines()) == 1
    assert not logging.getLogger("governor.decisions").handlers  # put back after the run
