from pathlib import Path

import pytest

from governor.conversation.responder import RetrievalResponder


@pytest.fixture(scope="session")
def responder(data_dir: Path) -> RetrievalResponder:
    """A small pool: 150 calibration replies per corpus, 450 from Topical-Chat."""
    return RetrievalResponder.from_corpora(data_dir, max_turns=150, knowledge_turns=450)
