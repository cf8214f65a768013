"""The guard's fallback: a short reply that says what was refused and why.

The policy's ``fallbacks`` texts are keyed by state: ``check_failed`` when a check could not be
made, ``tool_refused`` (a template over ``{constraint}``, the rule's English text, and
``{reason}``, the public part of the refusal's explanation: never a value the candidate or a
tool result held, :func:`~.value_constraint.public_descriptor`) when an LTL rule or the safety
value refused the action, ``default``
otherwise. The reply is text, never a tool call. Imports the core types and the guard's exchange
and value constraint.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from governor.core import Fallback, Trajectory, Verdict
from governor.guard.exchange import Reply
from governor.guard.value_constraint import public_descriptor


class GuardFallback(Fallback):
    """Picks the fallback text for the verdicts that led to it (see the module doc)."""

    name = "guard fallback"

    def __init__(self, texts: Mapping[str, str], rules: Mapping[str, str]) -> None:
        self.texts = dict(texts)
        self.rules = dict(rules)  # LTL rule name -> its English text

    def text_for(self, verdicts: Sequence[Verdict]) -> str:
        if any(v.error is not None for v in verdicts):
            return self.texts.get("check_failed", self.texts["default"])
        for v in verdicts:
            if not v.admissible and v.constraint in self.rules:
                template = self.texts.get("tool_refused", self.texts["default"])
                reason = public_descriptor(v)  # never the values found (the record keeps them)
                return template.format(constraint=self.rules[v.constraint], reason=reason)
        return self.texts["default"]

    def act(self, traj: Trajectory, verdicts: Sequence[Verdict]) -> Reply:
        return Reply(self.text_for(verdicts))
