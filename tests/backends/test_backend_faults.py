"""The HTTP backend under faults: one deadline per call, bounded bodies, a circuit breaker, and
every failed call counted."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest
from fake_openai_server import FakeOpenAIServer, Reply

from governor.backends import OpenAIBackend
from governor.backends.breaker import CircuitBreaker
from governor.backends.openai import MAX_RESPONSE_BYTES
from governor.config import BackendConfig
from governor.errors import BackendError, BackendResponseError, BackendTimeout, BackendUnavailable
from governor.usage import metered

CHAT = "/chat/completions"
MakeBackend = Callable[..., OpenAIBackend]


def test_a_dripping_answer_is_cut_at_the_deadline(
    server: FakeOpenAIServer, make_backend: MakeBackend
) -> None:
    server.script(CHAT, Reply(body={"choices": [{"message": {"content": "x" * 400}}]}, drip_s=0.02))
    backend = make_backend(timeout_s=0.3, max_retries=2)
    start = time.perf_counter()
    with pytest.raises(BackendTimeout):
        backend.chat("hi")
    assert time.perf_counter() - start < 0.8


def test_retries_stay_within_one_deadline(closed_port_url: str) -> None:
    # 10 retries with a backoff doubling from 0.2 s would take minutes; the call's 0.5 s
    # deadline stops them (the bound leaves room for a loaded machine, not for the retries)
    config = BackendConfig(closed_port_url, "m", timeout_s=0.5, max_retries=10, backoff_s=0.2)
    start = time.perf_counter()
    with OpenAIBackend(config) as backend, pytest.raises(BackendUnavailable) as info:
        backend.chat("hi")
    assert time.perf_counter() - start < 0.5 + 1.0
    assert 1 <= info.value.requests < 10  # type: ignore[attr-defined]


def test_a_huge_answer_is_refused(server: FakeOpenAIServer, make_backend: MakeBackend) -> None:
    server.script(CHAT, Reply(body=b"x" * (MAX_RESPONSE_BYTES + 10)))
    with pytest.raises(BackendResponseError, match="at most"):
        make_backend(max_retries=0, timeout_s=10.0).chat("hi")


@pytest.mark.parametrize("fault", [{"truncate": True}, {"reset": True}, {"body": "<html>"}])
def test_broken_answers_are_backend_errors(
    server: FakeOpenAIServer, make_backend: MakeBackend, fault: dict[str, Any]
) -> None:
    server.script(CHAT, Reply(**fault))
    with metered() as meter, pytest.raises(BackendError):
        make_backend(max_retries=0).chat("hi")
    assert meter.total.calls == 1 and meter.total.failed == 1


def test_the_circuit_opens_after_consecutive_failures_and_a_probe_closes_it(
    server: FakeOpenAIServer, make_backend: MakeBackend
) -> None:
    server.script(CHAT, *[Reply(500, "down")] * 3)
    backend = make_backend(max_retries=0, breaker_failures=3, breaker_cooldown_s=0.3)
    with metered() as meter:
        for _ in range(3):
            with pytest.raises(BackendError, match="HTTP 500"):
                backend.chat("hi")
        start = time.perf_counter()
        with pytest.raises(BackendUnavailable, match="circuit is open"):
            backend.chat("hi")
        assert time.perf_counter() - start < 0.25  # refused at once, not after the 0.3 s cooldown
    assert len(server.requests_to(CHAT)) == 3  # the refused call made no request
    assert (meter.total.calls, meter.total.failed) == (3, 4)
    time.sleep(0.35)
    assert backend.breaker.state == "half_open"
    assert backend.chat("hi").text == "answer 0"
    assert backend.breaker.state == "closed"


def test_a_client_error_does_not_open_the_circuit(
    server: FakeOpenAIServer, make_backend: MakeBackend
) -> None:
    server.script(CHAT, *[Reply(400, "bad")] * 4)
    backend = make_backend(max_retries=0, breaker_failures=2)
    for _ in range(4):
        with pytest.raises(BackendError, match="HTTP 400"):
            backend.chat("hi")
    assert backend.breaker.state == "closed"


def test_a_failed_probe_opens_the_circuit_again() -> None:
    now = [0.0]
    breaker = CircuitBreaker(2, 10.0, clock=lambda: now[0])
    breaker.failure()
    breaker.before()
    breaker.failure()
    with pytest.raises(BackendUnavailable, match="2 consecutive calls failed"):
        breaker.before()
    now[0] = 10.0
    breaker.before()  # the probe
    with pytest.raises(BackendUnavailable, match="probe in flight"):
        breaker.before()
    breaker.failure()
    assert breaker.state == "open"
    with pytest.raises(BackendUnavailable):
        breaker.before()
