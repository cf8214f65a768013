import os
from pathlib import Path

import pytest

from governor.conversation.responder import RetrievalResponder

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


@pytest.fixture(scope="session")
def responder(data_dir: Path) -> RetrievalResponder:
    """A small pool: 150 calibration replies per corpus, 450 from Topical-Chat."""
    return RetrievalResponder.from_corpora(data_dir, max_turns=150, knowledge_turns=450)
