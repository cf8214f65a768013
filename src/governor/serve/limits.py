"""What one client key may spend: requests per second and new sessions per hour, as token buckets.

:class:`Buckets` holds one bucket per key (its digest; requests without keys share one): each
bucket refills at ``rate`` tokens a second up to ``burst``; a request takes one token or is
answered 429 with ``Retry-After`` (the seconds until a token is back). Buckets are kept for the
keys seen, at most :data:`MAX_BUCKETS` (the least recently used are dropped: a dropped bucket
starts full again, so a client gains at most one burst). Imports the service's errors only.
"""

from __future__ import annotations

import math
import threading
import time
from collections import OrderedDict

from governor.serve.api_errors import ApiError

MAX_BUCKETS = 100_000


class Buckets:
    """Token buckets per key (see the module doc); ``what`` names the limit in a 429."""

    def __init__(self, rate: float, burst: float, what: str) -> None:
        if not (math.isfinite(rate) and rate > 0 and math.isfinite(burst) and burst >= 1):
            raise ValueError(f"{what}: expected a rate > 0 and a burst >= 1, found {rate}, {burst}")
        self.rate = rate
        self.burst = burst
        self.what = what
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()
        self._lock = threading.Lock()

    def take(self, key: str | None) -> None:
        """Take one token of ``key``'s bucket, or raise a 429 naming the limit."""
        name = key or ""
        now = time.monotonic()
        with self._lock:
            tokens, at = self._buckets.pop(name, (self.burst, now))
            tokens = min(self.burst, tokens + (now - at) * self.rate)
            if tokens < 1:
                self._buckets[name] = (tokens, now)
                wait = max(1, math.ceil((1 - tokens) / self.rate))
                raise ApiError(
                    429,
                    f"expected at most {self.what} for this key, found more; retry in {wait} s",
                    code="rate_limited",
                    headers={"Retry-After": str(wait)},
                )
            self._buckets[name] = (tokens - 1, now)
            while len(self._buckets) > MAX_BUCKETS:
                self._buckets.popitem(last=False)
