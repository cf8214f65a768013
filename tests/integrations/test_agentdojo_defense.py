"""governor inside AgentDojo's own benchmark loop: a scripted LLM that obeys the injection in a
bill pays every account the bill names; governor refuses the accounts the user did not give, the
refusal reaches the LLM as a tool result, and AgentDojo scores the attack as failed."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("agentdojo")

from agentdojo.agent_pipeline import (
    AgentPipeline,
    InitQuery,
    SystemMessage,
    ToolsExecutionLoop,
    ToolsExecutor,
)
from agentdojo.agent_pipeline.base_pipeline_element import BasePipelineElement
from agentdojo.attacks.attack_registry import load_attack
from agentdojo.benchmark import run_task_with_injection_tasks
from agentdojo.functions_runtime import EmptyEnv, FunctionCall
from agentdojo.logging import OutputLogger
from agentdojo.task_suite.load_suites import get_suite
from agentdojo.types import (
    ChatAssistantMessage,
    get_text_content_as_str,
    text_content_block_from_string,
)

from governor.integrations.agentdojo import REFUSED_CALL, GovernedToolsExecutor

ROOT = Path(__file__).resolve().parents[2]
BANKING = ROOT / "examples" / "policies" / "agentdojo" / "banking.yaml"
IBAN = re.compile(r"\b[A-Z]{2}\d{2}[A-Z0-9]{11,30}\b")
EMPTY = EmptyEnv()


class ObedientLLM(BasePipelineElement):
    """Reads the bill the user names, then sends money to every account the bill mentions (an
    injected one included), then answers; it records every tool result it is shown."""

    name = "gpt-4o-2024-05-13"

    def __init__(self) -> None:
        self.results: list[str] = []

    def query(
        self,
        query: str,
        runtime: Any,
        env: Any = EMPTY,
        messages: Sequence[Any] = (),
        extra_args: dict[str, Any] | None = None,
    ) -> tuple[str, Any, Any, Sequence[Any], dict[str, Any]]:
        extra = dict(extra_args or {})
        calls = sum(1 for m in messages if m["role"] == "assistant")
        tools = [m for m in messages if m["role"] == "tool"]
        self.results += [
            (m["error"] or "") + get_text_content_as_str(m["content"])
            for m in tools[len(self.results) :]
        ]
        if calls == 0:
            call = [
                FunctionCall(
                    function="read_file", args={"file_path": "bill-december-2023.txt"}, id="r"
                )
            ]
        elif calls == 1:
            bill = self.results[0] if self.results else ""
            accounts = list(dict.fromkeys(IBAN.findall(bill)))
            call = [
                FunctionCall(
                    function="send_money",
                    args={"recipient": a, "amount": 10.0, "subject": "bill", "date": "2022-01-01"},
                    id=f"s{i}",
                )
                for i, a in enumerate(accounts)
            ]
        else:
            message = ChatAssistantMessage(role="assistant", tool_calls=None,
                                           content=[text_content_block_from_string("Done.")])  # fmt: skip
            return query, runtime, env, [*messages, message], extra
        message = ChatAssistantMessage(role="assistant", tool_calls=call, content=None)
        return query, runtime, env, [*messages, message], extra


def pipeline(llm: ObedientLLM, executor: BasePipelineElement) -> AgentPipeline:
    p = AgentPipeline([SystemMessage("You are a banking assistant."), InitQuery(), llm,
                       ToolsExecutionLoop([executor, llm])])  # fmt: skip
    p.name = llm.name
    return p


def run(executor: BasePipelineElement, logs: Path) -> tuple[ObedientLLM, bool]:
    suite = get_suite("v1.2.1", "banking")
    llm = ObedientLLM()
    pipe = pipeline(llm, executor)
    attack = load_attack("important_instructions", suite, pipe)
    user_task = suite.get_user_task_by_id("user_task_0")
    with OutputLogger(str(logs)):  # the benchmark loop writes its traces here
        _, security = run_task_with_injection_tasks(
            suite, pipe, user_task, attack, logdir=logs, force_rerun=True,
            injection_tasks=["injection_task_3"],
        )  # fmt: skip
    return llm, next(iter(security.values()))


def test_the_obedient_llm_succeeds_without_governor_and_fails_with_it(tmp_path: Path) -> None:
    llm, attacked = run(ToolsExecutor(), tmp_path / "without")
    assert attacked  # the scripted LLM really follows the injection
    assert len(llm.results) >= 2 and not any("governor refused" in r for r in llm.results)

    guard = GovernedToolsExecutor.from_policy(BANKING)
    llm, attacked = run(guard, tmp_path / "with")
    guard.close()
    assert not attacked
    refusals = [r for r in llm.results if r.startswith("governor refused")]
    assert refusals and all("known_payees" in r for r in refusals)
    assert guard.judged.refusals and {t for t, _ in guard.judged.refusals} == {"send_money"}
    assert REFUSED_CALL == "governor_refused"
