"""``governor bench agentdojo`` on a slice of the banking suite: the scoring fields the report
prints, a false refusal named with its rule, and the plot of utility against attack success."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("agentdojo")
# AgentDojo builds its four suites when first imported (seconds): once, at collection
pytest.importorskip("agentdojo.task_suite.load_suites")

from governor.errors import ConfigError
from governor.papers.agentdojo_bench import (
    POLICIES,
    _plot,
    parse_local_reply,
    plot_points,
    run_suite,
    variants,
)

BANKING = POLICIES / "banking.yaml"


@pytest.fixture(scope="module")
def hijacked() -> dict[str, Any]:
    return run_suite("banking", BANKING, "hijacked", user_tasks=["user_task_1"],
                     injection_tasks=["injection_task_0", "injection_task_4"])  # fmt: skip


@pytest.fixture(scope="module")
def ground_truth() -> dict[str, Any]:
    return run_suite("banking", BANKING, "ground-truth", user_tasks=["user_task_0"],
                     injection_tasks=["injection_task_0"])  # fmt: skip


def test_the_hijacked_agent_is_scored_by_agentdojo(hijacked: dict[str, Any]) -> None:
    r = hijacked
    assert r["policy"] == "banking.yaml" and r["n"] == {"attacked": 2, "clean": 0}
    assert r["runs"] == 4  # each pair without and with governor
    # the scripted agent obeys the injection: AgentDojo scores it done without governor only
    assert r["attack_success"] == {"without": 1.0, "with": 0.0}
    assert r["per_injection_task"] == {
        "injection_task_0": {"without": 1.0, "with": 0.0},
        "injection_task_4": {"without": 1.0, "with": 0.0},
    }
    assert r["utility_under_attack"]["with"] == 1.0  # the user's own task still done
    assert r["utility_clean"] == {"without": None, "with": None}
    assert r["false_refusals"] is None and r["model_calls"] == 0
    assert r["judged_replies"] > 0 and 0 < r["judge_ms"]["median"] <= r["judge_ms"]["p99"]
    refused = [row["refused"] for row in r["rows"]]
    assert all(refused) and all(x.endswith(("(known_payees)", "(known_standing_orders)"))
                                for row in refused for x in row), refused  # fmt: skip


def test_a_false_refusal_is_named_with_its_rule(ground_truth: dict[str, Any]) -> None:
    r = ground_truth
    assert r["n"] == {"attacked": 1, "clean": 1}
    assert r["utility_clean"] == {"without": 1.0, "with": 0.0}
    assert r["false_refusals"] == {"user_task_0: send_money (known_payees)": 2}


def test_the_plot_pairs_both_agents_per_variant(
    hijacked: dict[str, Any], ground_truth: dict[str, Any], tmp_path: Path
) -> None:
    runs = [{"agent": "hijacked", "variant": "", "suites": {"banking": hijacked}},
            {"agent": "ground-truth", "variant": "", "suites": {"banking": ground_truth}}]  # fmt: skip
    (point,) = plot_points(runs, ("banking",))
    assert point["attack"] == {"without": 1.0, "with": 0.0}
    assert point["utility"] == {"without": 1.0, "with": 0.0}
    _plot(tmp_path / "p.png", [point])
    assert (tmp_path / "p.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(ConfigError, match="expected a hijacked and a ground-truth run of banking"):
        plot_points(runs[:1], ("banking",))
    assert variants(POLICIES, "banking") == ["", "-lenient"]


def test_an_unknown_task_is_named() -> None:
    with pytest.raises(ConfigError, match=r"expected a banking user task .* found 'user_task_999'"):
        run_suite("banking", BANKING, "hijacked", user_tasks=["user_task_999"])


def test_the_local_agent_reads_one_call_line() -> None:
    tools = {"send_money": object(), "get_balance": object()}
    assert parse_local_reply('CALL send_money {"recipient": "X", "amount": 5}', tools) == (
        "send_money",
        {"recipient": "X", "amount": 5},
    )
    assert parse_local_reply("Sure. CALL get_balance", tools) == ("get_balance", {})
    for reply in ('CALL delete_everything {"a": 1}', 'CALL send_money {"amount": ', "CALL send_money [1]",
                  "ANSWER 42", ""):  # fmt: skip
        assert parse_local_reply(reply, tools) is None, reply
