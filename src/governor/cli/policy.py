"""The ``governor policy`` commands: ``check`` validates a guard policy file and says, in English,
what it will enforce (each LTL rule's text, formula and reading, the propositions, the overlays,
the checks, the fallbacks and the bounds). A bad file ends in one error line and exit status 2.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from rich.console import Console

from governor.guard.policy import GuardPolicy, load_policy
from governor.guard.tools import ANY_TOOL, SumProp, ToolProp, UserProp
from governor.ltl.domain import Domain
from governor.ltl.english import english


def add_policy_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``policy`` command group (``check``) to ``subparsers``."""
    policy = subparsers.add_parser("policy", help="validate guard policy files")
    sub = policy.add_subparsers(dest="policy_command", required=True, parser_class=type(policy))
    check = sub.add_parser("check", help="validate a policy file and say what it enforces")
    check.add_argument("file", type=Path, help="the policy YAML file")
    check.set_defaults(handler=check_command)
    return policy


def _proposition(p: ToolProp | SumProp | UserProp) -> str:
    if isinstance(p, UserProp):
        return f"the latest user message matches /{p.pattern.pattern}/"
    if isinstance(p, SumProp):
        path = ".".join(p.path)
        return f"the total {path} of {p.tool} calls so far {p.op} {p.value:g}"
    who = "any tool is called" if p.tool == ANY_TOOL else f"{p.tool} is called"
    conds = [
        f"{'.'.join(c.path)} "
        + (f"matches /{c.pattern.pattern}/" if c.pattern else f"{c.kind} {c.value!r}")
        for c in p.where
    ]
    return who + (f" with {' and '.join(conds)}" if conds else "")


def describe(policy: GuardPolicy) -> list[str]:
    """The lines ``policy check`` prints."""
    lines = [f"{policy.source}: valid", ""]
    domain = Domain.of("guard", sorted(policy.vocabulary.names))
    if policy.ltl:
        lines.append(f"LTL rules ({len(policy.ltl)}), checked before every action:")
        for r in policy.ltl:
            status = "verified" if r.verified else "NOT verified by a person"
            lines += [
                f"  {r.name}: {r.text} ({status})",
                f"    formula: {r.formula}",
                f"    reads:   {english(r.formula, domain)}",
            ]
    else:
        lines.append("LTL rules: none")
    if policy.vocabulary.props:
        lines.append("Propositions:")
        lines += [f"  {p.name}: {_proposition(p)}" for p in policy.vocabulary.props]
    names = ", ".join(o.name for o in policy.overlays if o.kind != "permissive")
    lines.append(f"Overlays: {policy.overlays_from or 'none'}" + (f" ({names})" if names else ""))
    c = policy.checks
    lines.append(f"Checks: text replies by {', '.join(c.assistant) or 'nothing'};"
                 f" tool calls by {', '.join(c.tool_calls) or 'nothing'}")  # fmt: skip
    lines.append("Fallbacks:")
    lines += [f"  {k}: {v}" for k, v in policy.fallbacks.items()]
    o, up = policy.observer, policy.upstream
    budget = "unbounded" if o.time_budget_s is None else f"{o.time_budget_s:g} s"
    lines.append(
        f"Bounds: {o.n_candidates} candidate(s) per attempt, at most {o.max_regenerations}"
        f" regeneration(s), time budget {budget} per step"
    )
    where = f"{up.model} at {up.base_url}" if up.base_url and up.model else "not configured"
    key = f", API key from ${up.api_key_env}" if up.api_key_env else ""
    lines.append(f"Upstream: {where}{key}")
    return lines


def check_command(args: argparse.Namespace, console: Console) -> int:
    """Validate ``args.file`` and print what it enforces."""
    policy = load_policy(args.file)
    for line in describe(policy):
        console.print(line, markup=False, highlight=False, soft_wrap=True)
    return 0
