"""The guard's safety-value constraint: a learned Q judges the tool calls that are an agent's
discrete actions, and a refused call is replaced by the same call with the safest action.

:class:`SafetyValueConstraint` enforces a policy's ``safety_value`` section
(:mod:`.spec.value_section`). A reply that does not call the section's tool is not its business
(admitted). For a call of it: the action is the index of the call's argument value among the
section's ``actions``; the observation is the value at the ``observation`` path of the latest
tool message's JSON content; the call is admitted iff Q(observation, action) > margin (the
family's :class:`~governor.safety_values.filter.SafetyFilter`, with the task's action labels).
A refusal says what was expected; its descriptor's detail after :data:`DETAIL` (the values found:
the call's argument, the tool result, Q, the safest action) is for the decision record only, and
the public part (:func:`public_descriptor`: the rule's kind of violation in the policy's own
names) is all a fallback text or a check's answer may quote. It fails closed: no tool message
before the call, a content that is not JSON, no value at the path or one the checkpoint cannot
read, an argument value that is not one of the actions, and two calls of the tool in one reply
(one observation, one action) are refusals that say why; a Q that cannot be computed or is not
finite fails the check. It judges every call of its tool (the policy's ``checks`` choose among
the LTL rules and overlays), keeps no memory (each call is judged on the observation before it)
and is not hard: its recovery is its own argmax, which stays the safest action even where it
fails the margin too (the LTL rules still judge the recovery).

:class:`ValueRecovery` is the guard's fallback when the section's ``recovery`` is on: after a
refusal by Q it offers the refused reply with the action replaced by the safest one (the same
call id, the other arguments kept; where every action fails the margin, the safest is still the
least bad one, as in a safety filter, even when it is the refused action itself); any other
refusal goes to the policy's fallback texts. The recovery travels in the refusal itself
(``Verdict.repair``), so nothing is remembered between the check and the fallback. Imports the
core types, the error tree, the guard's exchange, the spec's propositions paths and value
section (the filter itself comes from the checkpoint's task).
"""

from __future__ import annotations

import copy
import json
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from governor.core import Constraint, Fallback, Trajectory, Verdict
from governor.errors import ConfigError, expected, shown
from governor.files import json_loads
from governor.guard.exchange import Message, Reply, ToolCall, messages_of
from governor.guard.spec.propositions import MISSING, lookup
from governor.guard.spec.value_section import SafetyValueSpec

DETAIL = " | in the record: "
"""Where a verdict's descriptor turns from what may be said (the rule, the kind of violation,
the policy's own names) to what only the decision record keeps (the values found: the call's
arguments, the tool result, Q): :func:`public_descriptor` cuts there."""


def public_descriptor(verdict: Verdict) -> str:
    """The part of ``verdict``'s descriptor that may reach a client (a fallback text, a check's
    answer): up to :data:`DETAIL`, which no descriptor's public part holds."""
    return verdict.descriptor.split(DETAIL, 1)[0]


def _shown(value: Any) -> str:
    return "nothing" if value is MISSING else shown(value)


