"""The guard service: an OpenAI-compatible HTTP front (``governor serve``) for any upstream model.

:func:`create_app` (:mod:`.app`) builds a Starlette app around one :class:`~governor.guard.Guard`:
``POST /v1/chat/completions`` (a guarded reply with a ``governor`` field; ``n`` admitted
choices; streamed in chunks, each released once checked, :mod:`.stream`), ``POST /v1/checks``
(check-only, no LLM call), ``/healthz``, ``/readyz`` and ``/metrics`` (Prometheus text,
:mod:`.prometheus`), and, under an admin key, the ``/admin`` routes that pause, resume, end,
reset and show a session (:mod:`.admin`). Requests are read with a size limit and checked field
by field (:mod:`.schema`); every error is the OpenAI error object (:mod:`.api_errors`); client API
keys are checked against sha256 digests (:mod:`.auth`) and own the sessions they name; what a key
may spend is limited by token buckets (:mod:`.limits`) and a connection's pace by uvicorn's
settings (:mod:`.connections`); the policy served when none is given is
the shipped small-talk overlays policy, and the command line's upstream overrides, in
:mod:`.served_policy`.

Part of the runtime library, with the optional ``[serve]`` extra (starlette; uvicorn for the
command): imports the guard's public facade, the backends' message types and the error tree;
never ``governor.worlds``, ``governor.cli``, ``governor.bench`` or ``governor.papers``."""

from governor.serve.app import create_app
from governor.serve.auth import KeyChecker, load_key_hashes
from governor.serve.prometheus import Metrics
from governor.serve.served_policy import default_policy, with_upstream

__all__ = [
    "KeyChecker",
    "Metrics",
    "create_app",
    "default_policy",
    "load_key_hashes",
    "with_upstream",
]
