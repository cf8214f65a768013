"""What a check can judge of a reply that is still being generated: its prefixes or only the whole.

Each check declares one :class:`PrefixJudgement` as its ``prefix_judgement`` attribute; the
hold-back buffer of a streamed reply (:mod:`.holdback`) reads it with :func:`judgement_of`:

- ``each_prefix``: a violation on a prefix cannot be undone by more text (an upper bound on a
  feature that only grows as text is added, forbidden content, an LTL rule whose labels of a text
  reply do not depend on its text). Every prefix is judged before it is released.
- ``whole_reply``: more text can undo a violation (a lower bound: too short so far). Judged once,
  on the whole reply, before its last chunk is released.
- ``hold``: neither can be said (a feature that can go up or down, a condition on the reply). No
  text is released before the whole reply is judged: the stream then carries the admitted reply
  at the end. A check that declares nothing is held (fail closed).

Imports nothing of the project.
"""

from __future__ import annotations

from enum import Enum
from typing import Any


class PrefixJudgement(Enum):
    """How a check judges a reply still being generated (see the module doc)."""

    EACH_PREFIX = "each_prefix"
    WHOLE_REPLY = "whole_reply"
    HOLD = "hold"


def judgement_of(check: Any) -> PrefixJudgement:
    """The judgement ``check`` declares; ``hold`` when it declares none."""
    declared = getattr(check, "prefix_judgement", None)
    return declared if isinstance(declared, PrefixJudgement) else PrefixJudgement.HOLD
