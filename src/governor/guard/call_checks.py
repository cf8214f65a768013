"""Checks of a reply's tool calls as calls: the tools offered, and the calls that run alone.

:class:`OfferedToolsConstraint` refuses a call whose name is not exactly one of the tools offered:
those the request offers (its ``tools``), or those the policy declares (``tools.offered``), or
the names both give when both do, less those the policy hides (``tools.hide``); with neither, no
tool is offered and every call is refused
(fail closed). Matching is exact, so ``Refund``, ``refund`` with a zero-width space, a Cyrillic
``е``, fullwidth letters, ``functions.refund`` or ``refund\\0`` are not ``refund``: a policy's
rules name tools exactly, and a name they do not know would slip past them. For the refusal's
message only, a name is compared with the offered ones after NFKC, with invisible characters
removed, look-alike letters mapped and a ``namespace.`` prefix dropped (:func:`resembles`), so the
model is told which offered tool it meant; the message never repeats the name it wrote.

:class:`ParallelCallsConstraint` refuses a reply in which a tool the policy lists in
``tools.not_in_parallel`` is called beside another call. (A reply's calls form one step in which
no call's result is known; how the LTL rules read such a step is in :mod:`.constraints`.)

Both are hard (they judge the fallback's action too) and judge every prefix of a streamed reply
(a text reply has no calls). Their descriptors never quote the reply. Imports the core types, the
guard's exchange, prefix judgements and the spec's tools section.
"""

from __future__ import annotations

import difflib
import unicodedata
from collections.abc import Iterable, Mapping
from typing import Any

from governor.core import Constraint, Trajectory, Verdict
from governor.guard.exchange import Conversation, Reply
from governor.guard.prefix import PrefixJudgement
from governor.guard.spec.tools_section import ToolsPolicy

OFFERED_TOOLS = "offered_tools"
NOT_IN_PARALLEL = "not_in_parallel"
LOOKALIKES = str.maketrans(
    {
        # Cyrillic and Greek letters drawn like Latin ones (lower case after casefold)
        "а": "a", "в": "b", "е": "e", "ё": "e", "к": "k", "м": "m", "н": "h", "о": "o",
        "р": "p", "с": "c", "т": "t", "у": "y", "х": "x", "і": "i", "ј": "j", "ѕ": "s",
        "ԁ": "d", "ɡ": "g", "α": "a", "ε": "e", "ι": "i", "κ": "k", "ν": "v", "ο": "o",
        "ρ": "p", "τ": "t", "υ": "u", "χ": "x",
    }
)  # fmt: skip


def offered_names(tools: Iterable[Any]) -> tuple[str, ...]:
    """The function names of a request's tool schemas (``{"type": "function", "function":
    {"name": ...}}`` or the short ``{"name": ...}``); a schema without one offers nothing."""
    out = []
    for tool in tools:
        if type(tool) is not dict and not isinstance(tool, Mapping):  # (a JSON object: a dict)
            continue
        fn = tool.get("function", tool)
        name = fn.get("name") if type(fn) is dict or isinstance(fn, Mapping) else None
        if isinstance(name, str) and name:
            out.append(name)
    return tuple(out)


def folded(name: str) -> str:
    """``name`` as compared for a refusal's message: NFKC, no invisible or control characters,
    case folded, look-alike letters mapped to Latin, a ``namespace.`` prefix dropped."""
    text = unicodedata.normalize("NFKC", name)
    text = "".join(ch for ch in text if unicodedata.category(ch)[0] not in ("C", "Z"))
    text = text.casefold().translate(LOOKALIKES)
    return text.rsplit(".", 1)[-1]


def resembles(name: str, offered: Iterable[str]) -> str | None:
    """The offered tool ``name`` was probably meant to be, or None."""
    by_fold = {folded(o): o for o in offered}
    key = folded(name)
    if key in by_fold:
        return by_fold[key]
    close = difflib.get_close_matches(key, list(by_fold), n=1, cutoff=0.8)
    return by_fold[close[0]] if close else None


class OfferedToolsConstraint(Constraint):
    """Every call names a tool that is offered, exactly (see the module doc)."""

    name = OFFERED_TOOLS
    hard = True
    pure = True
    violation = "tool_not_offered"
    prefix_judgement = PrefixJudgement.EACH_PREFIX
    text = "call only the tools offered, by their exact names"

    def __init__(self, policy: ToolsPolicy | None = None) -> None:
        self.declared = None if policy is None else policy.offered
        self.hidden = frozenset() if policy is None else policy.hide

    def offered(self, observation: Any) -> tuple[str, ...]:
        """The names a reply may call now (see the module doc), less the hidden ones."""
        asked = offered_names(observation.tools) if isinstance(observation, Conversation) else ()
        if self.declared is None:
            names = asked
        elif not asked:
            names = self.declared
        else:
            names = tuple(n for n in self.declared if n in asked)
        if not self.hidden:
            return names
        return tuple(n for n in names if n not in self.hidden)

    def check(self, traj: Trajectory, action: Any) -> Verdict:
        if not isinstance(action, Reply) or not action.tool_calls:
            return Verdict.allow(self.name)
        offered = self.offered(traj.observation)
        allowed = frozenset(offered)
        wrong = [i for i, c in enumerate(action.tool_calls) if c.name not in allowed]
        if not wrong:
            return Verdict.allow(self.name)
        n = len(action.tool_calls)
        parts = []
        for i in wrong:
            meant = resembles(action.tool_calls[i].name, offered)
            hint = f"; it resembles the offered tool {meant}" if meant else ""
            parts.append(f"call {i + 1} of {n} names a tool that is not offered{hint}")
        listed = ", ".join(offered) if offered else "none"
        descriptor = f"{'; '.join(parts)} (tool names must match exactly; offered: {listed})"
        return Verdict.reject(self.name, float(len(wrong)), descriptor)


class ParallelCallsConstraint(Constraint):
    """A tool listed in ``tools.not_in_parallel`` is its reply's only call."""

    name = NOT_IN_PARALLEL
    hard = True
    pure = True
    violation = "parallel_calls"
    prefix_judgement = PrefixJudgement.EACH_PREFIX

    def __init__(self, alone: Iterable[str]) -> None:
        self.alone = tuple(alone)
        self.text = f"call {', '.join(self.alone)} only alone, never beside another call"

    def check(self, traj: Trajectory, action: Any) -> Verdict:
        calls = action.tool_calls if isinstance(action, Reply) else ()
        listed = sorted({c.name for c in calls if c.name in self.alone})
        if len(calls) < 2 or not listed:
            return Verdict.allow(self.name)
        descriptor = (
            f"{', '.join(listed)} must be called alone, found {len(calls)} calls in one reply"
            " (they would run in parallel, none knowing another's result)"
        )
        return Verdict.reject(self.name, float(len(calls) - 1), descriptor)


CALL_CHECKS = (OfferedToolsConstraint, ParallelCallsConstraint)


def call_constraints(policy: ToolsPolicy) -> list[Constraint]:
    """The offered-tools check, and the parallel-calls one when the policy lists tools."""
    out: list[Constraint] = [OfferedToolsConstraint(policy)]
    if policy.not_in_parallel:
        out.append(ParallelCallsConstraint(policy.not_in_parallel))
    return out
