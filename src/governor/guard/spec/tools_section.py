"""The ``tools`` section of a policy: which tools a client may see and call through a gateway.

::

    tools: {expose: [refund, verify_identity], hide: [delete_account]}

``expose`` lists the only tools that are listed and callable (absent: every tool the server has);
``hide`` lists tools that are never listed nor callable (applied after ``expose``). A call to a
tool that is not exposed is refused like a rule's refusal, under the name ``tools``, and never
reaches the server. The MCP gateway (:mod:`governor.integrations.mcp_gateway`) applies it to
``tools/list`` and ``tools/call``. Imports the spec's fields.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from governor.guard.spec.fields import At, mapping, names

TOOLS_KEYS = ("expose", "hide")
MAX_TOOL_NAMES = 1024
"""The most tool names one list may hold."""


@dataclass(frozen=True)
class ToolsPolicy:
    """Which tools are exposed (see the module doc)."""

    expose: frozenset[str] | None = None
    """The only tools listed and callable; None: every tool."""
    hide: frozenset[str] = frozenset()
    """Tools never listed nor callable."""

    def allows(self, tool: str) -> bool:
        """Whether ``tool`` may be listed and called."""
        return (self.expose is None or tool in self.expose) and tool not in self.hide


def tools_from(raw: Any, at: At) -> ToolsPolicy:
    """The ``tools`` section (absent: every tool exposed)."""
    data = mapping({} if raw is None else raw, at, TOOLS_KEYS)
    lists: dict[str, frozenset[str]] = {}
    for key in TOOLS_KEYS:
        if key in data:
            found = names(data[key], at.key(key))
            if len(found) > MAX_TOOL_NAMES:
                at.key(key).fail(f"at most {MAX_TOOL_NAMES} tool names", f"{len(found)} names")
            lists[key] = frozenset(found)
    return ToolsPolicy(lists.get("expose"), lists.get("hide", frozenset()))
