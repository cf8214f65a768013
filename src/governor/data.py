"""Where governor finds the data sets it reads: the human conversation corpora and the Safety Chip
household files.

The repository carries them in its ``data/`` folder (see ``data/README.md`` for their sources and
licences); ``$GOVERNOR_DATA_DIR`` names another folder of the same shape. Imports nothing of
governor.
"""

from __future__ import annotations

import os
from pathlib import Path

DATA_ENV_VAR = "GOVERNOR_DATA_DIR"
REPOSITORY_DATA = Path(__file__).resolve().parents[2] / "data"


def shared_data_dir() -> Path:
    """The data folder: ``$GOVERNOR_DATA_DIR``, else the repository's ``data/`` folder."""
    env = os.environ.get(DATA_ENV_VAR)
    return Path(env).expanduser() if env else REPOSITORY_DATA
