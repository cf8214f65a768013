"""A circuit breaker for a model endpoint: after repeated failures, fail fast until a probe
succeeds.

Closed, every call goes through. After ``failures`` consecutive failed calls it opens: calls fail
at once, without a request, for ``cooldown_s``. Then it is half-open: one call goes through as a
probe (others still fail fast); the probe's success closes it, its failure opens it again.
Thread-safe. Imports the error tree only.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from governor.errors import BackendUnavailable


class CircuitBreaker:
    """Counts consecutive failures of one endpoint; ``failures=0`` never opens."""

    def __init__(
        self,
        failures: int,
        cooldown_s: float,
        *,
        name: str = "endpoint",
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.failures, self.cooldown_s, self.name = failures, cooldown_s, name
        self._clock = clock
        self._lock = threading.Lock()
        self._consecutive = 0
        self._opened_at: float | None = None
        self._probing = False

    @property
    def state(self) -> str:
        """``closed``, ``open`` or ``half_open``."""
        with self._lock:
            if self._opened_at is None:
                return "closed"
            return "open" if self._clock() - self._opened_at < self.cooldown_s else "half_open"

    def before(self) -> None:
        """Let a call through, or raise :class:`BackendUnavailable` without making it."""
        with self._lock:
            if self._opened_at is None:
                return
            waited = self._clock() - self._opened_at
            if waited >= self.cooldown_s and not self._probing:
                self._probing = True
                return
            left = max(self.cooldown_s - waited, 0.0)
            raise BackendUnavailable(
                f"{self.name}: not called: {self._consecutive} consecutive calls failed; the"
                f" circuit is open"
                + (f" for {left:.3g} s more" if left else " until the probe in flight answers")
            )

    def success(self) -> None:
        with self._lock:
            self._consecutive, self._opened_at, self._probing = 0, None, False

    def failure(self) -> None:
        with self._lock:
            self._consecutive += 1
            probe_failed = self._probing
            self._probing = False
            if probe_failed or (self.failures and self._consecutive >= self.failures):
                self._opened_at = self._clock()
