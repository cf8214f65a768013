"""The guard's session stores: where guarded sessions are kept between calls and across restarts.

:mod:`.base` says what a store is (:class:`SessionStore`, the :class:`SharedStore` that several
processes share and its per-session lock, :class:`StoreError`); :mod:`.memory` keeps sessions in
this process (:class:`MemoryStore`), :mod:`.sqlite_store` in one SQLite file
(:class:`SqliteStore`), :mod:`.postgres` in PostgreSQL for several service instances
(``PostgresStore``, not imported here: psycopg stays optional); :mod:`.named` builds the store a
``--store`` value names (``memory``, ``sqlite:PATH``, ``postgres:DSN``).

May import the error tree and the SQLite helpers (psycopg only inside :mod:`.postgres`, on first
use); never the guard's sessions, policy file or upstream, nor the service.
"""

from governor.guard.stores.base import SessionStore, SharedStore, StoreError, shared_lock
from governor.guard.stores.memory import MemoryStore
from governor.guard.stores.named import store_from, store_label
from governor.guard.stores.sqlite_store import SqliteStore

__all__ = [
    "MemoryStore",
    "SessionStore",
    "SharedStore",
    "SqliteStore",
    "StoreError",
    "shared_lock",
    "store_from",
    "store_label",
]
