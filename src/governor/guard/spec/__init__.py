"""The guard's policy file: what a guard enforces, read from YAML (or JSON) and validated.

The file's name in the code is :class:`GuardPolicy` (``governor.core.Policy`` is the proposer,
another thing). :mod:`.guard_policy` reads the whole file (:func:`load_policy`,
:func:`policy_from_mapping`) into a :class:`GuardPolicy`; its sections have their readers:
:mod:`.parts` (LTL rules, overlay sets and fallback texts, at the top and inside each mode),
:mod:`.stream_section` (``stream``: how a streamed reply is cut into chunks),
:mod:`.tools_section` (``tools``: the tools a reply may call, and those that run alone),
:mod:`.value_section` (``safety_value``: a learned safety value over one tool's calls),
:mod:`.mode_section` (``supervision``: reading the modes and validating them by building them)
and :mod:`.mode_spec` (the section as read, and its builders of the runtime supervisor). The
typed getters every reader uses, whose errors name the file and the path inside it, are in
:mod:`.fields`. :mod:`.propositions` reads the ``propositions`` section into the policy's
:class:`Vocabulary`: predicates over tool calls, running sums and user turns, the atoms of the
LTL rules.

May import the config, the error tree, the files helpers, the core types, the observer, the LTL
parser, the overlay rules and loader, the supervision package, the safety values' task registry
and the guard's exchange; never the guard's sessions, stores, upstream or service.
"""

from governor.guard.spec.guard_policy import (
    DEFAULT_FALLBACKS,
    Checks,
    GuardPolicy,
    Upstream,
    load_policy,
    policy_from_mapping,
)
from governor.guard.spec.mode_spec import ModeSpec, OverrideSpec, SupervisionSpec
from governor.guard.spec.parts import LTLRule
from governor.guard.spec.propositions import Vocabulary
from governor.guard.spec.stream_section import StreamPolicy
from governor.guard.spec.tools_section import ToolsPolicy
from governor.guard.spec.value_section import SafetyValueSpec

__all__ = [
    "DEFAULT_FALLBACKS",
    "Checks",
    "GuardPolicy",
    "LTLRule",
    "ModeSpec",
    "OverrideSpec",
    "SafetyValueSpec",
    "StreamPolicy",
    "SupervisionSpec",
    "ToolsPolicy",
    "Upstream",
    "Vocabulary",
    "load_policy",
    "policy_from_mapping",
]
