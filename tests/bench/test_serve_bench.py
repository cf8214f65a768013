"""`governor bench serve` at a tiny size: the JSON's shape, one upstream call per accepted turn."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from governor.cli import main

pytest.importorskip("uvicorn")


def test_bench_serve_writes_json_and_plot(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out, png = tmp_path / "serve.json", tmp_path / "serve.png"
    args = ["bench", "serve", "--requests", "10", "--concurrency", "1,2", "--latency-ms", "5"]
    args += ["--token-ms", "2", "--stream-requests", "4", "--stream-concurrency", "1,2"]
    assert main([*args, "--json", str(out), "--plot", str(png)]) == 0
    result = json.loads(out.read_text())
    rows = result["rows"]
    assert [(r["checks"], r["concurrency"]) for r in rows] == [
        (checks, c) for checks in ("overlays", "ltl", "both") for c in (1, 2)
    ]
    for r in rows:
        for key in ("added_ms_p50", "added_ms_p99", "throughput_rps", "upstream_calls_per_turn"):
            assert isinstance(r[key], float), key
        assert r["throughput_rps"] > 0 and r["requests"] == 10
        assert r["accepted"] == 1.0  # the stub's fixed reply passes every check set
        assert r["upstream_calls_per_turn"] == 1.0
        assert r["upstream_calls_per_accepted_turn"] == 1.0
        assert r["cpu_ms_per_request"] > 0  # this process's CPU time over the timed requests
    assert result["checks_per_s"] > 0 and result["commits_per_s"] > 0
    assert result["config"]["store"] == "sqlite"  # the default: sessions in a SQLite file
    stream = result["stream"]["rows"]
    assert [(r["checks"], r["concurrency"]) for r in stream] == [
        (checks, c) for checks in ("prefix", "overlays") for c in (1, 2)
    ]
    for r in stream:
        assert r["requests"] == 4 and r["same_text"]  # governor released the stub's whole text
        assert r["governor_ttft_ms_p50"] >= r["upstream_ttft_ms_p50"] > 0
        assert r["whole_ratio_p50"] > 0
    assert png.stat().st_size > 1000
    printed = capsys.readouterr().out
    assert "decisions per second" in printed and "calls/turn" in printed
    assert "CPU ms/req" in printed
    assert "time to first token" in printed
    assert "sqlite store" in printed


def test_bench_serve_stub_runs_in_its_own_process_and_counts_calls() -> None:
    import os

    import httpx

    from governor.bench.service.stub import Stub

    with Stub(0.0) as stub:
        body = {"model": "stub", "messages": [{"role": "user", "content": "hi"}], "n": 2}
        answer = httpx.post(f"{stub.url}/chat/completions", json=body, timeout=10).json()
        assert len(answer["choices"]) == 2 and stub.calls == 1
        assert stub._process.pid != os.getpid()
        assert httpx.get(f"{stub.url}/models", timeout=10).status_code == 200
        assert stub.calls == 1  # only chat completions are counted
        streamed = httpx.post(f"{stub.url}/chat/completions", json={**body, "stream": True})
        assert streamed.headers["content-type"] == "text/event-stream"
        assert streamed.text.rstrip().endswith("data: [DONE]") and stub.calls == 2
    assert not stub._process.is_alive()


def test_bench_serve_refuses_bad_levels() -> None:
    assert main(["bench", "serve", "--concurrency", "0,8"]) == 2
    assert main(["bench", "serve", "--requests", "0"]) == 2
    assert main(["bench", "serve", "--store", "postgres"]) == 2
    assert main(["bench", "serve", "--workers", "0"]) == 2
    assert main(["bench", "serve", "--workers", "2", "--store", "memory"]) == 2
    assert main(["bench", "serve", "--checks", "tone"]) == 2


def test_bench_serve_workers_measures_governor_serve_in_its_own_processes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "serve.json"
    args = ["bench", "serve", "--workers", "2", "--checks", "ltl", "--requests", "20"]
    args += ["--concurrency", "1,4", "--latency-ms", "5", "--json", str(out)]
    assert main(args) == 0
    result = json.loads(out.read_text())
    rows = result["rows"]
    assert [(r["system"], r["workers"], r["checks"], r["concurrency"]) for r in rows] == [
        ("governor", 2, "ltl", 1),
        ("governor", 2, "ltl", 4),
    ]
    for r in rows:
        assert r["requests"] == 20 and r["accepted"] == 1.0
        assert r["upstream_calls_per_turn"] == 1.0
        # the served processes' CPU (parent and workers), not this process's
        assert r["cpu_ms_per_request"] > 0
    assert "stream" not in result and len(result["uptime"]) == 3
    assert len(result["machine_ms"]) == 2 and all(ms > 0 for ms in result["machine_ms"])
    printed = capsys.readouterr().out
    assert "CPU ms/req" in printed and "workers" in printed and "load average" in printed
    assert f"took {result['machine_ms'][0]:g} ms of CPU at the start" in printed


def test_bench_serve_repeat_gives_each_cell_its_median_and_range(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "serve.json"
    args = ["bench", "serve", "--workers", "1", "--checks", "ltl", "--requests", "10"]
    args += ["--concurrency", "1,4", "--latency-ms", "5", "--repeat", "3", "--json", str(out)]
    assert main(args) == 0
    rows = json.loads(out.read_text())["rows"]
    assert [(r["workers"], r["concurrency"]) for r in rows] == [(1, 1), (1, 4)]
    for r in rows:
        runs = r["runs"]
        assert len(runs) == 3 and {x["concurrency"] for x in runs} == {r["concurrency"]}
        p50s = sorted(x["added_ms_p50"] for x in runs)
        assert r["added_ms_p50"] == p50s[1] and r["added_ms_p50_range"] == [p50s[0], p50s[2]]
        cpu = sorted(x["cpu_ms_per_request"] for x in runs)
        assert r["cpu_ms_per_request_range"] == [cpu[0], cpu[2]]
    printed = capsys.readouterr().out
    assert f"({p50s[0]:.1f}-{p50s[2]:.1f})" in printed  # the last row's p50 range
    assert main(["bench", "serve", "--repeat", "2"]) == 2  # only for services in processes


def _spin(seconds: float, spun: Any, release: Any) -> None:
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass
    spun.set()
    release.wait(30)  # stays a live child while the parent reads its CPU time


def test_tree_cpu_counts_a_process_and_its_children() -> None:
    import multiprocessing
    import os

    from governor.bench.service.served import tree_cpu_s

    if not Path("/proc/self/stat").exists():
        pytest.skip("no /proc on this platform: the CPU column reads None there")
    context = multiprocessing.get_context("fork")
    spun, release = context.Event(), context.Event()
    before = tree_cpu_s(os.getpid())
    child = context.Process(target=_spin, args=(0.3, spun, release))
    child.start()
    try:
        assert spun.wait(30)
        during = tree_cpu_s(os.getpid())
    finally:
        release.set()
        child.join(10)
    assert before is not None and during is not None
    assert during - before >= 0.25  # the child's spinning counted as the tree's


def test_bench_serve_compare_nemo_names_how_to_install_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "no-python"
    assert main(["bench", "serve", "--compare", "nemo", "--nemo-python", str(missing)]) == 2
    err = capsys.readouterr().err
    assert "make nemo-venv" in err and str(missing) in err


def test_the_stub_replies_differ_and_each_is_a_reply_the_bench_policies_admit() -> None:
    """No per-text cache of the guard may see the same reply twice within 4,096 calls, and every
    reply passes the small-talk overlays at once (one upstream call per turn)."""
    import asyncio

    from governor.backends.scripted import ScriptedBackend
    from governor.bench.service.stub import _completion
    from governor.bench.service.workload import USER_TEXT, bench_policy, reply_text
    from governor.guard import Guard

    assert len({reply_text(k) for k in range(4096)}) == 4096
    body = _completion({"n": 2}, 7)
    texts = [c["message"]["content"] for c in body["choices"]]
    assert texts == [reply_text(14), reply_text(15)]
    for n, calls in ((1, 4096), (2, 2048), (3, 1365)):  # the calls of a cell ask the same n
        seen = [
            c["message"]["content"]
            for k in range(calls)
            for c in _completion({"n": n}, k)["choices"]
        ]
        assert len(set(seen)) == len(seen) == n * calls, n
    guard = Guard(bench_policy("both", "http://127.0.0.1:9/v1"), ScriptedBackend(["unused"]))

    async def refused() -> list[str]:
        out = []
        for k in range(0, 4096, 13):  # a spread sample: every opener, middle and question
            got = await guard.session(f"s{k}").check(
                reply_text(k), messages=[{"role": "user", "content": USER_TEXT}]
            )
            if not got.admissible:
                out.append(reply_text(k))
        return out

    assert asyncio.run(refused()) == []
