"""The ``tools`` section of a policy: the tools an agent may call, those it may never call, and
those that never run beside another call.

::

    tools:
      offered: [lookup_order, refund, send_email, read_customer_record, verify_identity]
      hide: [delete_account]
      not_in_parallel: [refund, verify_identity]

``offered`` (absent: every tool the request offers, or every tool an MCP server lists) names the
tools a reply may call; with a request that offers tools too, a call must name a tool both offer.
Names are matched exactly: a name that differs from an offered one in case, by an invisible
character or a look-alike letter is not offered. ``hide`` names tools that are never callable (and
never listed by the MCP gateway), whatever offers them. ``not_in_parallel`` names tools that must
be a reply's only call (a reply's calls run as one step, none knowing another's result:
:mod:`governor.guard.call_checks`). The service applies the section to every reply's calls
(:mod:`governor.guard.call_checks`); the MCP gateway (:mod:`governor.integrations.mcp_gateway`)
to ``tools/list`` and ``tools/call``. Imports the spec's fields.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from governor.guard.spec.fields import At, mapping, names

TOOLS_KEYS = ("offered", "hide", "not_in_parallel")
MAX_TOOL_NAMES = 1024
"""The most tool names one list may hold."""


@dataclass(frozen=True)
class ToolsPolicy:
    """The tools a reply may call (None: those offered to it), those never callable, and those
    that run alone."""

    offered: tuple[str, ...] | None = None
    hide: frozenset[str] = frozenset()
    not_in_parallel: tuple[str, ...] = ()

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
    return ToolsPolicy(offered, frozenset(hide), alone)


def _distinct(chosen: tuple[str, ...], at: At) -> tuple[str, ...]:
    if len(chosen) > MAX_TOOL_NAMES:
        at.fail(f"at most {MAX_TOOL_NAMES} tool names", f"{len(chosen)} names")
    for i, name in enumerate(chosen):
        if not name or name in chosen[:i]:
            at.index(i).fail("a tool name given once", name)
    return chosen
