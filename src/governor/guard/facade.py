"""The ``Guard`` facade: a policy's observer in front of an upstream model, one session per
conversation.

``Guard.from_policy(path or GuardPolicy, backend=..., store=...)`` builds the observer once (the
upstream as base policy, the policy's LTL rules and overlays as constraints, its fallback texts,
its bounds); ``guard.session(id)`` gives the session of that id (the same object for the same id,
so its lock is shared, while it is in use; the most recently used idle sessions stay loaded, the
others leave memory and are read from the store again when next used; ``owner=`` namespaces the
id by a client key's digest); ``await guard.reset(id)`` forgets a session's trajectory (for the
service's operators). With a supervision section in the policy, the guard also builds the
supervisor and one observer per mode (:mod:`.mode_observers`); its own observer then holds every
mode's constraints, so that each executed action advances every LTL rule. The CLI and the
service use this same facade. A policy's safety value puts its recovery before the fallback
texts (:mod:`.value_constraint`). :func:`steps_on_loop` says whether a guard's steps may run on
the event loop. Imports the backends, the observer, the feedback writer, the event-loop runner,
and the guard's spec,
call checks, constraints, fallback, value constraint, upstream, session, stores and mode
observers.
"""

from __future__ import annotations

import logging
import threading
import weakref
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import MappingProxyType
from typing import Any

from governor.backends import backend_from_config
from governor.backends.base import Backend
from governor.config import check_range
from governor.errors import ConfigError, expected
from governor.feedback import TemplateFeedbackWriter
from governor.guard.call_checks import CALL_CHECKS
from governor.guard.constraints import guard_constraints
from governor.guard.fallback import GuardFallback
from governor.guard.mode_observers import GuardSupervision
from governor.guard.session import MAX_SESSION_MESSAGES, GuardSession
from governor.guard.spec.guard_policy import GuardPolicy, load_policy
from governor.guard.stores import MemoryStore, SessionStore
from governor.guard.summary import violation_kinds
from governor.guard.upstream import UpstreamPolicy
from governor.guard.value_constraint import value_fallback
from governor.observer import Observer
from governor.on_loop import available as on_loop_available

log = logging.getLogger(__name__)

MAX_SESSION_ID = 200
"""The longest session id a client may give."""
OWNER_CHARS = 32
"""The characters of an owner's name (the first 32 hex digits of its key's sha256 digest) that
prefix its sessions' stored ids."""
MAX_NAMESPACE = 65
"""The longest namespace a service puts before its sessions' ids (a served policy's name and
``:``), so that the same id under two policies names two sessions."""
MAX_STORED_ID = MAX_NAMESPACE + MAX_SESSION_ID + OWNER_CHARS + 1
"""The longest stored session id: a namespace, an owner's prefix, ``/``, the client's id."""
CACHED_SESSIONS = 1024
"""How many idle sessions keep their state loaded in this process (the most recently used);
an idle session beyond them leaves memory, its state stays in the store."""


def owned_id(owner: str | None, session_id: str) -> str:
    """The stored id of the session ``session_id`` of ``owner`` (None: no owner, the id as
    given): sessions of different owners never share an id."""
    client_id(session_id, MAX_SESSION_ID)
    return session_id if owner is None else f"{owner[:OWNER_CHARS]}/{session_id}"


def client_id(session_id: Any, longest: int) -> str:
    """``session_id`` when it is printable text of 1 to ``longest`` characters with no space at
    either end (an id that a header would trim, or whose control or bidi characters would reach
    a log, names no session); else a ConfigError."""
    if (
        not isinstance(session_id, str)
        or not 0 < len(session_id) <= longest
        or not session_id.isprintable()
        or session_id != session_id.strip()
    ):
        wanted = f"printable text of 1 to {longest} characters, no space at either end"
        raise ConfigError(f"session id: {expected(wanted, session_id)}")
    return session_id


WORKERS = 32
"""Threads for the blocking work of all sessions of one guard (mostly waiting on the upstream)."""


WARM_SESSION = "governor-warm-up"
WARM_USER = "Hi! I went hiking by the lake this weekend."
WARM_REPLY = "Oh nice, that sounds lovely! What did you enjoy most about it?"
"""What :meth:`Guard.warm` judges."""


