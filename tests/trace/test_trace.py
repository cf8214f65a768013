from __future__ import annotations

import dataclasses
import io
import json
import math
import sqlite3
import subprocess
import sys
import textwrap
from collections.abc import Callable
from enum import Enum
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from rich.console import Console

from governor.core import (
    Attempt,
    Candidate,
    Decision,
    DecisionKind,
    Feedback,
    FeedbackKind,
    RejectionCause,
    Verdict,
)
from governor.errors import ConfigError, GovernorError
from governor.trace import (
    JsonlTrace,
    SqliteTrace,
    decision_from_record,
    decision_record,
    open_trace,
    read_trace,
    render_trace,
    to_jsonable,
)
from governor.usage import Usage

FORCED = Feedback(FeedbackKind.FORCED, "steer away from obstacle 1", ("safety_filter",))
IMPLICIT = Feedback(FeedbackKind.IMPLICIT, "a little long; be brief", ("brevity",))


def execute() -> Decision:
    verdicts = (Verdict.allow("safety_filter", margin=0.8), Verdict.allow("brevity"))
    return Decision(
        DecisionKind.EXECUTE,
        "B",
        verdicts,
        attempts=(Attempt((Candidate("B", "B", logprob=-0.1),), (verdicts,), None, 0, None),),
        latency={"propose": 0.012, "check": 0.003},
        usage={"propose": Usage(1, 120, 3, 0.01)},
    )


def with_feedback() -> Decision:
    verdicts = (Verdict.allow("brevity", deviation=0.2, descriptor="a little long"),)
    return Decision(
        DecisionKind.EXECUTE_WITH_FEEDBACK,
        {"say": "hello", "to": ("user", 1)},
        verdicts,
        IMPLICIT,
        attempts=(Attempt((Candidate("hi"),), (verdicts,), None, 0, None),),
        latency={"propose": 0.02},
        usage={"propose": Usage(1, 50, 7, 0.02)},
    )


def fallback() -> Decision:
    rejected = Verdict.from_margin("safety_filter", -0.12, descriptor="obstacle 1 ahead")
    first = Attempt(
        (Candidate("A", "A", logprob=float("-inf")), Candidate.invalid("Z?", "expected A, B or C")),
        ((rejected, Verdict.allow("brevity")), ()),
        None,
        None,
        RejectionCause.EMPTY,
    )
    second = Attempt(
        (Candidate("A", "A"),),
        ((Verdict.from_margin("safety_filter", -0.05), Verdict.allow("brevity")),),
        FORCED,
        None,
        RejectionCause.EMPTY,
    )
    return Decision(
        DecisionKind.FALLBACK,
        "C",
        (Verdict.allow("safety_filter", margin=math.inf),),
        FORCED,
        "no admissible candidate after 1 regeneration",
        RejectionCause.EMPTY,
        (first, second),
        latency={"propose": 0.5, "check": 0.01, "fallback": 0.001},
        usage={"propose": Usage(2, 400, 6, 0.4), "feedback": Usage(1, 80, 20, 0.1)},
    )


def abort() -> Decision:
    failed = Verdict.failed("safety_filter", RuntimeError("boom"))
    return Decision(
        DecisionKind.ABORT,
        None,
        reason="every check failed",
        cause=RejectionCause.ERROR,
        attempts=(Attempt((Candidate("A"),), ((failed,),), None, None, RejectionCause.ERROR),),
        latency={"check": 0.004},
        errors=("safety_filter: RuntimeError: boom",),
    )


def lookahead_fallback() -> Decision:
    """A rejection that names its own cause (a lookahead verdict) survives the round trip."""
    ahead = Verdict.reject(
        "lookahead", 0.5, "rollouts reach the unsafe region", cause=RejectionCause.LOOKAHEAD
    )
    attempt = Attempt((Candidate("hi", "hi"),), ((ahead,),), None, None, RejectionCause.LOOKAHEAD)
    return Decision(
        DecisionKind.FALLBACK,
        "fallback",
        (ahead,),
        reason="lookahead_failure",
        cause=RejectionCause.LOOKAHEAD,
        attempts=(attempt,),
    )


DECISIONS = [execute, with_feedback, fallback, abort]