class SafetyValueConstraint(Constraint):
    """A policy's learned safety value over the calls of one tool (see the module doc)."""

    hard = False
    violation = "safety_value"

    def __init__(self, spec: SafetyValueSpec) -> None:
        self.spec = spec
        self.name = spec.name
        self.task = spec.learned.model.task
        self.filter = self.task.safety_filter(self.q_values, spec.margin, spec.name)

    def q_values(self, observation: Any) -> np.ndarray:
        """Q of every action at ``observation`` (a ValueError when one is not finite)."""
        q = np.asarray(self.spec.learned(observation), dtype=np.float64)
        if q.shape != (len(self.spec.actions),) or not np.isfinite(q).all():
            raise ValueError(f"safety value: {expected('a finite Q per action', q.tolist())}")
        return q

    def observation(self, messages: Sequence[Message]) -> tuple[Any, str | None]:
        """The checkpoint's observation in the latest tool message, or (None, why there is
        none: what was expected, then, after :data:`DETAIL`, what was found)."""
        path = ".".join(self.spec.observation)
        latest = next((m for m in reversed(messages) if m.role == "tool"), None)
        if latest is None:
            return None, "expected a tool message before the call, found none"
        try:
            content = json_loads(latest.content)  # (nested too deep: a ValueError too)
        except ValueError:
            found = _shown(latest.content)
            return None, f"expected JSON content in the latest tool message{DETAIL}found {found}"
        value = lookup(content, self.spec.observation)
        if self.spec.learned.obs == "text":
            if not isinstance(value, str) or not value.strip():
                wanted = f"expected a text at {path} in the latest tool result"
                return None, f"{wanted}{DETAIL}found {_shown(value)}"
            return {"text": value}, None
        n = self.task.state_dim
        if not (
            isinstance(value, list)
            and len(value) == n
            and all(
                isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
                for v in value
            )
        ):
            wanted = f"{n} finite numbers (the {self.spec.learned.env} state) at {path}"
            return None, f"expected {wanted} in the latest tool result{DETAIL}found {_shown(value)}"
        return {"state": np.asarray(value, dtype=np.float64)}, None

    def check(self, traj: Trajectory, action: Any) -> Verdict:
        reply = action if isinstance(action, Reply) else Reply(str(action))
        mine = [i for i, c in enumerate(reply.tool_calls) if c.name == self.spec.tool]
        if not mine:
            return Verdict.allow(self.name)
        return self._judge(traj, reply, mine)

    def _judge(self, traj: Trajectory, reply: Reply, mine: Sequence[int]) -> Verdict:
        s = self.spec
        if len(mine) > 1:
            why = f"expected one {s.tool} call per reply (one observation, one action)"
            return self._refuse(f"{why}, found {len(mine)}")
        call = reply.tool_calls[mine[0]]
        what = f"the {call.name} call"  # never its arguments: a fallback text may say this
        try:
            args = call.args()
        except ConfigError as exc:
            return self._refuse(f"{what}: expected its arguments as one JSON object{DETAIL}{exc}")
        found = lookup(args, s.argument)
        index = s.action_of(found)
        if index is None:
            choices = " or ".join(repr(a) for a in s.actions)
            argument = ".".join(s.argument)
            wanted = f"{what}: {argument}: expected {choices}"
            return self._refuse(f"{wanted}{DETAIL}found {_shown(found)}")
        observation, problem = self.observation(messages_of(traj.observation))
        if problem is not None:
            return self._refuse(f"{what}: no observation to judge it on: {problem}")
        verdict = self.filter.check(Trajectory(observation), index)
        if verdict.admissible:
            return verdict
        q = self.q_values(observation)
        safe = int(np.argmax(q))
        label = self.filter.labels[safe].lower()
        argument = ".".join(s.argument)
        descriptor = (
            f"{what} leads toward failure: its safety value is at or below the margin"
            f"{DETAIL}{verdict.descriptor}; the safest action is {argument}="
            f"{s.actions[safe]!r} ({label}, safety value {q[safe]:.3f})"
        )
        repair = self._replaced(reply, mine[0], args, s.actions[safe])
        return Verdict.reject(
            self.name, verdict.deviation, descriptor, margin=verdict.margin, repair=repair
        )

    def _refuse(self, why: str) -> Verdict:
        return Verdict.reject(self.name, 1.0, f"refused unchecked: {why}")

    def _replaced(self, reply: Reply, at: int, args: dict[str, Any], value: Any) -> Reply:
        """``reply`` with the action of its call ``at`` set to ``value``."""
        new = copy.deepcopy(args)
        *parents, last = self.spec.argument
        holder: Any = new
        for part in parents:
            holder = holder[int(part)] if isinstance(holder, list) else holder[part]
        if isinstance(holder, list):
            holder[int(last)] = value
        else:
            holder[last] = value
        old = reply.tool_calls[at]
        call = ToolCall(old.id, old.name, json.dumps(new))
        calls = (*reply.tool_calls[:at], call, *reply.tool_calls[at + 1 :])
        return Reply(reply.content, calls)


class ValueRecovery(Fallback):
    """The recovery of a call refused by Q first; otherwise ``inner`` (the policy's texts)."""

    name = "value recovery"

    def __init__(self, constraint: SafetyValueConstraint, inner: Fallback) -> None:
        self.constraint = constraint
        self.inner = inner

    def act(self, traj: Trajectory, verdicts: Sequence[Verdict]) -> Any:
        name = self.constraint.name
        for v in verdicts:
            if v.constraint == name and not v.admissible and isinstance(v.repair, Reply):
                return v.repair
        return self.inner.act(traj, verdicts)


def value_fallback(constraints: Sequence[Constraint], inner: Fallback) -> Fallback:
    """``inner``, behind the recovery of the policy's safety value when it offers one."""
    for c in constraints:
        if isinstance(c, SafetyValueConstraint) and c.spec.recovery:
            return ValueRecovery(c, inner)
    return inner
