"""Fixtures of the service tests: a guard on the tool-call policy in front of the fake upstream,
served on a loopback port."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fake_openai_server import API_KEY, FakeOpenAIServer
from serve_helpers import tools_guard

from governor.guard import Guard
from governor.serve import create_app
from governor.serve.local import serving


@pytest.fixture
def guard(server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch) -> Iterator[Guard]:
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)  # the upstream's key: must never be echoed
    made = tools_guard(server.url)
    yield made
    made.backend.close()  # type: ignore[attr-defined]


@pytest.fixture
def base(guard: Guard) -> Iterator[str]:
    with serving(create_app(guard)) as url:
        yield url
