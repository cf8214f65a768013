"""Fixtures of the edge attacks (tenancy, limits, retries): the tools example policy served with
client and admin keys (``edge_helpers.edge_service``) in front of the fake upstream."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from edge_helpers import edge_service
from fake_openai_server import API_KEY, FakeOpenAIServer
from serve_helpers import tools_guard

from governor.guard import Guard


@pytest.fixture
def guard(server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch) -> Iterator[Guard]:
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
    made = tools_guard(server.url)
    yield made
    made.backend.close()  # type: ignore[attr-defined]


@pytest.fixture
def base(guard: Guard) -> Iterator[str]:
    with edge_service(guard) as url:
        yield url
