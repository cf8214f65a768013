"""The ``tools`` section of a policy: the tools an agent may call, those it may never call, those
that never run beside another call, the groups rules speak of and the tools whose results are
trusted data.

::

    tools:
      offered: [lookup_order, refund, send_email, read_customer_record, verify_identity]
      hide: [delete_account]
      not_in_parallel: [refund, verify_identity]
      groups: {sends: [send_email], pays: [refund]}
      trusted: [verify_identity, lookup_order, group:pays]

``offered`` (absent: every tool the request offers, or every tool an MCP server lists) names the
tools a reply may call; with a request that offers tools too, a call must name a tool both offer.
Names are matched exactly: a name that differs from an offered one in case, by an invisible
character or a look-alike letter is not offered. ``hide`` names tools that are never callable (and
never listed by the MCP gateway), whatever offers them. ``not_in_parallel`` names tools that must
be a reply's only call (a reply's calls run as one step, none knowing another's result:
:mod:`governor.guard.call_checks`). The service applies the section to every reply's calls
(:mod:`governor.guard.call_checks`); the MCP gateway (:mod:`governor.integrations.mcp_gateway`)
to ``tools/list`` and ``tools/call``. ``groups`` names sets of tools that a proposition names as
``group:NAME`` (:mod:`.propositions`); ``trusted`` lists the tools (or ``group:NAME``s) whose
results are trusted data, every other tool's result being untrusted (:mod:`..provenance`). The
top-level ``tool_groups`` and ``trusted_tools`` of earlier policies are errors naming these keys.
Imports the spec's fields.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from governor.guard.spec.fields import At, mapping, names

TOOLS_KEYS = ("offered", "hide", "not_in_parallel", "groups", "trusted")
MOVED_KEYS = {"tool_groups": "tools.groups", "trusted_tools": "tools.trusted"}
"""Top-level keys of earlier policies and where they now belong."""
GROUP_PREFIX = "group:"
MAX_TOOL_NAMES = 1024
"""The most tool names one list may hold."""


@dataclass(frozen=True)
class ToolsPolicy:
    """The tools a reply may call (None: those offered to it), those never callable, those that
    run alone, the named groups of tools and the trusted tools (``group:NAME``s expanded)."""

    offered: tuple[str, ...] | None = None
    hide: frozenset[str] = frozenset()
    not_in_parallel: tuple[str, ...] = ()
    groups: Mapping[str, frozenset[str]] = field(default_factory=dict)
    trusted: frozenset[str] = frozenset()

    def allows(self, tool: str) -> bool:
        """Whether the policy lets ``tool`` be listed and called (before the request's own list)."""
        return (self.offered is None or tool in self.offered) and tool not in self.hide


def tools_from(raw: Any, at: At) -> ToolsPolicy:
    """The ``tools`` section (absent: the defaults)."""
    data = mapping({} if raw is None else raw, at, TOOLS_KEYS)
    offered = None
    if data.get("offered") is not None:
        offered = _distinct(names(data["offered"], at.key("offered")), at.key("offered"))
    hide = _distinct(names(data.get("hide") or [], at.key("hide")), at.key("hide"))
    alone = _distinct(names(data.get("not_in_parallel") or [], at.key("not_in_parallel")),
                      at.key("not_in_parallel"))  # fmt: skip
    if offered is not None:
        for i, name in enumerate(alone):
            if name not in offered:
                at.key("not_in_parallel").index(i).fail(f"one of {', '.join(offered)}", name)
    groups = groups_from(data.get("groups"), at.key("groups"))
    trusted = trusted_from(data.get("trusted"), at.key("trusted"), groups)
    return ToolsPolicy(offered, frozenset(hide), alone, groups, trusted)


def moved_keys(top: Mapping[str, Any], at: At) -> None:
    """Fail on the top-level ``tool_groups`` or ``trusted_tools`` of earlier policies, naming
    where each now belongs."""
    for old, new in MOVED_KEYS.items():
        if old in top:
            key = new.split(".")[1]
            raise at.key(old).error(
                f"expected it in the tools section as {new} (tools: {{{key}: ...}}),"
                " found it at the top level"
            )


def groups_from(raw: Any, at: At) -> dict[str, frozenset[str]]:
    """``tools.groups``: group names to the tools in them."""
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        at.fail("a mapping of group names to lists of tool names", raw)
    if len(raw) > MAX_TOOL_NAMES:
        at.fail(f"at most {MAX_TOOL_NAMES} groups", f"{len(raw)} groups")
    out: dict[str, frozenset[str]] = {}
    for group, members in raw.items():
        where = at.key(str(group))
        if not isinstance(group, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_-]*", group):
            where.fail("a group name (letters, digits, _ and -)", group)
        tools = names(members, where)
        if not tools:
            where.fail("a non-empty list of tool names", members)
        out[group] = frozenset(_distinct(tools, where))
    return out


def trusted_from(raw: Any, at: At, groups: Mapping[str, frozenset[str]]) -> frozenset[str]:
    """``tools.trusted``: tool names and ``group:NAME``s of declared groups, as tool names."""
    out: set[str] = set()
    for i, tool in enumerate(_distinct(names(raw or [], at), at)):
        if tool == "*":
            at.index(i).fail("a tool name or group:NAME (not *: list what you trust)", tool)
        if tool.startswith(GROUP_PREFIX):
            group = tool[len(GROUP_PREFIX) :]
            if group not in groups:
                declared = ", ".join(sorted(groups)) or "none"
                at.index(i).fail(f"group:NAME of a declared group ({declared})", tool)
            out |= groups[group]
        else:
            out.add(tool)
    return frozenset(out)


def _distinct(chosen: tuple[str, ...], at: At) -> tuple[str, ...]:
    if len(chosen) > MAX_TOOL_NAMES:
        at.fail(f"at most {MAX_TOOL_NAMES} tool names", f"{len(chosen)} names")
    for i, name in enumerate(chosen):
        if not name or name in chosen[:i]:
            at.index(i).fail("a tool name given once", name)
    return chosen
