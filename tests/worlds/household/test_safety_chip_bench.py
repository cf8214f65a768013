"""The Safety Chip and LTL speed benchmarks on a tiny budget."""

from __future__ import annotations

import argparse
import io
import json
from pathlib import Path

import pytest
import yaml
from rich.console import Console

from governor.backends.scripted import ScriptedBackend
from governor.bench import ltl_speed
from governor.errors import ConfigError
from governor.ltl import patterns as p
from governor.report import Section
from governor.trace import read_trace
from governor.worlds.household import bench as safety_chip
from governor.worlds.household.bench_scoring import Resolver, default_resolver, judge, task_specs
from governor.worlds.household.env import find_task

ROW_KEYS = {
    "agent",
    "experiment",
    "n_constraints",
    "verified",
    "success_rate",
    "safety_rate",
    "llm_calls",
}
SMALL = {"constraints": "1-2", "repeats": 1, "tasks": "rooms/0_1,mobile_manip/0_9"}


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser()
    bench = top.add_subparsers(dest="bench")
    safety_chip.add_parser(bench)
    ltl_speed.add_parser(bench)
    return top


def test_rows_have_the_schema_and_the_safety_chip_is_safe():
    result = safety_chip.run(safety_chip.SafetyChipBenchConfig(**SMALL), progress=False)
    rows = result["rows"]
    assert {(r["agent"], r["experiment"], r["n_constraints"]) for r in rows} == {
        (a, e, k)
        for a in ("base", "nl_constraints", "safety_chip")
        for e in ("mobile_manip", "rooms")
        for k in (1, 2)
    }
    for r in rows:
        assert set(r) >= ROW_KEYS and r["verified"] is False and r["llm_calls"] == 0
    chip = [r for r in rows if r["agent"] == "safety_chip"]
    assert all(r["safety_rate"] == 1.0 and r["success_rate"] == 1.0 for r in chip)
    base = [r for r in rows if r["agent"] == "base"]
    assert all(r["episodes"] == 1 for r in base + chip)
    assert all(r["success_rate"] is None for r in rows if r["agent"] == "nl_constraints")
    assert result["formulas"].startswith("offline translator (not verified)")
    assert "rooms/12_2" not in result["tasks"]
    json.dumps(result)  # JSON-ready


def test_table_has_the_layout_of_table_one():
    result = safety_chip.run(
        safety_chip.SafetyChipBenchConfig(**{**SMALL, "constraints": "1"}), progress=False
    )
    lines = list(safety_chip.table_lines(result))
    assert lines[0] == [
        "agent",
        "k",
        "Four Room success",
        "Four Room safety",
        "Mobile Manip success",
        "Mobile Manip safety",
    ]
    assert [line[:2] for line in lines[1:]] == [
        ["base", "1"],
        ["base", "all"],
        ["nl_constraints", "1"],
        ["nl_constraints", "all"],
        ["safety_chip", "1"],
        ["safety_chip", "all"],
    ]
    assert lines[3][2:] == ["n/a"] * 4 and lines[5][2:] == ["100%"] * 4


def test_known_issues_and_cells_the_scene_cannot_achieve_are_left_out():
    cfg = safety_chip.SafetyChipBenchConfig(
        experiment="mobile_manip", constraints="1", repeats=1, tasks="mobile_manip/74_1"
    )
    result = safety_chip.run(cfg, progress=False)
    (cell,) = result["unachievable"]
    assert cell["task"] == "mobile_manip/74_1" and "pillow on sofa" in cell["conflict"][0]
    assert all(r["episodes"] == 0 for r in result["rows"])
    cfg = safety_chip.SafetyChipBenchConfig(constraints="1", tasks="rooms/12_2")
    every = safety_chip.run(cfg, progress=False)
    assert set(every["excluded_tasks"]) == {"rooms/12_2"} and every["tasks"] == []


def test_spec_file_entries_count_as_verified(tmp_path: Path):
    task = find_task("rooms/0_1")
    resolve = default_resolver()
    entries = []
    for sentence in task.constraints["1"]:
        formula, verified = resolve(sentence, task)
        assert formula is not None and verified is False
        entries.append({"text": sentence, "formula": str(formula), "verified": True})
    spec = tmp_path / "accepted.yaml"
    spec.write_text(yaml.safe_dump({"constraints": entries}), encoding="utf-8")
    cfg = safety_chip.SafetyChipBenchConfig(
        constraints="1", repeats=1, tasks="rooms/0_1", spec=str(spec)
    )
    result = safety_chip.run(cfg, progress=False)
    assert all(r["verified"] for r in result["rows"] if r["episodes"])
    assert "1 of 1 entries person-verified" in result["formulas"]


