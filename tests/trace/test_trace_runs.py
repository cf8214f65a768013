"""Trace files shared by runs: run ids keep them apart, two processes can write one file at once,
and a torn last line costs only that line."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from governor.core import Decision, DecisionKind
from governor.trace import open_trace, read_trace, render_trace
from governor.trace.read import TornRecordWarning

STEPS = 200


def decision(action: str) -> Decision:
    return Decision(DecisionKind.EXECUTE, action, (), None, "admissible")


@pytest.fixture(params=["t.jsonl", "t.sqlite"])
def path(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    return tmp_path / request.param


def test_two_runs_in_one_file_stay_apart(path: Path) -> None:
    for run in ("first", "second"):
        with open_trace(path, run=run) as trace:
            trace.record(decision(run), episode="ep-0", t=0)
            trace.record_episode("ep-0", {"outcome": run})
    decisions, episodes = read_trace(path)
    assert [d["episode"] for d in decisions] == ["first/ep-0", "second/ep-0"]
    assert episodes == {"first/ep-0": {"outcome": "first"}, "second/ep-0": {"outcome": "second"}}


def test_one_run_keeps_plain_episode_ids_and_a_later_summary_replaces(path: Path) -> None:
    with open_trace(path) as trace:
        trace.record(decision("a"), episode="ep-0", t=0)
        trace.record_episode("ep-0", {"outcome": "running"})
        trace.record_episode("ep-0", {"outcome": "done"})
    decisions, episodes = read_trace(path)
    assert [d["episode"] for d in decisions] == ["ep-0"] and decisions[0]["run"] == trace.run
    assert episodes == {"ep-0": {"outcome": "done"}}


WRITER = textwrap.dedent(
    """
    import sys
    from governor.core import Decision, DecisionKind
    from governor.trace import open_trace
    path, run, steps = sys.argv[1], sys.argv[2], int(sys.argv[3])
    with open_trace(path, run=run) as trace:
        for t in range(steps):
            action = {"run": run, "t": t, "pad": "x" * (t * 40)}
            trace.record(Decision(DecisionKind.EXECUTE, action, (), None, "ok"), episode="ep", t=t)
        trace.record_episode("ep", {"outcome": run})
    """
)


def test_two_processes_write_one_file_at_once(path: Path) -> None:
    procs = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(path), run, str(STEPS)])
        for run in ("a", "b")
    ]
    assert [p.wait(timeout=120) for p in procs] == [0, 0]
    decisions, episodes = read_trace(path)
    assert sorted(episodes) == ["a/ep", "b/ep"]
    for run in ("a", "b"):
        mine = [d for d in decisions if d["episode"] == f"{run}/ep"]
        assert [d["t"] for d in mine] == list(range(STEPS))
        assert all(
            d["action"]["run"] == run and len(d["action"]["pad"]) == d["t"] * 40 for d in mine
        )


def test_a_torn_last_line_is_skipped_with_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    with open_trace(path) as trace:
        for t in range(3):
            trace.record(decision(str(t)), episode="ep", t=t)
    whole = path.read_bytes()
    path.write_bytes(whole + whole.splitlines(keepends=True)[0][:37])
    with pytest.warns(TornRecordWarning, match="line 4: skipped a torn last record"):
        decisions, _ = read_trace(path)
    assert [d["t"] for d in decisions] == [0, 1, 2]
    with pytest.warns(TornRecordWarning):
        render_trace(path)


def test_garbage_in_the_middle_is_still_an_error(tmp_path: Path) -> None:
    from governor.errors import ConfigError

    path = tmp_path / "t.jsonl"
    with open_trace(path) as trace:
        trace.record(decision("a"), episode="ep", t=0)
    path.write_bytes(b'{"torn\n' + path.read_bytes())
    with pytest.raises(ConfigError, match="line 1"):
        read_trace(path)


def test_trace_show_prints_the_warning_and_the_rest(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    with open_trace(path) as trace:
        trace.record(decision("a"), episode="ep", t=0)
    path.write_bytes(path.read_bytes() + b'{"type": "decis')
    out = subprocess.run(
        [sys.executable, "-m", "governor.cli", "trace", "show", str(path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    assert "skipped a torn last record" in out.stdout and "execute" in out.stdout
