"""The guard: a policy file's constraints enforced on an upstream model's replies, per session.

A policy (:mod:`.policy`, YAML validated with errors that name the file and the path inside it)
declares propositions over tool calls and user turns (:mod:`.tools`), LTL rules over them and
overlays over text replies (:mod:`.constraints`), fallback texts (:mod:`.fallback`) and bounds.
:class:`Guard` (:mod:`.facade`) builds the observer once; a :class:`GuardSession` (:mod:`.session`)
is one trajectory, kept in a :class:`SessionStore` (:mod:`.store`: in memory or SQLite) so that
it survives a restart. ``respond`` proposes through the upstream (:mod:`.upstream`; tools passed
natively to a backend that supports them), judges, regenerates or falls back; ``check`` judges a
candidate without an LLM call; ``commit`` records an action the client executed.

Part of the runtime library: imports the core loop, the config, the backends, the LTL and overlay
families and the trace records; never ``governor.worlds``, ``governor.cli`` or ``governor.bench``.
"""

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
from governor.guard.stores import MemoryStore, SessionStore, SqliteStore, StoreError

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
    "SqliteStore",
    "StoreError",
    "SyncInLoopError",
    "ToolCall",
    "Upstream",
    "Vocabulary",
    "load_policy",
    "policy_from_mapping",
]