def write(path: Path, episodes: tuple[str, ...] = ("ep-1",)) -> list[dict]:
    records = []
    with open_trace(path) as trace:
        for episode in episodes:
            for t, make in enumerate(DECISIONS):
                extra = {"observation": f"step {t}", "state": np.arange(3.0)}
                trace.record(make(), episode=episode, t=t, extra=extra)
                record = decision_record(make(), episode=episode, t=t, extra=extra)
                records.append({**record, "run": trace.run})
            trace.record_episode(episode, {"outcome": "failed", "steps": 4, "ret": np.float32(1.5)})
    return records


@pytest.fixture(params=["trace.jsonl", "trace.sqlite"])
def path(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    return tmp_path / request.param


def test_records_hold_every_field(path: Path) -> None:
    written = write(path)
    decisions, episodes = read_trace(path)
    assert decisions == written
    assert episodes == {"ep-1": {"outcome": "failed", "steps": 4, "ret": 1.5}}
    ex, wf, fb, ab = decisions
    assert ex["latency_ms"] == pytest.approx({"propose": 12.0, "check": 3.0})
    assert ex["step_latency_ms"] == pytest.approx(15.0)
    assert ex["usage_total"] == {
        "calls": 1,
        "prompt_tokens": 120,
        "completion_tokens": 3,
        "seconds": 0.01,
        "failed": 0,
        "abandoned": 0,
        "tokens": 123,
    }
    assert ex["verdicts"][0] == {
        "constraint": "safety_filter",
        "admissible": True,
        "deviation": 0.0,
        "margin": 0.8,
        "confidence": 1.0,
        "descriptor": "",
        "severity": "LOW",
        "error": None,
        "cause": None,
        "repair": None,
    }
    assert wf["action"] == {"say": "hello", "to": ["user", 1]}
    assert wf["feedback"] == {"kind": "implicit", "text": IMPLICIT.text, "constraints": ["brevity"]}
    assert fb["kind"] == "fallback" and fb["cause"] == "empty_admissible_set"
    assert fb["regenerations"] == 1 and fb["intervened"] is True
    assert fb["usage"]["feedback"]["calls"] == 1 and fb["usage_total"]["calls"] == 3
    assert fb["verdicts"][0]["margin"] == "Infinity"
    first, second = fb["attempts"]
    assert first["candidates"][0] == {
        "action": "A",
        "text": "A",
        "error": None,
        "logprob": "-Infinity",
    }
    assert first["candidates"][1]["error"] == "expected A, B or C"
    rejected = first["verdicts"][0][0]
    assert rejected["margin"] == -0.12 and rejected["severity"] == "HIGH"
    assert first["verdicts"][1] == [] and first["feedback"] is None and first["chosen"] is None
    assert second["feedback"]["kind"] == "forced" and second["cause"] == "empty_admissible_set"
    assert ab["action"] is None and ab["errors"] == ["safety_filter: RuntimeError: boom"]
    assert ab["attempts"][0]["verdicts"][0][0]["error"] == "RuntimeError: boom"
    assert ab["extra"] == {"observation": "step 3", "state": [0.0, 1.0, 2.0]}


@pytest.mark.parametrize("make", [*DECISIONS, lookahead_fallback])
def test_decisions_round_trip(make: Callable[[], Decision]) -> None:
    decision = make()
    record = json.loads(json.dumps(decision_record(decision, episode="e", t=0)))
    back = decision_from_record(record)
    assert back.latency == pytest.approx(decision.latency)
    if decision.kind is DecisionKind.EXECUTE_WITH_FEEDBACK:
        decision = dataclasses.replace(decision, action=to_jsonable(decision.action))
    assert dataclasses.replace(back, latency=decision.latency) == decision


def test_decision_from_a_broken_record_is_a_config_error() -> None:
    record = decision_record(execute(), episode="e", t=0)
    del record["attempts"]
    with pytest.raises(ConfigError, match="decision record"):
        decision_from_record(record)


def test_episode_summary_is_replaced_by_a_later_one(path: Path) -> None:
    with open_trace(path) as trace:
        trace.record_episode("ep", {"outcome": "running"})
        trace.record_episode("ep", {"outcome": "success"})
    assert read_trace(path) == ([], {"ep": {"outcome": "success"}})


def test_jsonl_lines_are_typed(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    write(path)
    types = [json.loads(line)["type"] for line in path.read_text().splitlines()]
    assert types == ["decision"] * 4 + ["episode"]


def test_jsonl_keeps_records_when_the_process_dies_without_closing(tmp_path: Path) -> None:
    path = tmp_path / "crash.jsonl"
    script = f"""
        import os
        from governor.core import Decision, DecisionKind
        from governor.trace import JsonlTrace
        trace = JsonlTrace({str(path)!r})
        trace.record(Decision(DecisionKind.EXECUTE, "A"), episode="e", t=0)
        trace.record(Decision(DecisionKind.EXECUTE, "B"), episode="e", t=1)
        os._exit(3)
    """
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(script)], check=False)
    assert done.returncode == 3
    decisions, _ = read_trace(path)
    assert [d["action"] for d in decisions] == ["A", "B"]


