"""Fixtures shared across the test folders: where the shared human conversation corpora are.

torch runs on one thread in tests: the networks here are tiny, and two threads make their small
operations far slower on a 2-core machine (set before any test module imports torch).
"""

import os
from pathlib import Path

import pytest

os.environ.setdefault("OMP_NUM_THREADS", "1")

CONVERSATIONS = Path(
    os.environ.get(
        "GOVERNOR_CONVERSATIONS",
        Path(__file__).resolve().parents[2] / "shared" / "data" / "conversations",
    )
)


@pytest.fixture(scope="session")
def data_dir() -> Path:
    """The human conversation corpora (../shared/data/conversations beside the checkout)."""
    if not (CONVERSATIONS / "self_dialogue.jsonl").is_file():
        pytest.skip(f"human conversation corpora not found under {CONVERSATIONS}")
    return CONVERSATIONS
