"""The policies one service serves, by name; which one a request asks for; reloading them.

A service serves one or more policies, each under a name (``[A-Za-z0-9][A-Za-z0-9._-]*``, at most
:data:`MAX_POLICY_NAME` characters) and each with its own :class:`~governor.guard.Guard` over the
one session store. A request names its policy by its ``model`` (``governor/NAME``, or ``NAME``
itself) or by the ``X-Governor-Policy`` header (a header and a model naming two different served
policies are a 400 ``policy_conflict``); with one policy served, any model selects it; otherwise an unknown name is a 404 ``model_not_found`` naming the served models
(:meth:`ServedPolicies.select`: two dict lookups). With several policies (or one given a name of
its own) each policy's session ids are namespaced by ``NAME:`` in the store, so that the same
session id under two policies is two sessions; a single policy given as a bare file keeps the
ids as the client gives them (the sessions of an existing store go on).

:meth:`ServedPolicies.reload` reads a policy's file again and validates it (the policy's schema,
then its guard, which builds the observer) before it replaces the guard for new requests; a file
that fails keeps the old policy and the reason is logged (``governor.serve.policies``). Live
sessions continue under the changed policy (a session read back under it records which rules
were added, removed or replayed: ``on_live_sessions`` in the policy's LTL rules); a reloaded
policy whose upstream ``api_key_env`` names an unset variable is warned of. A guard that
replaces another keeps its worker threads, and its backend when the upstream is unchanged.
A request in flight when its policy is replaced finishes under the policy it started with; the
next request on that session waits for it to save before reading the session (the replacing guard
knows the one it replaced: :class:`~governor.guard.Guard`'s ``replaces``).
:meth:`ServedPolicies.watch` polls the files' modification times and sizes (every 2 s by
default) in a thread of its own and reloads a file that changed once it held still for one poll
(not while it is being written), and no file whose modification time or size changed while it was
read; a reload that removes rules says which (a warning: a truncated file can be a valid, weaker
policy, so policy files are best written by renaming a finished file over them);
:meth:`ServedPolicies.request_reload` (what a SIGHUP handler calls) asks it to reload every file
at once. Imports the guard's public facade, the
error tree and the service's errors.
"""

from __future__ import annotations

import logging
import os
import re
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from governor.errors import ConfigError, expected
from governor.guard import Guard, GuardPolicy, load_policy
from governor.serve.api_errors import ApiError

log = logging.getLogger(__name__)

MAX_POLICY_NAME = 64
POLICY_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
MODEL_PREFIX = "governor/"
POLICY_HEADER = "X-Governor-Policy"
POLL_S = 2.0
"""Seconds between two looks at the policy files' modification times."""

Builder = Callable[[GuardPolicy, Guard | None], Guard]
"""Builds the guard of a policy; the second argument is the guard it replaces (None at start)."""
Signature = tuple[int, int] | None
"""A file's modification time (ns) and size; None when it cannot be read."""


def policy_name(name: str, where: str) -> str:
    """``name`` when it is a valid policy name, else a ConfigError naming ``where``."""
    if not isinstance(name, str) or not POLICY_NAME.fullmatch(name):
        wanted = f"a policy name of 1 to {MAX_POLICY_NAME} letters, digits, '.', '_' or '-'"
        raise ConfigError(f"{where}: {expected(wanted, name)}")
    return name


def _signature(path: Path) -> Signature:
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size)


def rule_names(guard: Guard) -> frozenset[str]:
    """The names of the constraints a guard judges with (all from its policy file): the only
    ``rule`` labels its counters take."""
    return frozenset(c.name for c in guard.observer.constraints)


@dataclass(frozen=True)
class Served:
    """One served policy: its name, its guard, where its sessions live, its file."""

    name: str
    guard: Guard
    namespace: str = ""
    """What goes before its session ids in the store ("" or ``NAME:``)."""
    path: Path | None = None
    signature: Signature = None
    rules: frozenset[str] = frozenset()
    created: int = 0
    """When it was (re)loaded (Unix seconds): the ``created`` of its model in ``/v1/models``."""

    @property
    def model(self) -> str:
        return MODEL_PREFIX + self.name


