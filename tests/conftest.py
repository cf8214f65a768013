"""Fixtures shared across the test folders: where the human conversation corpora are.

torch runs on one thread in tests: the networks here are tiny, and two threads make their small
operations far slower on a 2-core machine (set before any test module imports torch). Hypothesis
runs without its per-example deadline.
"""

import os
import socket
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fake_openai_server import API_KEY, FakeOpenAIServer
from hypothesis import settings
from reguard_helpers import small_reguard_baselines

from governor.backends import OpenAIBackend
from governor.config import BackendConfig
from governor.data import shared_data_dir
from governor.overlays.corpora import corpus_path
from governor.worlds.driving import task as driving_task  # noqa: F401  # registers "driving"
from governor.worlds.driving.env import DrivingParams
from governor.worlds.driving.grid_value import GridSpec, GridValue, load_or_compute
from governor.worlds.smalltalk.responder import RetrievalResponder

# isort: split
# Registered after driving: the task registry lists the envs in the order they were registered.
from governor.worlds.commerce import task as commerce_task  # noqa: F401  # registers "commerce"

os.environ.setdefault("OMP_NUM_THREADS", "1")

# No per-example deadline: on a shared 2-core machine a slow example is load, not a bug (speed is
# measured by the benchmarks). Hypothesis's other defaults stay.
settings.register_profile("governor", deadline=None)
settings.load_profile("governor")

# The postgres_server and postgres_dsn fixtures; GOVERNOR_REQUIRE_MARKS (a skip of a test with a
# required mark fails the run); the fuzz suite's summary of inputs tried; pytester, for the test
# of that rule.
pytest_plugins = ["postgres_server", "required_marks", "fuzzing", "pytester"]

CONVERSATIONS = Path(os.environ.get("GOVERNOR_CONVERSATIONS", shared_data_dir() / "conversations"))


@pytest.fixture(scope="session")
def data_dir() -> Path:
    """The human conversation corpora (``data/conversations`` in the repository)."""
    assert corpus_path(CONVERSATIONS, "self_dialogue.jsonl").is_file(), (
        f"the human conversation corpora ship in data/conversations; not found under {CONVERSATIONS}"
    )
    return CONVERSATIONS


SMALL = GridSpec(nx=31, ny=31, ntheta=16)


@pytest.fixture(scope="session")
def small_grid(tmp_path_factory: pytest.TempPathFactory) -> GridValue:
    cache: Path = tmp_path_factory.mktemp("grid-cache")
    gv, _, _ = load_or_compute(DrivingParams(), SMALL, cache_dir=cache, progress=False)
    return gv


@pytest.fixture
def small_baselines() -> Iterator[None]:
    """The test's ReGuard driving tables train their baselines on a small budget
    (reguard_helpers)."""
    with small_reguard_baselines():
        yield


@pytest.fixture(scope="session")
def responder(data_dir: Path) -> RetrievalResponder:
    """A small pool: 150 calibration replies per corpus, 450 from Topical-Chat."""
    return RetrievalResponder.from_corpora(data_dir, max_turns=150, knowledge_turns=450)


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
