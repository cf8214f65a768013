"""Fixtures of the attack tests: the support-agent example policy served in front of the fake
upstream (``examples/policies/support_agent.yaml``), as ``docs/security.md`` describes it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fake_openai_server import API_KEY, FakeOpenAIServer
from security_helpers import close_clients, served, support_guard

from governor.guard import Guard


@pytest.fixture
def guard(server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch) -> Guard:
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
    return support_guard(server.url)


@pytest.fixture
def base(guard: Guard) -> Iterator[str]:
    with served(guard) as url:
        yield url


@pytest.fixture(autouse=True)
def _closed_clients() -> Iterator[None]:
    yield
    close_clients()
