"""SQLite files that several processes open at once (traces, session stores).

:func:`use_wal` switches a connection's file to WAL mode. Changing the
journal mode takes a lock that SQLite does not wait for through its busy handler, so two
processes opening a new file at the same moment can get "database is locked" at once; the switch
is retried here until the timeout.

:func:`checkpoint_soon` moves a file's checkpoints (copying the WAL's pages into the file, and two
``fdatasync`` calls) off the thread that commits: one daemon thread per process checkpoints the
files handed to it, each with a connection of its own opened for it. A store that hands its
file here every :data:`CHECKPOINT_EVERY` commits sets its connections' own automatic checkpoint
to :data:`BACKSTOP_PAGES` (SQLite's default is 1,000 pages), which then only bounds the WAL
should this thread fall behind. Imports nothing of governor.
"""

from __future__ import annotations

import logging
import os
import queue
import sqlite3
import threading
import time
from pathlib import Path

_log = logging.getLogger(__name__)


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


CHECKPOINT_EVERY = 64
"""Commits after which a store hands its file to :func:`checkpoint_soon` (about 700 WAL pages
of the guard's saves, under SQLite's own 1,000)."""

BACKSTOP_PAGES = 8_000
"""The WAL pages past which a committing connection checkpoints itself, as SQLite does by
default past 1,000: reached only when the checkpoint thread falls behind."""

REWIND_PAGES = 4_000
"""The WAL pages past which the checkpoint thread, its pages copied, waits for the writers to
pause and rewinds the WAL (``RESTART``): a WAL only ever copied while new commits arrive is never
rewound otherwise, and grows."""

REWIND_WAIT_S = 0.25
"""The longest the rewind waits (for the write lock, then for the readers of the WAL): writers
wait while it waits for the readers, so a reader holding an old snapshot must not hold them for
the store's whole timeout. A rewind that could not finish is tried again by the next checkpoint."""


class _Checkpoints:
    """The process's checkpoint thread (started on first use) and the files waiting for it
    (each at most once). A forked child starts afresh (:func:`_forked`): threads do not follow
    a fork."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._waiting: set[tuple[str, float]] = set()
        self._queue: queue.SimpleQueue[tuple[str, float]] = queue.SimpleQueue()
        self._started = False

    def ask(self, path: str, timeout_s: float) -> None:
        item = (path, timeout_s)
        with self._lock:
            if item in self._waiting:
                return
            self._waiting.add(item)
            if not self._started:
                self._started = True
                threading.Thread(target=self._run, name="governor-checkpoints", daemon=True).start()
        self._queue.put(item)

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            with self._lock:
                self._waiting.discard(item)
            try:
                checkpoint(*item)
            except Exception:  # (the thread must outlive one file's failure)
                _log.exception("checkpoint of %s failed", item[0])


_CHECKPOINTS = _Checkpoints()


def _forked() -> None:
    global _CHECKPOINTS
    _CHECKPOINTS = _Checkpoints()


if hasattr(os, "register_at_fork"):  # (POSIX)
    os.register_at_fork(after_in_child=_forked)


def checkpoint_soon(path: str | os.PathLike[str], timeout_s: float) -> None:
    """Have the process's checkpoint thread :func:`checkpoint` ``path`` (at once, unless it is
    waiting already)."""
    _CHECKPOINTS.ask(os.fspath(path), timeout_s)


def checkpoint(path: str, timeout_s: float) -> bool:
    """Copy the WAL of ``path`` into the file as far as no reader needs it (``PASSIVE``: no
    wait), then, past :data:`REWIND_PAGES`, rewind it (``RESTART``: writers wait meanwhile, at
    most :data:`REWIND_WAIT_S` or ``timeout_s`` if less). Whether it ran; an error (a file gone,
    never created anew here; locked too long) is left to the next one, or to the committing
    connections' own checkpoint, and logged unless it is a file gone or locked."""
    try:
        db = sqlite3.connect(
            Path(path).absolute().as_uri() + "?mode=rw", timeout=timeout_s, uri=True
        )
    except sqlite3.Error as exc:
        _failed(path, exc)
        return False
    try:
        row = db.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
        if row is not None and row[1] >= REWIND_PAGES:
            db.execute(f"PRAGMA busy_timeout = {int(min(timeout_s, REWIND_WAIT_S) * 1000)}")
            db.execute("PRAGMA wal_checkpoint(RESTART)")
        return True
    except sqlite3.Error as exc:
        _failed(path, exc)
        return False
    finally:
        db.close()


_EXPECTED = (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED, sqlite3.SQLITE_CANTOPEN)


def _failed(path: str, exc: sqlite3.Error) -> None:
    """Log a checkpoint's failure unless it is one left to the next (a file gone, or locked)."""
    code = getattr(exc, "sqlite_errorcode", None)
    if code is None or code & 0xFF not in _EXPECTED:
        _log.warning("checkpoint of %s failed: %s", path, exc)