def test_writing_after_close_is_an_error(path: Path) -> None:
    trace = open_trace(path)
    trace.close()
    trace.close()
    with pytest.raises(GovernorError, match="closed"):
        trace.record(execute(), episode="e", t=0)


def test_sqlite_is_wal_indexed_and_has_columns(tmp_path: Path) -> None:
    path = tmp_path / "t.db"
    trace = SqliteTrace(path)
    with open_trace(tmp_path / "u.sqlite3") as other:
        assert isinstance(other, SqliteTrace)
    trace.record(fallback(), episode="ep", t=0)
    assert [r["kind"] for r in read_trace(path)[0]] == ["fallback"]  # readable while open
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        row = db.execute(
            "SELECT episode, t, kind, action, reason, cause, llm_calls, tokens FROM decisions"
        ).fetchone()
        plan = db.execute(
            "EXPLAIN QUERY PLAN SELECT record FROM decisions WHERE episode = ? AND t = ?", ("ep", 0)
        ).fetchall()
    db.close()
    trace.close()
    assert row == ("ep", 0, "fallback", "C", fallback().reason, "empty_admissible_set", 3, 506)
    assert any("USING INDEX decisions_episode_t" in str(step) for step in plan)


def test_open_trace_picks_the_writer_by_suffix(tmp_path: Path) -> None:
    with open_trace(tmp_path / "a.JSONL") as trace:
        assert isinstance(trace, JsonlTrace)
    with pytest.raises(ConfigError, match=r"\.jsonl, \.sqlite, \.sqlite3, \.db.*'\.txt'"):
        open_trace(tmp_path / "a.txt")


def test_a_file_that_is_not_a_database_is_a_config_error(tmp_path: Path) -> None:
    junk = tmp_path / "junk.sqlite"
    junk.write_text("not a database")
    with pytest.raises(ConfigError, match=r"junk\.sqlite: expected a SQLite trace"):
        open_trace(junk)
    with pytest.raises(ConfigError, match=r"junk\.sqlite: expected a governor SQLite trace"):
        read_trace(junk)


def test_read_trace_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"missing\.jsonl: expected a trace file"):
        read_trace(tmp_path / "missing.jsonl")
    path = tmp_path / "bad.jsonl"
    write(path)
    with path.open("a") as file:
        file.write("\n{oops\n")
    with pytest.raises(ConfigError, match=r"bad\.jsonl, line 7: expected a JSON object .*'\{oops'"):
        read_trace(path)
    path.write_text('{"type": "decision", "episode": "e"}\n')
    with pytest.raises(ConfigError, match="line 1"):
        read_trace(path)


class Colour(Enum):
    RED = "red"


@dataclasses.dataclass
class Point:
    x: float
    tags: frozenset[int]


class Opaque:
    def __repr__(self) -> str:
        return "<opaque>"


class Broken:
    def __repr__(self) -> str:
        raise RuntimeError("no repr")


