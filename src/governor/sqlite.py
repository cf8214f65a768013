"""SQLite files that several processes open at once (traces, session stores).

:func:`use_wal` switches a connection's file to WAL mode. Changing the
journal mode takes a lock that SQLite does not wait for through its busy handler, so two
processes opening a new file at the same moment can get "database is locked" at once; the switch
is retried here until the timeout. Imports nothing of governor.
"""

from __future__ import annotations

import sqlite3
import time


def use_wal(db: sqlite3.Connection, timeout_s: float) -> None:
    """Switch ``db``'s file to WAL mode, retrying while another process holds the lock (at most
    ``timeout_s``); raises ``sqlite3.Error`` as ``execute`` does (e.g. a file that is not a
    database)."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            db.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.02)
