"""Session stores named by a ``--store`` value: ``sqlite:PATH``, ``memory`` or ``postgres:DSN``.

Imports the stores' base, memory and SQLite stores (PostgreSQL only when named, so psycopg stays
optional).
"""

from __future__ import annotations

from typing import Any

from governor.errors import ConfigError, expected
from governor.guard.stores.base import SessionStore
from governor.guard.stores.memory import MemoryStore
from governor.guard.stores.sqlite_store import SqliteStore


def store_from(spec: str, *, processes: int = 1, **postgres: Any) -> SessionStore:
    """The store a ``--store`` value names (``postgres`` options go to a PostgreSQL store);
    ``processes`` > 1: one that many processes share (a SQLite file in shared mode; memory is
    refused, as each process would keep sessions of its own)."""
    if spec == "memory":
        if processes > 1:
            raise ConfigError(
                f"--workers {processes}: expected a store the processes share (sqlite:PATH or"
                " postgres:DSN), found memory (each process would keep its own sessions)"
            )
        return MemoryStore()
    if spec.startswith("sqlite:") and spec[len("sqlite:") :]:
        return SqliteStore(spec[len("sqlite:") :], shared=processes > 1)
    if spec.startswith("postgres:") and spec[len("postgres:") :]:
        from governor.guard.stores.postgres import PostgresStore

        return PostgresStore(spec[len("postgres:") :], **postgres)
    shown = "postgres:..." if spec.startswith("postgres") else spec  # a DSN may hold a password
    raise ConfigError(f"--store: {expected('sqlite:PATH or memory or postgres:DSN', shown)}")


def store_label(spec: str, store: SessionStore) -> str:
    """How the startup line names the store (a DSN's password never shown)."""
    where = getattr(store, "where", None)
    return where if spec.startswith("postgres:") and isinstance(where, str) else spec
