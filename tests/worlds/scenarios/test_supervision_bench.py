"""`governor bench supervision`: the JSON keys, skipping absent scenarios, the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from governor.cli import main
from governor.errors import ConfigError
from governor.worlds.scenarios import bench


def test_the_bench_writes_the_json_keys_and_the_plot(tmp_path: Path) -> None:
    out, plot = tmp_path / "sup.json", tmp_path / "sup.png"
    status = main(
        ["bench", "supervision", "--episodes", "2", "--scenarios", "deescalation,training",
         "--timing-decisions", "50", "--json", str(out), "--plot", str(plot)]
    )  # fmt: skip
    assert status == 0 and plot.stat().st_size > 0
    data = json.loads(out.read_text())
    assert set(data["scenarios"]) == {"deescalation", "training"}
    for s in data["scenarios"].values():
        assert {"metric", "lower_is_better", "treatment", "ablation", "conditions"} <= set(s)
        assert s["treatment"] in s["conditions"] and s["ablation"] in s["conditions"]
    assert data["timing"]["decisions"] == 50 and data["timing"]["median_ms"] > 0


def test_an_absent_scenario_module_is_skipped_with_a_note(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bench, "PACKAGE", "governor.worlds.scenarios.nothing_here")
    assert bench.load_scenario("deescalation") is None


def test_unknown_scenarios_are_refused() -> None:
    with pytest.raises(ConfigError, match="scenarios"):
        bench.SupervisionBenchConfig(scenarios="deescalation,karaoke")