def test_to_jsonable_conversions() -> None:
    loop: list = [1]
    loop.append(loop)
    value = {
        "array": np.array([[1, 2], [3, 4]], dtype=np.int8),
        "scalar": np.float64(2.5),
        "flag": np.bool_(True),
        "point": Point(math.nan, frozenset({3, 1})),
        "colour": Colour.RED,
        "kind": DecisionKind.FALLBACK,
        "floats": (math.inf, -math.inf),
        (1, 2): {Path("/tmp/x")},
        "bytes": b"\x00\xff",
        "big": bytes(1000),
        "other": Opaque(),
        "broken": Broken(),
        "loop": loop,
    }
    out = to_jsonable(value)
    json.dumps(out, allow_nan=False)
    assert out["array"] == [[1, 2], [3, 4]] and out["scalar"] == 2.5 and out["flag"] is True
    assert out["point"] == {"x": "NaN", "tags": [1, 3]}
    assert out["colour"] == "red" and out["kind"] == "fallback"
    assert out["floats"] == ["Infinity", "-Infinity"]
    assert out["[1, 2]"] == ["/tmp/x"]
    assert out["bytes"] == {"bytes": 2, "hex": "00ff"} and out["big"] == {"bytes": 1000}
    assert out["other"] == "<opaque>" and out["broken"] == "<unrepresentable Broken>"
    assert out["loop"][0] == 1 and isinstance(out["loop"][1], str)


scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=5),
    st.binary(max_size=5),
    st.builds(np.float32, st.floats(width=32)),
    st.builds(np.int64, st.integers(-(2**63), 2**63 - 1)),
    st.just(Colour.RED),
    st.just(Opaque()),
    st.builds(Path, st.text(max_size=5)),
)
keys = st.one_of(st.text(max_size=3), st.integers(), st.none(), st.tuples(st.integers()))
nested = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.lists(inner, max_size=4).map(tuple),
        st.dictionaries(keys, inner, max_size=4),
        st.frozensets(st.integers(), max_size=4),
        st.lists(st.floats(), max_size=4).map(np.array),
        st.builds(Point, st.floats(), st.frozensets(st.integers(), max_size=3)),
    ),
    max_leaves=20,
)


@given(nested)
def test_to_jsonable_output_always_dumps(value: object) -> None:
    out = to_jsonable(value)
    assert json.loads(json.dumps(out, allow_nan=False)) == out


def rendered(path: Path, **kwargs: Any) -> str:
    console = Console(record=True, width=140, file=io.StringIO())
    render_trace(path, console=console, **kwargs)
    return console.export_text()


def test_render_shows_header_and_steps(path: Path) -> None:
    write(path, episodes=("ep-1", "ep-2"))
    text = rendered(path)
    assert "episode ep-1 · 4 steps · outcome: failed" in text
    assert "execute 1" in text and "fallback 1" in text and "abort 1" in text
    assert "interventions 2 · regenerations 1 · LLM calls 5 · tokens 686" in text
    assert "p50 17.5 ms · max 511.0 ms" in text
    for word in ("execute_with_feedback", "fallback", "abort", '{"say": "hello"'):
        assert word in text
    flat = "".join(text.split())  # the free-text column is last, so wrapping keeps it in order
    assert "".join(fallback().reason.split()) in flat
    assert "✓ all 2" in text and "(1 within tolerance)" in text
    assert "rejected: safety_filter ✗" in text
    flat_text = " ".join(text.split())
    assert (
        "shown: ep-1 (the first where the guard intervened); 1 other episode(s): ep-2;" in flat_text
    )
    assert "select one with --episode ID" in flat_text
    assert "attempt 1" not in text


def test_render_opens_on_the_first_episode_where_the_guard_intervened(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    with open_trace(path) as trace:
        trace.record(execute(), episode="unguarded", t=0)
        trace.record(fallback(), episode="guarded", t=0)
    text = " ".join(rendered(path).split())
    assert (
        "episode guarded" in text
        and "shown: guarded (the first where the guard intervened)" in text
    )


def test_render_verbose_lists_attempts_and_candidates(path: Path) -> None:
    write(path, episodes=("ep-1", "ep-2"))
    text = rendered(path, episode="ep-2", verbose=True)
    assert "episode ep-2" in text and "other episode" not in text
    assert "attempt 2" in text and FORCED.text in text
    assert "invalid: expected A, B or C" in text and "safety_filter ✗ margin -0.12" in text


def test_render_unknown_episode_lists_the_known_ones(path: Path) -> None:
    write(path, episodes=("ep-1", "ep-2"))
    with pytest.raises(ConfigError, match="'nope' not found; expected one of ep-1, ep-2"):
        rendered(path, episode="nope")


def test_render_an_empty_trace(tmp_path: Path) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_text("")
    assert "holds no decisions" in rendered(path)