class ServedPolicies:
    """The policies of one service (see the module doc)."""

    def __init__(self, served: Iterable[Served], build: Builder | None = None) -> None:
        self._by_name: dict[str, Served] = {}
        for s in served:
            policy_name(s.name, "policy")
            if s.name in self._by_name:
                raise ConfigError(f"policy {s.name}: expected each name once, found it twice")
            self._by_name[s.name] = s if s.rules else replace(s, rules=rule_names(s.guard))
        if not self._by_name:
            raise ConfigError("policies: expected at least one policy to serve, found none")
        self._build = build
        self._route = {k: s.name for s in self._by_name.values() for k in (s.name, s.model)}
        self._only = next(iter(self._by_name.values())) if len(self._by_name) == 1 else None
        self._reload_lock = threading.Lock()
        self._wake = threading.Event()
        self._full = False
        self._stop: threading.Event | None = None
        self._seen: dict[str, Signature] = {}
        """Each file's signature at the last poll: a change is read once it held for a poll."""
        self.reloads = 0
        """How many times a policy was replaced."""

    @classmethod
    def single(cls, guard: Guard, name: str = "default") -> ServedPolicies:
        """One guard served under ``name``, its session ids as the client gives them (no reload)."""
        return cls([Served(name, guard, created=int(time.time()))])

    @classmethod
    def from_files(
        cls, files: Mapping[str, Path], build: Builder, *, namespaced: bool = True
    ) -> ServedPolicies:
        """The policies in ``files`` (name: file), each guard from ``build``; ``namespaced``
        False only for one policy whose session ids stay as the client gives them."""
        if not namespaced and len(files) != 1:
            raise ConfigError("policies: expected one policy when sessions are not namespaced")
        served = []
        for name, path in files.items():
            policy_name(name, f"policy {path}")
            signature = _signature(path)
            guard = build(load_policy(path), None)
            namespace = f"{name}:" if namespaced else ""
            served.append(Served(name, guard, namespace, path, signature, created=int(time.time())))
        return cls(served, build)

    def __iter__(self) -> Iterator[Served]:
        return iter(list(self._by_name.values()))

    def __len__(self) -> int:
        return len(self._by_name)

    def get(self, name: str) -> Served | None:
        return self._by_name.get(name)

    @property
    def models(self) -> list[str]:
        return [s.model for s in self._by_name.values()]

    def select(self, model: str | None, header: str | None = None) -> Served:
        """The policy a request asks for (see the module doc); a 404 ``model_not_found``
        naming the served models when it names none of them."""
        if header is not None:
            name = self._route.get(header)
            if name is None:
                raise self._unknown(f"{POLICY_HEADER}: ", header)
            named = self._route.get(model) if model is not None else None
            if named is not None and named != name:  # two answers to one question: neither
                raise ApiError(
                    400,
                    f"expected one policy, found {POLICY_HEADER}: {name} and model: {named}",
                    param="model",
                    code="policy_conflict",
                )
            return self._by_name[name]
        only = self._only
        if only is not None:
            return self._by_name[only.name]  # (the current one: it may have been reloaded)
        name = self._route.get(model) if model is not None else None
        if name is not None:
            return self._by_name[name]
        raise self._unknown("model: ", model)

    def _unknown(self, where: str, found: str | None) -> ApiError:
        served = ", ".join(self.models)
        shown = repr(found[:100]) if isinstance(found, str) else "none"
        return ApiError(
            404,
            f"{where}expected one of the served models ({served}), found {shown}",
            param="model",
            code="model_not_found",
        )

    def for_stored(self, stored_id: str) -> Served:
        """The policy whose sessions include the stored id ``stored_id`` (the admin routes'):
        its namespace's name; a 404 when no served policy has it."""
        only = self._only
        if only is not None and not only.namespace:
            return self._by_name[only.name]
        name, sep, _ = stored_id.partition(":")
        served = self._by_name.get(name) if sep else None
        if served is None:
            raise ApiError(
                404,
                f"session id: expected a stored id starting with a served policy's name and ':'"
                f" ({', '.join(self._by_name)}), found {stored_id[:100]!r}",
                param="session_id",
                code="session_not_found",
            )
        return served

    # ------------------------------------------------------------------ reload

    def reload(self, *, changed_only: bool = False) -> list[str]:
        """Read each policy's file again (``changed_only``: only those whose modification time
        or size changed and then held still for one more call, so that a file is not read
        while it is being written), validate it, and replace its guard for new requests; a file that
        fails keeps the old policy (logged, and not tried again until it changes). The names
        of the policies replaced."""
        replaced: list[str] = []
        if self._build is None:
            return replaced
        with self._reload_lock:
            for served in list(self._by_name.values()):
                if served.path is None:
                    continue
                signature = _signature(served.path)
                if changed_only:
                    if signature == served.signature:
                        continue
                    seen, self._seen[served.name] = self._seen.get(served.name), signature
                    if seen != signature:  # still changing (a write in progress): next time
                        continue
                try:
                    policy = load_policy(served.path)
                    if _signature(served.path) != signature:  # written while read: next time
                        log.warning(
                            "policy %s: %s changed while it was read; the old policy stays"
                            " until it holds still (write policy files by renaming a finished"
                            " file over them)",
                            served.name,
                            served.path,
                        )
                        continue
                    guard = self._build(policy, served.guard)
                except Exception as exc:
                    log.warning(
                        "policy %s: %s not reloaded, the old policy stays: %s",
                        served.name,
                        served.path,
                        exc if isinstance(exc, ConfigError) else f"{type(exc).__name__}: {exc}",
                    )
                    self._by_name[served.name] = replace(served, signature=signature)
                    continue
                self._by_name[served.name] = replace(
                    served,
                    guard=guard,
                    signature=signature,
                    rules=rule_names(guard),
                    created=int(time.time()),
                )
                if self._only is not None:
                    self._only = self._by_name[served.name]
                self.reloads += 1
                replaced.append(served.name)
                log.info("policy %s: reloaded from %s", served.name, served.path)
                dropped = sorted(served.rules - rule_names(guard))
                if dropped:  # a truncated file can be a valid, weaker policy: say so loudly
                    log.warning(
                        "policy %s: the reload removed the rules %s",
                        served.name,
                        ", ".join(dropped),
                    )
                env = guard.policy.upstream.api_key_env
                if env and not os.environ.get(env):
                    log.warning(
                        "policy %s: upstream.api_key_env names $%s, which is not set: requests"
                        " go to the upstream without an API key",
                        served.name,
                        env,
                    )
        return replaced

    def request_reload(self) -> None:
        """Ask the watching thread to reload every policy now (safe from a signal handler)."""
        self._full = True
        self._wake.set()

    def watch(self, interval_s: float = POLL_S) -> Callable[[], None]:
        """Poll the files every ``interval_s`` seconds in a daemon thread (and reload all at once
        on :meth:`request_reload`); the function that stops it."""
        if not interval_s > 0:
            raise ConfigError(f"policy poll interval: {expected('seconds > 0', interval_s)}")
        stop = threading.Event()
        self._stop = stop

        def run() -> None:
            while not stop.is_set():
                self._wake.wait(interval_s)
                if stop.is_set():
                    break
                full, self._full = self._full, False
                self._wake.clear()
                try:
                    self.reload(changed_only=not full)
                except Exception:  # never let the watcher die: the old policies stay
                    log.exception("policy reload failed; the old policies stay")

        thread = threading.Thread(target=run, name="governor-policy-watch", daemon=True)
        thread.start()

        def stopped() -> None:
            stop.set()
            self._wake.set()
            thread.join(5)

        return stopped