class Guard:
    """A policy enforced on the sessions of one upstream model."""

    def __init__(
        self,
        policy: GuardPolicy,
        backend: Backend,
        *,
        store: SessionStore | None = None,
        workers: int = WORKERS,
        cached_sessions: int = CACHED_SESSIONS,
        max_session_messages: int = MAX_SESSION_MESSAGES,
        replaces: Guard | None = None,
    ) -> None:
        check_range("workers", workers, 1, 1024)
        check_range("cached_sessions", cached_sessions, 0, 10_000_000)
        check_range("max_session_messages", max_session_messages, 1, 100_000_000)
        self.cached_sessions = cached_sessions
        self.max_session_messages = max_session_messages
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
        self.kinds = MappingProxyType(violation_kinds(self.observer.constraints))
        """Each constraint's kind of violation (what every session's summaries name; read only:
        the sessions share it)."""
        # a session in use is found here (the same object for the same id: one lock); the most
        # recently used idle ones are kept loaded in ``_recent``; the others leave memory
        self._sessions: weakref.WeakValueDictionary[str, GuardSession] = (
            weakref.WeakValueDictionary()
        )
        self._recent: OrderedDict[str, GuardSession] = OrderedDict()
        self._lock = threading.Lock()
        # the blocking work of every session (upstream calls, checks, the store) runs here, not
        # in asyncio's default pool (a few threads on a small machine would queue requests)
        # a guard that replaces another (a reloaded policy) keeps its threads, and a session
        # still running a step there is waited for (:meth:`session`)
        self._replaced = replaces
        if replaces is not None:
            replaces._replaced = None  # (two generations at most stay reachable)
        self.executor: ThreadPoolExecutor = (
            replaces.executor
            if replaces is not None
            else ThreadPoolExecutor(max_workers=workers, thread_name_prefix="governor-guard")
        )
        self._upstream = upstream
        self.on_loop = steps_on_loop(self.observer, self.store, self.supervision)
        """Whether the sessions' steps run on the caller's event loop (:func:`steps_on_loop`)
        rather than on the worker threads."""

    def warm(self) -> None:
        """Load what the checks load on first use (overlay resources, compiled patterns), so that
        the first requests cost what later ones do: one reply judged in a throwaway session (in
        memory of its own, never saved, no model called). A failure is logged, not raised: the
        same check fails closed when a request makes it."""
        session = GuardSession(
            WARM_SESSION,
            self.observer,
            MemoryStore(),
            self.policy.fallbacks,
            None,
            self.supervision,
            self.policy.stream,
        )
        try:
            session.check_sync(WARM_REPLY, messages=[{"role": "user", "content": WARM_USER}])
        except Exception as exc:
            log.warning("warm-up check failed: %s: %s", type(exc).__name__, exc)

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
        max_session_messages: int = MAX_SESSION_MESSAGES,
        replaces: Guard | None = None,
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
        return cls(
            loaded,
            backend,
            store=store,
            max_session_messages=max_session_messages,
            replaces=replaces,
        )

    @property
    def answering_model(self) -> str:
        """The model that answers: the name the upstream reported in its last reply, else the
        policy's upstream model, else the backend's name."""
        return self._upstream.reported_model or self.policy.upstream.model or self.backend.name

    def session(
        self,
        session_id: str,
        *,
        owner: str | None = None,
        namespace: str = "",
        client: bool = False,
    ) -> GuardSession:
        """The session ``session_id`` (created, or continued from the store, on first use);
        ``owner`` (a client key's digest) namespaces it (:func:`owned_id`): another owner's
        session of the same id is another session; ``namespace`` (at most
        :data:`MAX_NAMESPACE` characters, e.g. a served policy's name and ``:``) goes before
        that. Without either, ``session_id`` is the stored id (what the admin routes name: the
        prefixes included), or with ``client`` a client's id (at most :data:`MAX_SESSION_ID`
        characters, as with either)."""
        if len(namespace) > MAX_NAMESPACE:
            wanted = f"at most {MAX_NAMESPACE} characters"
            raise ConfigError(f"session namespace: {expected(wanted, namespace)}")
        if owner is None and not namespace:
            longest = MAX_SESSION_ID if client else MAX_STORED_ID
            stored = name = client_id(session_id, longest)
        else:
            stored, name = namespace + owned_id(owner, session_id), session_id
        with self._lock:
            found = self._sessions.get(stored)
            if found is None:
                found = GuardSession(
                    stored,
                    self.observer,
                    self.store,
                    self.policy.fallbacks,
                    self.executor,
                    self.supervision,
                    self.policy.stream,
                    name=name,
                    max_messages=self.max_session_messages,
                    on_loop=self.on_loop,
                    kinds=self.kinds,
                )
                self._sessions[stored] = found
                replaced = self._replaced
                if replaced is not None:  # its step there saves before this one reads
                    found.follows(replaced._sessions.get(stored))
            elif owner is not None:
                found.name = name  # first named by the admin routes (its stored id)
            self._recent[stored] = found
            self._recent.move_to_end(stored)
            while len(self._recent) > self.cached_sessions:
                self._recent.popitem(last=False)
            return found

    def cached(self) -> int:
        """How many sessions this process holds (in use, or idle among the most recent)."""
        with self._lock:
            return len(self._sessions)

    async def reset(self, session_id: str) -> bool:
        """Forget the trajectory of ``session_id`` (see :meth:`GuardSession.reset`)."""
        return await self.session(session_id).reset()


def steps_on_loop(
    observer: Observer, store: SessionStore, supervision: GuardSupervision | None
) -> bool:
    """Whether nothing in a step blocks but what it awaits, so that steps may run on the
    service's event loop (:mod:`governor.on_loop`): the upstream awaits its HTTP there
    (``awaits_on_loop``: a plain-http endpoint), every constraint is ``pure``, feedback is
    written from templates, the store is ``quick`` (in memory, or a SQLite file no other process
    writes) and no supervisor steps modes. Anything else (a model in-process, an embedding, a
    safety value, PostgreSQL, a shared store) runs on the worker threads."""
    policy = observer.policy
    return (
        on_loop_available()
        and supervision is None
        and isinstance(policy, UpstreamPolicy)
        and bool(getattr(policy.backend, "awaits_on_loop", False))
        and type(observer.feedback) is TemplateFeedbackWriter
        and all(c.pure for c in observer.constraints)
        and bool(getattr(store, "quick", False))
    )
