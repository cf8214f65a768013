"""The ``tools`` section of a policy: the tools a reply may call, and those that never run in
parallel.

::

    tools:
      offered: [lookup_order, refund, send_email, read_customer_record, verify_identity]
      not_in_parallel: [refund, verify_identity]

``offered`` (absent: every tool the request offers) names the tools a reply may call; with a
request that offers tools too, a call must name a tool both offer. Names are matched exactly: a
name that differs from an offered one in case, by an invisible character or a look-alike letter is
not offered. ``not_in_parallel`` names tools that must be a reply's only call (a reply's calls run
as one step, none knowing another's result: :mod:`governor.guard.call_checks`). Imports the
spec's fields.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from governor.guard.spec.fields import At, mapping, names

TOOLS_KEYS = ("offered", "not_in_parallel")


@dataclass(frozen=True)
class ToolsPolicy:
    """The tools a reply may call (None: those the request offers) and those that run alone."""

    offered: tuple[str, ...] | None = None
    not_in_parallel: tuple[str, ...] = ()


def tools_from(raw: Any, at: At) -> ToolsPolicy:
    """The ``tools`` section (absent: the defaults)."""
    data = mapping({} if raw is None else raw, at, TOOLS_KEYS)
    offered = None
    if data.get("offered") is not None:
        offered = _distinct(names(data["offered"], at.key("offered")), at.key("offered"))
    alone = _distinct(names(data.get("not_in_parallel") or [], at.key("not_in_parallel")),
                      at.key("not_in_parallel"))  # fmt: skip
    if offered is not None:
        for i, name in enumerate(alone):
            if name not in offered:
                at.key("not_in_parallel").index(i).fail(f"one of {', '.join(offered)}", name)
    return ToolsPolicy(offered, alone)


def _distinct(chosen: tuple[str, ...], at: At) -> tuple[str, ...]:
    for i, name in enumerate(chosen):
        if not name or name in chosen[:i]:
            at.index(i).fail("a tool name given once", name)
    return chosen
