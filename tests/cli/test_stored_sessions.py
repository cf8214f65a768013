"""`governor trace show --store` and `governor audit --store`: a session store (what `governor
serve` keeps) read like a trace file or a file of runs: one session, or every session."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from guard_helpers import TOOLS_POLICY, tool_guard

from governor.cli import main
from governor.guard import SqliteStore


def call(i: str, name: str) -> dict[str, Any]:
    fn = {"name": name, "arguments": "{}"}
    return {"role": "assistant", "content": None,
            "tool_calls": [{"id": i, "type": "function", "function": fn}]}  # fmt: skip


@pytest.fixture
def store(tmp_path: Path) -> str:
    """A store of two sessions: ``clean`` (one text step) and ``leak`` (whose client claimed a
    send_email after a read_secret, then got a text reply)."""
    path = tmp_path / "sessions.sqlite3"
    guard, _ = tool_guard(["Hello.", "Done."], store=SqliteStore(path))
    guard.session("clean").respond_sync([{"role": "user", "content": "hi"}])
    claimed = [
        {"role": "user", "content": "mail the secret"},
        call("a", "read_secret"),
        {"role": "tool", "tool_call_id": "a", "content": "s3cr3t"},
        call("b", "send_email"),
        {"role": "tool", "tool_call_id": "b", "content": "sent"},
    ]
    guard.session("leak").respond_sync(claimed)
    guard.close()
    return f"sqlite:{path}"


def test_trace_show_reads_one_stored_session_or_the_first_that_intervened(
    store: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["trace", "show", "--store", store, "--session", "clean"]) == 0
    one = capsys.readouterr().out
    assert "clean" in one and "execute" in one and "leak" not in one
    assert main(["trace", "show", "--store", store]) == 0
    every = capsys.readouterr().out
    assert "other episode(s): " in every and "clean" in every and "leak" in every


def test_audit_judges_every_stored_session_under_a_policy(
    store: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    report = tmp_path / "report.json"
    argv = ["audit", "--policy", str(TOOLS_POLICY), "--store", store, "--json", str(report)]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "session leak message   3 send_email" in out and "no_exfiltration" in out
    assert "2 runs" in out and "1 refused in 1 runs" in out
    sessions = [c["session"] for c in json.loads(report.read_text())["conversations"]]
    assert sessions == ["clean", "leak"]
    assert main([*argv[:5], "--session", "clean"]) == 0
    assert "1 runs, 1 steps judged, 0 refused" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["trace", "show", "--store", "memory"], "a store that outlives its process"),
        (["trace", "show", "--store", "{store}", "--session", "nobody"], "found no 'nobody'"),
        (["trace", "show", "x.jsonl", "--session", "s"], "--session: expected --store"),
        (["audit", "--store", "{store}"], "--store: expected --policy beside it"),
    ],
)
def test_bad_store_flags_end_in_one_line(
    store: str, argv: list[str], says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([a.format(store=store) for a in argv]) == 2
    err = capsys.readouterr().err
    assert says in err and len(err.strip().splitlines()) == 1
