"""What one client key may spend: requests per second and new sessions per hour, as token buckets.

:class:`Buckets` holds one bucket per key (its digest; requests without keys share one): each
bucket refills at ``rate`` tokens a second up to ``burst``; a request takes one token or is
answered 429 with ``Retry-After`` (the seconds until a token is back). Buckets are kept for the
keys seen, at most :data:`MAX_BUCKETS` (the least recently used are dropped: a dropped bucket
starts full again, so a client gains at most one burst).

:class:`SharedBuckets` keeps them in a file that the worker processes of one service map
(``governor serve --workers N``), so a key spends from one bucket whichever worker answers it:
with N workers it may not make N times its rate. Each take holds a lock on the file (a POSIX
record lock, held for a few microseconds); a lock not had within :data:`SHARED_WAIT_S`, or a
file that cannot be read, refuses the request (503): a limit that cannot be checked is not
waived. Imports the service's errors and :func:`governor.on_loop.polled` only.
"""

from __future__ import annotations

import errno
import hashlib
import math
import mmap
import os
import struct
import threading
import time
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

from governor.on_loop import polled
from governor.serve.api_errors import ApiError

MAX_BUCKETS = 100_000


class Buckets:
    """Token buckets per key (see the module doc); ``what`` names the limit in a 429."""

    def __init__(self, rate: float, burst: float, what: str) -> None:
        if not (
            math.isfinite(rate)
            and rate > 0
            and math.isfinite(1 / rate)  # (a token's wait, in Retry-After, must be a number)
            and math.isfinite(burst)
            and burst >= 1
        ):
            raise ValueError(
                f"{what}: expected a rate > 0 whose 1/rate (a token's wait) is finite and a"
                f" burst >= 1, found {rate}, {burst}"
            )
        self.rate = rate
        self.burst = burst
        self.what = what
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()
        self._lock = threading.Lock()

    def take(self, key: str | None) -> None:
        """Take one token of ``key``'s bucket, or raise a 429 naming the limit."""
        name = key or ""
        with self._held():
            now = time.monotonic()
            tokens, at = self._get(name, now)
            tokens = min(self.burst, tokens + max(0.0, now - at) * self.rate)
            if tokens < 1:
                self._put(name, tokens, now)
                wait = max(1, math.ceil((1 - tokens) / self.rate))
                raise ApiError(
                    429,
                    f"expected at most {self.what} for this key, found more; retry in {wait} s",
                    code="rate_limited",
                    headers={"Retry-After": str(wait)},
                )
            self._put(name, tokens - 1, now)

    def _held(self) -> AbstractContextManager[Any]:
        """What a take holds while it reads and writes its key's bucket."""
        return self._lock

    def _get(self, name: str, now: float) -> tuple[float, float]:
        """``name``'s tokens and when they were counted (a key not kept: a full bucket now)."""
        return self._buckets.pop(name, (self.burst, now))

    def _put(self, name: str, tokens: float, now: float) -> None:
        self._buckets[name] = (tokens, now)
        while len(self._buckets) > MAX_BUCKETS:
            self._buckets.popitem(last=False)


SHARED_SLOTS = 1 << 16
"""The buckets a shared file holds (24 bytes each: 1.5 MiB)."""

SHARED_PROBES = 8
"""The slots a key may sit in, from the one its hash names on: when all are taken by other keys,
the one counted longest ago is given to it (that key's bucket starts full again)."""

SHARED_WAIT_S = 0.05
"""The longest a take waits for another process's hold on the file before refusing the request
(holds last microseconds; a process stopped while holding it must not stall every worker)."""

_SLOT = struct.Struct("<Qdd")  # the key's 64-bit tag (0: empty), its tokens, when counted


SHARED_NAMES = ("requests", "sessions")
"""The limits a service's workers keep together, each in a file of their folder."""


def shared_file(folder: str | Path, name: str) -> Path:
    """The file of the limit ``name`` in the workers' ``folder``."""
    return Path(folder) / f"{name}.buckets"


def make_shared_files(folder: str | Path) -> None:
    """Make the files of :data:`SHARED_NAMES` in ``folder``, every block had: done once, by the
    process that starts the workers, before them. A worker only opens them (``create=False``):
    one started after a file was removed would count alone, apart from the others."""
    for name in SHARED_NAMES:
        fd = os.open(shared_file(folder, name), os.O_RDWR | os.O_CREAT, 0o600)
        try:
            _allocated(fd)
        finally:
            os.close(fd)


def _allocated(fd: int) -> int:
    """The size of a bucket file, which ``fd`` now has, every block had (a full disk fails
    here, not a take writing a page never had: SIGBUS)."""
    size = SHARED_SLOTS * _SLOT.size
    if os.fstat(fd).st_size < size:  # (every opener asks for the same size: no race)
        os.ftruncate(fd, size)
    if hasattr(os, "posix_fallocate"):
        os.posix_fallocate(fd, 0, size)
    return size


