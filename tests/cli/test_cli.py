"""The command line: one-line errors, the driving benchmark's JSON, trace rendering."""

from __future__ import annotations

import dataclasses
import json
import socket
from pathlib import Path
from typing import Any

import pytest

from governor.cli import main

SMALL = [
    "--episodes",
    "4",
    "--monitor-states",
    "40",
    "--grid-nx",
    "41",
    "--grid-ny",
    "31",
    "--grid-ntheta",
    "24",
]


@pytest.fixture(autouse=True)
def _cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GOVERNOR_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "cache"))
    for name in ("GOVERNOR_BASE_URL", "GOVERNOR_MODEL", "GOVERNOR_API_KEY"):
        monkeypatch.delenv(name, raising=False)


def one_error_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0, err
    assert "Traceback" not in err
    return err


def test_unknown_flag_is_one_line(capsys: pytest.CaptureFixture[str]):
    with pytest.raises(SystemExit) as exc:
        main(["bench", "driving", "--episodez", "3"])
    assert exc.value.code == 2
    assert "unrecognized arguments: --episodez" in one_error_line(capsys)


def test_invalid_parameter_names_what_was_expected(capsys: pytest.CaptureFixture[str]):
    assert main(["bench", "driving", "--episodes", "0"]) == 2
    assert "episodes: expected a number in [1, 1e+06], found 0" in one_error_line(capsys)


def test_llm_policy_without_endpoint_says_how_to_configure(capsys: pytest.CaptureFixture[str]):
    assert main(["bench", "driving", "--policy", "llm", *SMALL]) == 2
    assert "GOVERNOR_BASE_URL" in one_error_line(capsys)


def test_unreachable_endpoint_is_one_line(capsys: pytest.CaptureFixture[str]):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again before use: nothing listens there
    args = ["bench", "driving", "--policy", "llm", "--base-url", f"http://127.0.0.1:{port}/v1"]
    assert main([*args, "--model", "m", "--timeout", "1", *SMALL]) == 2
    assert "cannot reach" in one_error_line(capsys)


def test_bench_driving_writes_json_plot_and_trace(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    out = tmp_path / "driving.json"
    plot = tmp_path / "driving.png"
    trace = tmp_path / "trace.sqlite"
    args = [
        "bench",
        "driving",
        *SMALL,
        "--json",
        str(out),
        "--plot",
        str(plot),
        "--trace",
        str(trace),
    ]
    assert main(args) == 0
    result = json.loads(out.read_text())
    assert {"rows", "monitor", "grid_seconds"} <= set(result)
    rows = {(r["policy"], r["guard"]): r for r in result["rows"]}
    assert set(rows) == {
        (p, g) for p in ("nominal", "erratic") for g in ("none", "myopic_stop", "exact_filter")
    }
    for r in rows.values():
        assert {
            "policy",
            "guard",
            "episodes",
            "success_rate",
            "failure_rate",
            "intervention_rate",
            "mean_steps",
        } <= set(r)
        assert r["episodes"] == 4 and 0 <= r["success_rate"] + r["failure_rate"] <= 1
    assert rows[("nominal", "none")]["intervention_rate"] == 0
    assert set(result["monitor"]) >= {"states", "agreement", "false_safe_rate"}
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    capsys.readouterr()
    assert main(["trace", "show", str(trace)]) == 0
    assert "nominal-none-0" in capsys.readouterr().out


def test_trace_show_of_a_missing_file_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    assert main(["trace", "show", str(tmp_path / "nope.jsonl")]) == 2
    assert "nope.jsonl" in one_error_line(capsys)


@pytest.fixture
def small_demo(monkeypatch: pytest.MonkeyPatch, small_baselines: None) -> None:
    """The demo's offline sections at a test budget (the driving one takes the demo's own
    flags). Each section has a test of its own; here what counts is that the demo runs them all
    into one report."""
    from governor.worlds.household import bench_report as safety_chip
    from governor.worlds.scenarios import bench as supervision
    from governor.worlds.smalltalk import bench as smalltalk

    def smaller(module: Any, **fields: Any) -> None:
        run = module.run
        monkeypatch.setattr(
            module, "run", lambda cfg, *a, **k: run(dataclasses.replace(cfg, **fields), *a, **k)
        )

    smaller(smalltalk, conversations=2, turns=2, human_turns=20, embed="off")
    smaller(safety_chip, constraints="1-2", repeats=1, tasks="rooms/0_1,mobile_manip/0_9")
    smaller(supervision, episodes=2, timing_decisions=50)


@pytest.mark.usefixtures("small_demo")
def test_demo_writes_a_report_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    out = tmp_path / "report"
    assert main(["demo", "--out", str(out), "--episodes", "3", "--train-steps", "200"]) == 0
    printed = capsys.readouterr().out
    assert f"report written to {out}" in printed and "exact_filter" in printed
    index = (out / "index.html").read_text()
    for name in ("driving.png", "driving.json", "trace.jsonl", "exact_filter", "reguard.png"):
        assert name in index
    reguard = json.loads((out / "reguard.json").read_text())["driving"]
    assert {r["guard"] for r in reguard["table1"]} >= {"exact", "privileged", "llamaguard"}
    assert (out / "reguard-checkpoints" / "driving-state" / "checkpoint.pt").is_file()
    rows = json.loads((out / "driving.json").read_text())["rows"]
    assert len(rows) == 6 and all(r["episodes"] == 3 for r in rows)
    assert main(["trace", "show", str(out / "trace.jsonl")]) == 0


def test_version_imports_no_command_module() -> None:
    import subprocess
    import sys

    code = (
        "import sys; from governor.cli import main; main(['--version']); "
        "print(sorted(m for m in ('scipy', 'matplotlib', 'torch', 'governor.worlds') "
        "if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.splitlines() == ["governor 0.1.0", "[]"]


def test_the_cli_builds_without_the_serve_extra() -> None:
    import subprocess
    import sys

    code = (
        "import sys; sys.modules['starlette'] = None; sys.modules['uvicorn'] = None; "
        "from governor.cli import build_parser; build_parser(); print('built')"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.strip() == "built", out.stderr