def test_judge_reads_the_trace_to_its_end():
    task = find_task("rooms/0_1")
    later = [("c1", "kitchen later", p.delayed_reaction("agent_at(bathroom)", "agent_at(kitchen)"))]
    specs = task_specs(task, ["kitchen later"], Resolver({"kitchen later": (later[0][2], True)}))
    assert specs.verified and specs.specs[0][2] == later[0][2]
    kitchen, bath = frozenset({"agent_at(kitchen)"}), frozenset({"agent_at(bathroom)"})
    assert judge(later, [kitchen, bath, kitchen]) and not judge(later, [kitchen, bath])


def test_llm_agents_are_measured_with_counted_calls():
    backend = ScriptedBackend([lambda messages: "[DONE]"] * 50)
    cfg = safety_chip.SafetyChipBenchConfig(
        agent="llm", experiment="rooms", constraints="1", repeats=1, tasks="rooms/0_1"
    )
    result = safety_chip.run(cfg, backend=backend, progress=False)
    by_agent = {r["agent"]: r for r in result["rows"]}
    assert set(by_agent) == {"base", "nl_constraints", "safety_chip"} and not result["notes"]
    assert all(r["episodes"] == 1 and r["llm_calls"] >= 1 for r in by_agent.values())
    # Stopping at once meets rooms/0_1's k=1 constraint, and its goal is empty.
    assert by_agent["nl_constraints"]["safety_rate"] == 1.0
    prompts = [m[0].content for m in backend.requests if m[0].role == "system"]
    assert any(find_task("rooms/0_1").constraints["1"][0] in s for s in prompts)


def test_command_writes_json_and_bad_counts_are_config_errors(tmp_path: Path):
    out = tmp_path / "chip.json"
    trace = tmp_path / "chip.jsonl"
    flags = ["--experiment", "rooms", "--constraints", "1", "--tasks", "rooms/0_1", "--repeats"]
    flags += ["1", "--diverse", "--json", str(out), "--trace", str(trace)]
    args = parser().parse_args(["safety-chip", *flags])
    assert args.handler(args, Console(file=io.StringIO(), width=120)) == 0
    data = json.loads(out.read_text())
    assert data["config"]["diverse"] is True and data["rows"]
    decisions, episodes = read_trace(trace)
    assert decisions and set(episodes) == {"base-rooms/0_1-k1-0", "safety_chip-rooms/0_1-k1-0"}
    assert episodes["safety_chip-rooms/0_1-k1-0"]["success"] is True
    with pytest.raises(ConfigError, match="a range such as 1-5"):
        safety_chip.SafetyChipBenchConfig(constraints="0-7")


def test_demo_section_writes_its_json(tmp_path: Path):
    console = Console(file=io.StringIO(), width=120)
    section = safety_chip.demo_section(tmp_path, console)
    assert isinstance(section, Section) and section.table[0][0] == "agent"
    assert json.loads((tmp_path / "safety_chip.json").read_text())["rows"]
    assert "not a language model" in section.paragraphs[0]


def test_ltl_speed_rows_and_command(tmp_path: Path):
    result = ltl_speed.run(ltl_speed.LTLSpeedConfig(sizes="1,5", steps=40))
    assert [r["n_constraints"] for r in result["rows"]] == [1, 5]
    assert all(set(r) == {"n_constraints", "step_us_p50", "first_step_ms"} for r in result["rows"])
    out = tmp_path / "speed.json"
    args = parser().parse_args(["ltl-speed", "--sizes", "1,2", "--steps", "20", "--json", str(out)])
    assert args.handler(args, Console(file=io.StringIO())) == 0
    assert [r["n_constraints"] for r in json.loads(out.read_text())["rows"]] == [1, 2]
    assert next(iter(ltl_speed.table_lines(result)))[0] == "constraints"
    with pytest.raises(ConfigError, match="comma-separated integers"):
        ltl_speed.LTLSpeedConfig(sizes="one")
