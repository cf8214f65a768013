"""Model-backed agents and users in the scenarios: every call counted, failures reported."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fake_openai_server import API_KEY, FakeOpenAIServer, Reply

from governor.backends.base import Message
from governor.backends.scripted import ScriptedBackend
from governor.cli import main
from governor.errors import BackendError
from governor.worlds.scenarios import deescalation
from governor.worlds.scenarios.crisis_episode import Arm, episode
from governor.worlds.scenarios.llm_agents import MODE_PROMPTS, PERSONA, SUPPORT_PROMPT

INTENT = "I've already decided, I just wanted to say it somewhere."
DISMISSIVE = "Don't worry, it'll pass. Anyway, anything fun planned?"


def scripted(*, fail_agent_at: int, empty_agent_at: int) -> ScriptedBackend:
    """The support chatbot dismisses (one call fails, one reply is empty); the persona states
    intent at once, so every rollout reaches the unsafe region after one call."""
    agent_calls = 0

    def answer(messages: tuple[Message, ...]) -> str:
        nonlocal agent_calls
        if PERSONA in messages[0].content:
            return INTENT
        assert messages[0].content == SUPPORT_PROMPT
        agent_calls += 1
        if agent_calls == fail_agent_at:
            raise BackendError("scripted: the endpoint is down")
        return "" if agent_calls == empty_agent_at else DISMISSIVE

    return ScriptedBackend([answer] * 2000)


def test_the_crisis_agent_and_the_lookahead_persona_go_through_the_backend() -> None:
    backend = scripted(fail_agent_at=2, empty_agent_at=3)
    ep = episode(Arm("lookahead", "llm", 0.25), 0, 0, backend)
    assert ep.llm.calls == len(backend.requests) > 0  # every request is counted
    assert ep.llm.failed == 1 and ep.llm.unparsable == 1 and ep.llm.errors >= 1
    persona_calls = sum(PERSONA in r[0].content for r in backend.requests)
    assert persona_calls == ep.sim_turns == ep.rollouts  # one call per simulated user turn
    assert ep.protocol == 0  # the persona states intent in every rollout: the protocol at once


def test_a_failed_agent_call_falls_back_and_is_counted() -> None:
    backend = ScriptedBackend([BackendError("down")] * 50)
    ep = episode(Arm("single_step"), 0, 1, backend)
    assert ep.llm.failed == ep.llm.calls > 0 and ep.llm.errors == ep.llm.calls
    assert ep.protocol is None or ep.protocol >= 0  # the fallback spoke; nothing unchecked


def test_the_deescalation_modes_speak_through_the_backend() -> None:
    backend = ScriptedBackend([lambda m: "Okay."] * 2000)
    tally, _ = deescalation.episode("fixed_mode", 0, steps=6, backend=backend)
    assert tally.llm.calls == len(backend.requests) == 6 and tally.llm.failed == 0
    calls = 0
    for seed in range(4):  # the supervisor's talking modes too (silence and crisis: fixed lines)
        tally, _ = deescalation.episode("supervisor", seed, backend=backend)
        calls += tally.llm.calls
    assert calls == len(backend.requests) - 6 > 0
    prompts = {r[0].content for r in backend.requests}
    assert prompts <= set(MODE_PROMPTS.values())


@pytest.mark.slow
def test_the_bench_takes_the_backend_flags(tmp_path: Path, server: FakeOpenAIServer) -> None:
    down = Reply(500, {"error": {"message": "boom"}})
    server.script("/chat/completions", down, down, down)  # the first call fails after 2 retries
    out = tmp_path / "sup.json"
    status = main(
        ["bench", "supervision", "--episodes", "1", "--scenarios", "crisis,deescalation",
         "--calibration-users", "1", "--timing-decisions", "0", "--json", str(out),
         "--base-url", server.url, "--model", "fake-model", "--api-key", API_KEY]
    )  # fmt: skip
    assert status == 0
    data = json.loads(out.read_text())
    assert "fake-model" in data["agents"] or "openai" in data["agents"].lower()
    sent = len(server.requests_to("/chat/completions"))
    crisis = data["scenarios"]["crisis"]["table"]
    assert [r["condition"] for r in crisis] == [
        "single_step",
        "lookahead_old",
        "lookahead_calibrated",
    ]
    assert all(r["llm_calls_per_turn"] > 0 and r["simulator"] in ("-", "llm") for r in crisis)
    rows = {r["condition"]: r for r in data["scenarios"]["deescalation"]["table"]}
    assert rows["none"]["llm_calls_per_turn"] >= 1 and rows["fixed_mode"]["llm_calls_per_turn"] >= 1
    counted = sum(r["llm_calls_per_turn"] * 8 for r in crisis) + sum(
        r["llm_calls_per_turn"] * deescalation.STEPS for r in rows.values()
    )
    assert 0 < counted <= sent  # the calibration run's calls are made too, not in these rows
    details = data["scenarios"]["crisis"]["details"]
    calibration = [details["calibration_single_step"], *(c["llm"] for c in details["calibration"])]
    failed = sum(r["llm_failed_calls"] for r in crisis + list(rows.values()))
    failed += sum(c.get("llm_failed_calls", c.get("failed", 0)) for c in calibration)
    assert failed == 1  # the failed call is counted, not hidden (the guard fell back)
