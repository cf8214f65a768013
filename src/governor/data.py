"""Where governor finds the data sets it reads: the human conversation corpora and the Safety Chip
household files.

``$GOVERNOR_DATA_DIR`` names the folder; without it, the first ``shared/data`` folder found beside
a parent of this package. Imports nothing of governor.
"""

from __future__ import annotations

import os
from pathlib import Path

DATA_ENV_VAR = "GOVERNOR_DATA_DIR"


def shared_data_dir() -> Path:
    """The data folder: ``$GOVERNOR_DATA_DIR``, else ``../shared/data`` beside the repository."""
    env = os.environ.get(DATA_ENV_VAR)
    if env:
        return Path(env).expanduser()
    for parent in Path(__file__).resolve().parents:
        candidate = parent.parent / "shared" / "data"
        if candidate.is_dir():
            return candidate
    return Path(__file__).resolve().parents[2].parent / "shared" / "data"
