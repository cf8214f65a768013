"""The driving benchmark with an LLM policy over real HTTP, against the fake server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fake_openai_server import FakeOpenAIServer, Reply

from governor.cli import main

SMALL = [
    "--episodes",
    "2",
    "--monitor-states",
    "0",
    "--grid-nx",
    "41",
    "--grid-ny",
    "31",
    "--grid-ntheta",
    "24",
]


def completion(text: str) -> Reply:
    choice = {
        "index": 0,
        "message": {"role": "assistant", "content": text},
        "finish_reason": "stop",
    }
    return Reply(
        body={"choices": [choice], "usage": {"prompt_tokens": 200, "completion_tokens": 1}}
    )


def test_every_request_is_counted_and_bad_replies_never_steer(
    server: FakeOpenAIServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("GOVERNOR_CACHE_DIR", str(tmp_path / "cache"))
    # Good answers first, then a server error, then garbage for the rest of the run.
    server.script(
        "/chat/completions", *[completion("B) Steer straight")] * 12, Reply(status=500, body="boom")
    )
    out = tmp_path / "llm.json"
    trace = tmp_path / "llm.jsonl"
    args = [
        "bench",
        "driving",
        "--policy",
        "llm",
        "--base-url",
        server.url,
        "--model",
        "fake-model",
    ]
    assert main([*args, *SMALL, "--json", str(out), "--trace", str(trace)]) == 0
    rows = {r["guard"]: r for r in json.loads(out.read_text())["rows"]}
    assert set(rows) == {"none", "myopic_stop", "exact_filter"}
    requests = server.requests_to("/chat/completions")
    assert sum(r["llm_calls"] for r in rows.values()) == len(requests)
    assert requests[0].body["messages"][0]["role"] == "system"
    assert "Answer with a single letter" in requests[0].body["messages"][-1]["content"]
    records = [json.loads(line) for line in trace.read_text().splitlines()]
    decisions = [r for r in records if r["type"] == "decision"]
    # A garbage reply is an invalid candidate: never executed, the filter's fallback acts instead.
    garbage = [d for d in decisions if d["attempts"] and d["attempts"][0]["candidates"][0]["error"]]
    assert garbage
    for d in garbage:
        assert d["kind"] in {"fallback", "defer", "abort"}
        assert d["action"] is None or d["episode"].split("-")[1] != "none"
