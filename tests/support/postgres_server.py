"""A throwaway PostgreSQL server for the tests, from Debian's binaries.

:func:`start` runs ``initdb`` and ``pg_ctl`` (``/usr/lib/postgresql/*/bin``) on a fresh directory
under the system temp dir; the server listens only on a Unix socket in that directory (no TCP),
trusts local connections and skips fsync. ``initdb`` refuses to run as root, so as root both run
as the ``postgres`` user (``runuser -u postgres --``) on a directory that user owns.
:func:`missing` says why no server can be started here (None when one can). The fixtures
``postgres_server`` (one per test run; skipped, with the reason, where none can start) and
``postgres_dsn`` (a new empty database on it per test) are registered by ``tests/conftest.py``.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path

import pytest

SUPERUSER = "governor"


def _bin_dir() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    return Path(found[-1]).parent if found else None


def _as_owner() -> tuple[list[str], str | None]:
    """The command prefix that runs the server's tools, and the user to own its files."""
    if os.geteuid() != 0:
        return [], None
    return ["runuser", "-u", "postgres", "--"], "postgres"


def missing() -> str | None:
    """Why no test server can be started here; None when one can."""
    try:
        import psycopg  # noqa: F401
    except ImportError:
        return "psycopg is not installed (the [postgres] extra)"
    bindir = _bin_dir()
    if bindir is None or not (bindir / "pg_ctl").exists():
        return "no PostgreSQL server binaries (/usr/lib/postgresql/*/bin/initdb, pg_ctl)"
    if os.geteuid() == 0:
        if shutil.which("runuser") is None:
            return "running as root, and no runuser to start PostgreSQL as another user"
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            return "running as root, and no postgres user to run PostgreSQL as"
    return None


@dataclass
class PostgresServer:
    """A running server: its directory, socket directory and tools."""

    root: Path
    bindir: Path
    prefix: list[str]

    @property
    def data(self) -> Path:
        return self.root / "data"

    def dsn(self, dbname: str = "postgres") -> str:
        return f"host={self.root} dbname={dbname} user={SUPERUSER}"

    def _run(self, *args: str, timeout: float = 60) -> None:
        cmd = [*self.prefix, *args]
        out = subprocess.run(cmd, cwd=self.root, capture_output=True, text=True, timeout=timeout)
        if out.returncode != 0:
            log = self.root / "server.log"
            tail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
            raise RuntimeError(f"{' '.join(cmd)} failed:\n{out.stdout}{out.stderr}\n{tail}")

    def start(self) -> None:
        options = f"-k {self.root} -c listen_addresses='' -c fsync=off -c max_connections=200"
        pg_ctl = str(self.bindir / "pg_ctl")
        self._run(pg_ctl, "-D", str(self.data), "-o", options, "-l", str(self.root / "server.log"), "-w", "start")  # fmt: skip

    def stop(self) -> None:
        self._run(str(self.bindir / "pg_ctl"), "-D", str(self.data), "-m", "fast", "-w", "stop")

    def create_database(self) -> str:
        """A new empty database; its DSN."""
        import psycopg

        name = f"t_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(self.dsn(), autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name}")
        return self.dsn(name)

    def close(self) -> None:
        with suppress(RuntimeError, subprocess.TimeoutExpired):
            self.stop()
        shutil.rmtree(self.root, ignore_errors=True)


def start() -> PostgresServer:
    """A fresh cluster, started (call :meth:`PostgresServer.close` to stop and delete it)."""
    bindir = _bin_dir()
    assert bindir is not None, missing()
    prefix, owner = _as_owner()
    root = Path(tempfile.mkdtemp(prefix="governor-pg-"))
    if owner is not None:
        shutil.chown(root, owner, owner)
    server = PostgresServer(root, bindir, prefix)
    try:
        initdb = str(bindir / "initdb")
        server._run(initdb, "-D", str(server.data), "-U", SUPERUSER, "-A", "trust", "--no-sync", "-E", "UTF8", "--no-locale")  # fmt: skip
        server.start()
    except BaseException:
        shutil.rmtree(root, ignore_errors=True)
        raise
    return server


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    reason = missing()
    if reason is not None:
        pytest.skip(f"no PostgreSQL test server: {reason}")
    server = start()
    try:
        yield server
    finally:
        server.close()


@pytest.fixture
def postgres_dsn(postgres_server: PostgresServer) -> str:
    """The DSN of a new empty database on the test server."""
    return postgres_server.create_database()
