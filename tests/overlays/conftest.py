import os
from pathlib import Path

import pytest

DATA = Path(
    os.environ.get(
        "GOVERNOR_CONVERSATIONS",
        Path(__file__).resolve().parents[3] / "shared" / "data" / "conversations",
    )
)


@pytest.fixture(scope="session")
def data_dir() -> Path:
    if not (DATA / "self_dialogue.jsonl").is_file():
        pytest.skip(f"human conversation corpora not found under {DATA}")
    return DATA
