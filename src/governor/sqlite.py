"""SQLite files that several processes open at once (traces, session stores).

:func:`open_wal` connects with a busy timeout and switches the file to WAL mode. Changing the
journal mode takes a lock that SQLite does not wait for through its busy handler, so two
processes opening a new file at the same moment can get "database is locked" at once; the switch
is retried here until the timeout. Imports nothing of governor.
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path


def open_wal(path: str | Path, timeout_s: float) -> sqlite3.Connection:
    """A connection to ``path`` in WAL mode; raises ``sqlite3.Error`` as ``sqlite3.connect`` does,
    or once the journal mode could not be switched within ``timeout_s``."""
    db = sqlite3.connect(path, timeout=timeout_s)
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            db.execute("PRAGMA journal_mode=WAL")
            return db
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                db.close()
                raise
            time.sleep(0.02)
