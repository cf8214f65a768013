"""The local model as AgentDojo's agent through governor (``bench agentdojo --agent local``) on
one banking task: every step is a counted model call, governor's own calls stay zero."""

from __future__ import annotations

import pytest

from governor.backends.hf import HFBackend

pytest.importorskip("agentdojo")
pytest.importorskip("agentdojo.task_suite.load_suites")

from governor.papers.agentdojo_bench import LOCAL_STEPS, POLICIES, run_suite

pytestmark = pytest.mark.model


def test_the_local_model_runs_a_banking_task_through_the_guard(local_model: HFBackend) -> None:
    r = run_suite("banking", POLICIES / "banking.yaml", "local", user_tasks=["user_task_1"],
                  injection_tasks=[], model_path=local_model)  # fmt: skip
    assert r["n"] == {"attacked": 0, "clean": 1} and r["runs"] == 2
    # without and with governor, each run asks the model at least once and at most once a step
    assert 2 <= r["agent_model_calls"] <= 2 * (LOCAL_STEPS + 1)
    assert r["model_calls"] == 0
    assert r["utility_clean"]["without"] in (0.0, 1.0)
    assert r["utility_clean"]["with"] in (0.0, 1.0)
