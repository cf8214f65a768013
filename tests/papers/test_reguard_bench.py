"""`governor bench reguard`: the tables' rows, the metrics' plumbing, files and refusals."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from reguard_helpers import small_reguard_baselines

from governor.cli import main
from governor.core import Attempt, Candidate, Decision, DecisionKind, Verdict
from governor.errors import ConfigError
from governor.papers.reguard import ReGuardBenchConfig, run
from governor.safety_values.learned import calibrated_margin
from governor.worlds.driving.env import DrivingParams
from governor.worlds.driving.grid_value import GridSpec, load_or_compute
from governor.worlds.driving.reguard import MonitorLog

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module", autouse=True)
def small_baselines() -> Iterator[None]:
    """The one-step and imitation baselines on a small budget (reguard_helpers)."""
    with small_reguard_baselines():
        yield


@pytest.fixture(scope="module")
def driving(tmp_path_factory: pytest.TempPathFactory) -> dict:
    empty = tmp_path_factory.mktemp("no-checkpoints")
    cfg = ReGuardBenchConfig(
        tables="driving", episodes=12, checkpoints=str(empty), monitor_steps=80
    )
    return run(cfg, progress=False)


def test_missing_checkpoints_leave_their_rows_out_and_say_so(driving: dict) -> None:
    notes = " ".join(driving["notes"])
    assert "no state checkpoint" in notes and "no text checkpoint" in notes
    guards = {r["guard"] for r in driving["driving"]["shielding"]}
    assert guards == {"none", "exact", "llamaguard", "llamaguard_myopic"}


def test_the_exact_filter_is_the_reference_of_rollout_f1(driving: dict) -> None:
    rows = driving["driving"]["shielding"]
    for row in rows:
        if row["guard"] == "exact":
            assert row["rollout_f1"] == 1.0 and row["success_rate"] == 1.0
        if row["guard"] == "none":
            assert row["intervention_rate"] == 0.0
    unguarded = [r for r in rows if r["guard"] == "none"]
    assert any(r["failure_rate"] > 0 for r in unguarded)  # the starts are not all easy
    assert all(r["rollout_f1"] < 1.0 for r in unguarded)


def test_table1_scores_the_monitors_on_the_erratic_policy(driving: dict) -> None:
    table = {r["guard"]: r for r in driving["driving"]["table1"]}
    exact = table["exact"]
    assert exact["policy"] == "erratic" and exact["value_f1"] == pytest.approx(1.0)
    assert 0 < exact["scored"] <= 80
    # its own recovery is the best one: whatever it admits, it can keep safe
    assert exact["tp_rate"] is not None and exact["tp_rate"] > 0.9
    lg = table["llamaguard"]
    assert lg["policy"] == "erratic" and 0 < lg["scored"] <= 80
    # a one-step monitor admits actions after which stopping is the only "recovery"
    assert lg["tp_rate"] is not None and lg["tn_rate"] is not None and lg["tn_rate"] < 1.0
    assert lg["intervention_rate"] > 0.0  # it does reject some actions
    alone = table["myopic_privileged (run alone)"]
    # run alone, with no monitor: no monitor metrics, no interventions
    assert "value_f1" not in alone and alone["rollout_f1"] is None
    assert alone["policy"] == "myopic_privileged" and alone["intervention_rate"] == 0.0
    assert 0.0 <= alone["success_rate"] <= 1.0 and alone["episodes"] == 12


def test_monitor_log_keeps_the_first_proposal_and_its_verdicts() -> None:
    log = MonitorLog()
    ok, no = Verdict.allow("a"), Verdict.reject("b", 0.5, "too close")
    attempt = Attempt((Candidate(2), Candidate(0)), ((ok, no), (ok, ok)), None, 1, None)
    decision = Decision(DecisionKind.EXECUTE, 0, attempts=(attempt,))
    log.record(decision, episode="e", t=3, extra={"state": [1.0, 2.0, 0.1]})
    log.record(decision, episode="e", t=4, extra=None)  # no state: nothing to score
    assert log.actions == [2] and log.allowed == [False] and log.times == [3]
    assert np.allclose(log.states[0], [1.0, 2.0, 0.1])


def test_calibrated_margin_removes_doomed_admissions() -> None:
    gv = load_or_compute(DrivingParams(), GridSpec(), progress=False)[0]
    rng = np.random.default_rng(0)
    states = np.column_stack(
        [rng.uniform(0, 10, 3000), rng.uniform(0, 3, 3000), rng.uniform(-3, 3, 3000)]
    )
    exact = gv.q_batch(states)
    noisy = exact + rng.normal(0.0, 0.1, exact.shape)  # a learned Q with errors everywhere

    def q_states(s: np.ndarray) -> np.ndarray:
        return noisy

    def doomed_share(m: float) -> float:
        admitted = noisy > m
        return float((exact[admitted] <= 0).mean())

    m = calibrated_margin(q_states, gv.q_batch, states, false_safe=0.005)
    assert m > 0.0
    assert doomed_share(m) <= 0.005 < doomed_share(0.0)
    assert calibrated_margin(q_states, gv.q_batch, states, false_safe=1.0, floor=0.25) == 0.25


def test_the_command_writes_json_with_the_backseat_tables(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    code = main(
        [
            "bench",
            "reguard",
            "--tables",
            "backseat",
            "--episodes",
            "4",
            "--checkpoints",
            str(tmp_path),
            "--json",
            str(out),
        ]
    )
    assert code == 0
    data = json.loads(out.read_text())
    settings = {(r["setting"], r["persona"]) for r in data["backseat"]["rows"]}
    assert settings == {(s, p) for s in ("full", "shielded") for p in ("none", "urgent")}
    assert "driving" not in data and data["config"]["tables"] == "backseat"


def test_bad_configuration_is_refused() -> None:
    with pytest.raises(ConfigError, match="tables"):
        ReGuardBenchConfig(tables="everything")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="false_safe"):
        ReGuardBenchConfig(false_safe=2.0)


def test_the_zero_shot_row_counts_every_call_of_its_judge_and_recovery(tmp_path: Path) -> None:
    from governor.backends.scripted import ScriptedBackend

    def reply(messages: tuple) -> str:
        return "NO" if "YES or NO" in messages[-1].content else "B"

    backend = ScriptedBackend([reply] * 10_000)
    cfg = ReGuardBenchConfig(
        tables="driving",
        episodes=2,
        learned="",
        checkpoints=str(tmp_path),
        zero_shot=True,
        monitor_steps=5,
    )
    rows = run(cfg, backend=backend, progress=False)["driving"]["shielding"]
    zero = [r for r in rows if r["guard"] == "zero_shot"]
    assert [r["policy"] for r in zero] == ["nominal", "erratic"]
    for row in zero:
        steps = row["mean_steps"] * row["episodes"]
        assert row["intervention_rate"] == 1.0  # the judge said NO to every proposal
        assert row["llm_calls"] == 2 * steps  # one question and one recovery choice a step


def test_training_bounded_by_steps_gives_the_same_tables_twice(tmp_path: Path) -> None:
    tables = []
    for folder in ("a", "b"):
        cfg = ReGuardBenchConfig(
            tables="driving",
            episodes=2,
            learned="state",
            train_steps=100,
            checkpoints=str(tmp_path / folder),
            monitor_steps=20,
        )
        result = run(cfg)
        assert "state value trained here for 100 gradient steps" in result["notes"]
        tables.append(result["driving"]["table1"])
    assert tables[0] == tables[1]
