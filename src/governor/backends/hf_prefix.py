"""Next-token logits that reuse the key/value cache of a prompt prefix seen before.

Agents ask the same long preamble (a system prompt, worked examples) again at every step, with a
short question after it. :class:`PrefixCache` remembers the last few prompts; once two share a
prefix of at least :data:`MIN_PREFIX` tokens, the model's cache for that prefix is kept (a few
of them, least recently used dropped) and later prompts that start with it only run their own
tokens. The result equals a full forward pass up to float rounding. torch is only touched
through the model given to it. Imports nothing of governor.
"""

from __future__ import annotations

import copy
import inspect
from collections import OrderedDict
from typing import Any

MIN_PREFIX = 32
"""The shortest shared prefix worth a cache (tokens)."""
KEPT = 4
"""Prefix caches kept, and recent prompts compared."""


def shared(a: list[int], b: list[int]) -> int:
    """The length of the common prefix of ``a`` and ``b``."""
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


class PrefixCache:
    """Logits of the last position of a prompt, through cached prefixes (see the module doc)."""

    def __init__(self, model: Any) -> None:
        self.model = model
        # recent transformers name the cache argument and output ``cache``; older ones
        # ``past_key_values``
        params = inspect.signature(model.forward).parameters
        self.key = "cache" if "cache" in params else "past_key_values"
        self.recent: list[list[int]] = []
        self.caches: OrderedDict[tuple[int, ...], Any] = OrderedDict()

    def last_logits(self, input_ids: Any) -> Any:
        """Logits at the last position, shape [1, vocab], for a batch of one prompt."""
        ids = [int(t) for t in input_ids[0].tolist()]
        fits = [p for p in self.caches if len(p) < len(ids) and _starts(ids, p)]
        cached: tuple[int, ...] = max(fits, key=len, default=())
        best = max((shared(ids, r) for r in self.recent), default=0)
        best = min(best, len(ids) - 1)
        self.recent = [*self.recent[-(KEPT - 1) :], ids]
        if best >= MIN_PREFIX and best >= len(cached) + MIN_PREFIX:
            prefix = tuple(ids[:best])
            self.caches[prefix] = self._run(input_ids[:, :best], cached, len(cached))[1]
            while len(self.caches) > KEPT:
                self.caches.popitem(last=False)
            cached = prefix
        if len(cached) >= MIN_PREFIX:
            self.caches.move_to_end(cached)
            logits, _ = self._run(input_ids, cached, len(cached))
            return logits
        return self.model(input_ids=input_ids).logits[:, -1]

    def clear(self) -> None:
        self.recent, self.caches = [], OrderedDict()

    def _run(self, input_ids: Any, prefix: tuple[int, ...], start: int) -> tuple[Any, Any]:
        """Logits of the last position and the cache after ``input_ids``, from the cache of
        ``prefix`` (``start`` tokens; none when 0)."""
        cache = copy.deepcopy(self.caches[prefix]) if start else None
        out = self.model(input_ids=input_ids[:, start:], use_cache=True, **{self.key: cache})
        return out.logits[:, -1], getattr(out, self.key)


def _starts(ids: list[int], prefix: tuple[int, ...]) -> bool:
    return len(ids) >= len(prefix) and tuple(ids[: len(prefix)]) == prefix