class SharedBuckets(Buckets):
    """:class:`Buckets` kept in the file ``path`` for every process that opens it (see the
    module doc); created when missing unless ``create`` is False. ``time.monotonic`` is the
    system's clock since boot on Linux, one clock for all the processes."""

    def __init__(
        self, path: str | Path, rate: float, burst: float, what: str, *, create: bool = True
    ) -> None:
        super().__init__(rate, burst, what)
        try:
            import fcntl
        except ImportError:  # (not POSIX)
            raise ValueError(
                f"{what}: keeping a limit for several worker processes needs POSIX file locks"
                " (fcntl), found none on this platform"
            ) from None
        self._fcntl = fcntl
        self.path = Path(path)
        fd = os.open(self.path, os.O_RDWR | (os.O_CREAT if create else 0), 0o600)
        try:
            self._map = mmap.mmap(fd, _allocated(fd))
        except BaseException:
            os.close(fd)
            raise
        self._fd = fd
        self._lock = _file_lock(fd)  # (one for every opener of the file in this process)
        self._slot = -1
        """The slot of the key read last (under the hold, for the write that follows)."""

    def close(self) -> None:
        """Unmap and close the file (the buckets stay in it for the other processes)."""
        with self._lock:  # (closing any descriptor of the file drops this process's lock)
            fd, self._fd = self._fd, -1
            if fd >= 0:
                self._map.close()
                os.close(fd)

    def _held(self) -> AbstractContextManager[Any]:
        return self._file_held()

    @contextmanager
    def _file_held(self) -> Iterator[None]:
        deadline = time.monotonic() + SHARED_WAIT_S
        if not self._lock.acquire(timeout=SHARED_WAIT_S):
            raise self._unavailable("held by another thread of this process")
        try:

            def taken() -> bool:
                try:
                    if self._fd < 0:
                        raise OSError(errno.EBADF, "closed")
                    self._fcntl.lockf(self._fd, self._fcntl.LOCK_EX | self._fcntl.LOCK_NB)
                except OSError as exc:
                    if exc.errno not in (errno.EAGAIN, errno.EACCES):  # (not another's hold)
                        raise self._unavailable(exc) from None
                    return False
                return True

            if not polled(taken, deadline):
                held = f"held by another process for {SHARED_WAIT_S * 1000:g} ms"
                raise self._unavailable(held)
            try:
                yield
            finally:
                self._fcntl.lockf(self._fd, self._fcntl.LOCK_UN)
        finally:
            self._lock.release()

    def _unavailable(self, cause: object) -> ApiError:
        return ApiError(
            503,
            f"expected to check {self.what} for this key, found its shared count unavailable"
            f" ({cause}); the request is refused rather than let past the limit",
            code="limit_unavailable",
        )

    def _get(self, name: str, now: float) -> tuple[float, float]:
        tag = _tag(name)
        home = tag % SHARED_SLOTS
        oldest, oldest_at = home, math.inf  # (a slot of the window, whatever the times say)
        for k in range(SHARED_PROBES):
            slot = (home + k) % SHARED_SLOTS
            found, tokens, at = _SLOT.unpack_from(self._map, slot * _SLOT.size)
            if found == tag:
                self._slot = slot
                if not (math.isfinite(tokens) and math.isfinite(at)):
                    return 0.0, now  # (a damaged count: no tokens, never free ones)
                return tokens, min(at, now)
            if found == 0:  # (slots are never emptied: the key is not further on)
                self._slot = slot
                return self.burst, now
            if not math.isfinite(at):  # (a damaged time: given away first)
                at = -math.inf
            if at < oldest_at:
                oldest, oldest_at = slot, at
        self._slot = oldest
        return self.burst, now

    def _put(self, name: str, tokens: float, now: float) -> None:
        _SLOT.pack_into(self._map, self._slot * _SLOT.size, _tag(name), tokens, now)


_FILE_LOCKS: dict[tuple[int, int], threading.Lock] = {}
_FILE_LOCKS_LOCK = threading.Lock()


def _file_lock(fd: int) -> threading.Lock:
    """The lock of the file open as ``fd`` (its device and inode) for this process's threads: a
    POSIX record lock belongs to the process, so two openers of one file in one process would
    both have it at once."""
    st = os.fstat(fd)
    with _FILE_LOCKS_LOCK:
        return _FILE_LOCKS.setdefault((st.st_dev, st.st_ino), threading.Lock())


def _tag(name: str) -> int:
    """``name``'s 64-bit tag in a shared file (never 0, which marks an empty slot)."""
    digest = hashlib.blake2b(name.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(digest, "little") | 1
