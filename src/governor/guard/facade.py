"""The ``Guard`` facade: a policy's observer in front of an upstream model, one session per
conversation.

``Guard.from_policy(path or GuardPolicy, backend=..., store=...)`` builds the observer once (the
upstream as base policy, the policy's LTL rules and overlays as constraints, its fallback texts,
its bounds); ``guard.session(id)`` gives the session of that id (the same object for the same id,
so its lock is shared); ``await guard.reset(id)`` forgets a session's trajectory (for the
service's operators). With a supervision section in the policy, the guard also builds the
supervisor and one observer per mode (:mod:`.mode_observers`); its own observer then holds every
mode's constraints, so that each executed action advances every LTL rule. The CLI and the
service use this same facade. A policy's safety value puts its recovery before the fallback
texts (:mod:`.value_constraint`). Imports the backends, the observer, and the guard's spec,
call checks, constraints, fallback, value constraint, upstream, session, stores and mode
observers.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from governor.backends import backend_from_config
from governor.backends.base import Backend
from governor.config import check_range
from governor.errors import ConfigError, expected
from governor.guard.call_checks import CALL_CHECKS
from governor.guard.constraints import guard_constraints
from governor.guard.fallback import GuardFallback
from governor.guard.mode_observers import GuardSupervision
from governor.guard.session import GuardSession
from governor.guard.spec.guard_policy import GuardPolicy, load_policy
from governor.guard.stores import MemoryStore, SessionStore
from governor.guard.upstream import UpstreamPolicy
from governor.guard.value_constraint import value_fallback
from governor.observer import Observer

MAX_SESSION_ID = 200
"""The longest session id accepted."""


WORKERS = 32
"""Threads for the blocking work of all sessions of one guard (mostly waiting on the upstream)."""


class Guard:
    """A policy enforced on the sessions of one upstream model."""

    def __init__(
        self,
        policy: GuardPolicy,
        backend: Backend,
        *,
        store: SessionStore | None = None,
        workers: int = WORKERS,
    ) -> None:
        check_range("workers", workers, 1, 1024)
        self.policy = policy
        self.backend = backend
        self.store: SessionStore = store if store is not None else MemoryStore()
        up = policy.upstream
        upstream = UpstreamPolicy(
            backend,
            system_prompt=up.system_prompt,
            temperature=up.temperature,
            max_tokens=up.max_tokens,
        )
        rules = {r.name: r.text for r in policy.ltl}
        if policy.safety_value is not None:  # its refusals speak the tool_refused text too
            rules[policy.safety_value.name] = policy.safety_value.text
        self.supervision = None if policy.supervision is None else GuardSupervision(policy, backend)
        constraints = (
            guard_constraints(policy) if self.supervision is None else self.supervision.constraints
        )
        rules |= {c.name: c.text for c in constraints if isinstance(c, CALL_CHECKS)}
        fallback = value_fallback(constraints, GuardFallback(policy.fallbacks, rules))
        self.observer = Observer(upstream, constraints, fallback, config=policy.observer)
        self._sessions: dict[str, GuardSession] = {}
        self._lock = threading.Lock()
        # the blocking work of every session (upstream calls, checks, the store) runs here, not
        # in asyncio's default pool (a few threads on a small machine would queue requests)
        self.executor = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="governor-guard")

    def close(self) -> None:
        """Stop the worker threads (calls in flight finish first), then let the store close
        what it keeps open (a pool's idle connections)."""
        self.executor.shutdown(wait=True)
        close = getattr(self.store, "close", None)
        if callable(close):
            close()

    @classmethod
    def from_policy(
        cls,
        policy: str | Path | GuardPolicy,
        *,
        backend: Backend | None = None,
        store: SessionStore | None = None,
    ) -> Guard:
        """The guard of ``policy`` (a file or a loaded policy); the backend defaults to the
        policy's upstream (an OpenAI-compatible endpoint that receives the tools natively)."""
        loaded = policy if isinstance(policy, GuardPolicy) else load_policy(policy)
        if backend is None:
            config = loaded.upstream.backend_config()
            if not config.configured:
                raise ConfigError(
                    f"{loaded.source}: upstream: expected base_url and model (or a backend"
                    f" passed in), found base_url={config.base_url!r}, model={config.model!r}"
                )
            backend = backend_from_config(config)
        return cls(loaded, backend, store=store)

    def session(self, session_id: str) -> GuardSession:
        """The session ``session_id`` (created, or continued from the store, on first use)."""
        if not isinstance(session_id, str) or not 0 < len(session_id) <= MAX_SESSION_ID:
            raise ConfigError(
                f"session id: {expected(f'text of 1 to {MAX_SESSION_ID} characters', session_id)}"
            )
        with self._lock:
            found = self._sessions.get(session_id)
            if found is None:
                found = GuardSession(
                    session_id,
                    self.observer,
                    self.store,
                    self.policy.fallbacks,
                    self.executor,
                    self.supervision,
                    self.policy.stream,
                )
                self._sessions[session_id] = found
            return found

    async def reset(self, session_id: str) -> bool:
        """Forget the trajectory of ``session_id`` (see :meth:`GuardSession.reset`)."""
        return await self.session(session_id).reset()
