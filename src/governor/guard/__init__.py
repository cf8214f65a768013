"""The guard: a policy file's constraints enforced on an upstream model's replies, per session.

Where things are:

- the policy file, :mod:`.spec` (:class:`GuardPolicy`, :func:`load_policy`; YAML validated with
  errors that name the file and the path inside it): propositions over tool calls and user turns,
  LTL rules over them, overlays over text replies, fallback texts, bounds, and the ``stream``,
  ``tools``, ``supervision`` (modes) and ``safety_value`` sections;
- :class:`Guard` (:mod:`.facade`) builds the observer once; a :class:`GuardSession`
  (:mod:`.session`, one class) is one trajectory: ``respond`` proposes through the upstream
  (:mod:`.upstream`; tools passed natively to a backend that supports them), judges, regenerates
  or falls back; ``check`` judges a candidate without an LLM call; ``commit`` records an action
  the client executed;
- what a session reads and keeps: :mod:`.exchange` (the conversation, the guard's :class:`Reply`,
  a request's :class:`Sampling`), :mod:`.session_state` (its state and JSON form) and the session
  stores, :mod:`.stores` (in memory, SQLite or PostgreSQL) so that it survives a restart;
- what judges: :mod:`.constraints` (LTL monitors over tool calls, overlays over text, the text
  beside calls included), :mod:`.call_checks` (a call names an offered tool exactly; tools that
  run alone),
  :mod:`.value_constraint` (a learned safety value), :mod:`.mode_observers` (a policy's modes,
  each an observer, under the supervisor), :mod:`.fallback` (the fallback texts);
- a streamed reply: :mod:`.holdback` (the hold-back buffer over the backend's streamed chat call),
  :mod:`.prefix` (what a check can judge of a prefix), :mod:`.release` (the released events);
- :mod:`.choices` (``n > 1`` admitted choices) and :mod:`.summary` (the JSON summaries, which
  never carry a refused candidate).

Part of the runtime library: imports the core loop, the config, the backends, the LTL and overlay
families, the supervision package and the trace records; never ``governor.worlds``,
``governor.cli``, ``governor.bench`` or ``governor.papers``, and no HTTP client (transport is the backends')."""

from governor.guard.exchange import Conversation, Message, Reply, Sampling, ToolCall
from governor.guard.facade import Guard
from governor.guard.session import CheckResult, GuardReply, GuardSession, SyncInLoopError
from governor.guard.spec import (
    GuardPolicy,
    LTLRule,
    Upstream,
    Vocabulary,
    load_policy,
    policy_from_mapping,
)
from governor.guard.stores import (
    MemoryStore,
    SessionStore,
    SharedStore,
    SqliteStore,
    StoreError,
    store_from,
)

__all__ = [
    "CheckResult",
    "Conversation",
    "Guard",
    "GuardPolicy",
    "GuardReply",
    "GuardSession",
    "LTLRule",
    "MemoryStore",
    "Message",
    "Reply",
    "Sampling",
    "SessionStore",
    "SharedStore",
    "SqliteStore",
    "StoreError",
    "SyncInLoopError",
    "ToolCall",
    "Upstream",
    "Vocabulary",
    "load_policy",
    "policy_from_mapping",
    "store_from",
]
