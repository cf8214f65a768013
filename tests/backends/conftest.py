"""Fixtures for backend tests: a live fake OpenAI-compatible server and backends pointed at it."""

from __future__ import annotations

import socket
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from fake_openai_server import API_KEY, FakeOpenAIServer

from governor.backends import OpenAIBackend
from governor.config import BackendConfig


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    fake = FakeOpenAIServer().start()
    yield fake
    fake.stop()


@pytest.fixture
def make_backend(server: FakeOpenAIServer) -> Iterator[Callable[..., OpenAIBackend]]:
    """Build a backend for the fake server; config fields may be overridden. Closed afterwards."""
    made: list[OpenAIBackend] = []

    def make(**overrides: Any) -> OpenAIBackend:
        values: dict[str, Any] = {
            "base_url": server.url,
            "model": "fake-model",
            "api_key": API_KEY,
            "timeout_s": 2.0,
            "max_retries": 2,
            "backoff_s": 0.0,
        }
        values.update(overrides)
        backend = OpenAIBackend(BackendConfig(**values))
        made.append(backend)
        return backend

    yield make
    for backend in made:
        backend.close()


@pytest.fixture
def closed_port_url() -> str:
    """The URL of a local port nothing listens on (connections are refused)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"
