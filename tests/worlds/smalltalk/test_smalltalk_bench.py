"""The small-talk benchmark at a tiny budget: schema, rates, table, files, CLI parser, demo."""

from __future__ import annotations

import argparse
import dataclasses
import io
import json
import math
from pathlib import Path

import pytest
from rich.console import Console

from governor.backends.scripted import ScriptedBackend
from governor.worlds.smalltalk import bench as smalltalk
from governor.worlds.smalltalk.metrics import CRITERIA, likeness, mean_drift, slope


@pytest.fixture(scope="module")
def result(data_dir: Path) -> dict:
    cfg = smalltalk.SmallTalkBenchConfig(
        conversations=3, turns=3, human_turns=30, data=str(data_dir)
    )
    return smalltalk.run(cfg)


def test_result_schema_and_rates(result: dict):
    assert 0.0 <= result["human_accept_rate"] <= 1.0 and result["human_turns"] == 120
    assert set(result["per_overlay_false_positive"]) >= {"brevity", "tone", "specificity"}
    assert all(0.0 <= v <= 1.0 for v in result["per_overlay_false_positive"].values())
    assert [c["condition"] for c in result["conversations"]] == ["base", "observer"]
    for c in result["conversations"]:
        assert c["turns"] == 9 and c["conversations"] == 3
        for key in ("implicit_rate", "forced_rate", "tolerated_rate"):
            assert 0.0 <= c[key] <= 1.0
        assert set(c["likeness"]) == set(c["drift"]) == set(CRITERIA)
        assert all(math.isfinite(v) and v >= 0 for v in c["likeness"].values())
        assert c["llm_calls_per_turn"] == 0.0 and c["observer_ms_p50"] >= 0.0
        assert c["regenerations"] >= 0 and c["fallbacks"] >= 0
        assert len(c["replies"]) == 9 and all(r["reply"] and r["user"] for r in c["replies"])
        fallbacks = sum(r["decision"] == "fallback" for r in c["replies"])
        assert fallbacks == c["fallbacks"]
        assert all(r["reason"] and r["candidates"] for r in c["replies"])  # why, and what was seen
    base = result["conversations"][0]
    assert base["implicit_rate"] == base["forced_rate"] == base["regenerations"] == 0
    assert result["base_label"] == "retrieval responder (not a model)"


def test_table_json_and_plot(result: dict, tmp_path: Path):
    rows = list(smalltalk.table_lines(result))
    assert rows[0][0] == "feature" and len(rows) == 1 + len(CRITERIA)
    assert len(list(smalltalk.rate_lines(result))) == 3
    smalltalk.write(result, tmp_path / "r.json", tmp_path / "r.png")
    data = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert "_runs" not in data and data["conversations"][1]["condition"] == "observer"
    assert (tmp_path / "r.png").stat().st_size > 10_000


def test_the_parser_takes_the_documented_flags(tmp_path: Path):
    parser = argparse.ArgumentParser()
    smalltalk.add_parser(parser.add_subparsers(dest="bench"))
    argv = ["smalltalk", "--base", "retrieval", "--conversations", "4", "--turns", "5"]
    args = parser.parse_args([*argv, "--seed", "2", "--json", str(tmp_path / "x.json")])
    assert args.handler is smalltalk.run_command
    assert (args.conversations, args.turns, args.seed, args.base) == (4, 5, 2, "retrieval")
    with pytest.raises(SystemExit):
        parser.parse_args(["smalltalk", "--base", "oracle"])


def test_metrics():
    assert likeness([1.0, 2.0, 3.0], [1.0, 2.0, 3.0]) == 0.0
    assert likeness([2.0, 3.0, 4.0], [1.0, 2.0, 3.0]) == pytest.approx(1 / 0.816496580927726)
    assert slope([1.0, 3.0, 5.0]) == pytest.approx(2.0) and slope([4.0]) == 0.0
    assert mean_drift([{"a": [0.0, 1.0]}, {"a": [0.0, 3.0]}]) == {"a": pytest.approx(2.0)}


def test_demo_section_writes_json_and_plot(data_dir: Path, tmp_path: Path, monkeypatch):
    monkeypatch.setenv("GOVERNOR_CONVERSATIONS", str(data_dir))
    run = smalltalk.run  # the section's layout at a test budget (make demo runs its own)

    def small(cfg: smalltalk.SmallTalkBenchConfig) -> dict:
        return run(dataclasses.replace(cfg, conversations=2, turns=2, human_turns=20, embed="off"))

    monkeypatch.setattr(smalltalk, "run", small)
    console = Console(file=io.StringIO(), width=160)
    section = smalltalk.demo_section(tmp_path, console)
    assert section.images == ["smalltalk.png"] and section.files == ["smalltalk.json"]
    assert (tmp_path / "smalltalk.png").is_file() and (tmp_path / "smalltalk.json").is_file()
    assert "not a model" in section.paragraphs[0] and section.table[0][0] == "feature"


def test_an_llm_base_and_an_llm_user_count_their_calls(data_dir: Path):
    def reply(messages) -> str:
        if "casual small talk with someone" in messages[0].content:
            return "Pretty good, thanks. Just got back from a walk."
        return "Oh nice, where did you walk?"

    backend = ScriptedBackend([reply] * 100)
    cfg = smalltalk.SmallTalkBenchConfig(
        base="llm", user="llm", conversations=1, turns=2, human_turns=10, data=str(data_dir)
    )
    result = smalltalk.run(cfg, backend=backend)
    for c in result["conversations"]:
        assert c["turns"] == 2 and c["llm_calls_per_turn"] == 1.0  # the user's calls excluded
    assert result["base_label"] == "llm chat policy" and result["human_drift"] == {}
