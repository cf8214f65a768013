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


def test_a_hanging_endpoint_fails_fast_and_the_table_says_so(
    server: FakeOpenAIServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
):
    import time

    monkeypatch.setenv("GOVERNOR_CACHE_DIR", str(tmp_path / "cache"))
    server.script("/chat/completions", *[Reply(delay_s=3.0)] * 10)  # answers after the timeout
    out = tmp_path / "dead.json"
    args = ["bench", "driving", "--policy", "llm", "--base-url", server.url, "--model", "m"]
    start = time.perf_counter()
    assert main([*args, *SMALL, "--episodes", "1", "--timeout", "0.3", "--json", str(out)]) == 0
    elapsed = time.perf_counter() - start
    rows = json.loads(out.read_text())["rows"]
    steps = sum(r["mean_steps"] for r in rows)
    assert elapsed < 5 + 2 * 0.3 * 3  # three timed-out calls open the circuit; the rest fail fast
    assert all(r["llm_failed"] >= 1 for r in rows) and steps > 3
    assert sum(r["llm_calls"] for r in rows) == len(server.requests_to("/chat/completions"))
    table = capsys.readouterr().out
    assert "LLM calls" in table and "failed" in table
