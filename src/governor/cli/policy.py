"""The ``governor policy`` commands: ``check`` validates a guard policy file and says, in English,
what it will enforce (each LTL rule's text, formula and reading, the propositions, the overlays,
the safety value, the checks, the fallbacks and the bounds; with a supervision section also the
modes, the mode graph, the mode rules in English, the selection, the gating rules, the protective
overrides and the refusal cooldown). A bad file ends in one error line and exit status 2.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from rich.console import Console

from governor.guard.provenance import MATCHING
from governor.guard.spec import (
    GuardPolicy,
    OverrideSpec,
    SafetyValueSpec,
    SupervisionSpec,
    load_policy,
)
from governor.guard.spec.propositions import (
    ANY_TOOL,
    PROVENANCE_TESTS,
    Condition,
    Proposition,
    ResultProp,
    SeenProp,
    SumProp,
    UserProp,
)
from governor.ltl.domain import Domain
from governor.ltl.english.readback import english
from governor.ltl.parser import parse
from governor.supervision import mode_atom


def add_policy_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``policy`` command group (``check``) to ``subparsers``."""
    policy = subparsers.add_parser("policy", help="validate guard policy files")
    sub = policy.add_subparsers(dest="policy_command", required=True, parser_class=type(policy))
    check = sub.add_parser("check", help="validate a policy file and say what it enforces")
    check.add_argument("file", type=Path, help="the policy YAML file")
    check.set_defaults(handler=check_command)
    return policy


def _condition(c: Condition) -> str:
    where = ".".join(c.path) or "the whole value"
    if c.pattern is not None:
        return f"{where} matches /{c.pattern.pattern}/"
    if c.kind == "links_not_from":
        return f"a link inside {where} did not come from {' or '.join(c.value)}"
    if c.kind in ("from", "not_from"):
        what = "came from" if c.kind == "from" else "did not come from"
        return f"{where} {what} {' or '.join(c.value)}"
    return f"{where} {c.kind} {c.value!r}"


def _proposition(p: Proposition) -> str:
    if isinstance(p, UserProp):
        return f"the latest user message matches /{p.pattern.pattern}/"
    if isinstance(p, SumProp):
        path = ".".join(p.path)
        return f"the total {path} of {p.tool} calls so far {p.op} {p.value:g}"
    if isinstance(p, SeenProp):
        return "the session has seen a result of an untrusted tool"
    conds = [_condition(c) for c in p.where]
    name = "any tool" if p.tool == ANY_TOOL else p.tool
    if p.members is not None and p.tool.startswith("group:"):
        name += f" ({', '.join(sorted(p.members))})"
    who = (f"a result of {name} arrived since the previous action" if isinstance(p, ResultProp)
           else f"{name} is called")  # fmt: skip
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
    v = policy.vocabulary
    if v.groups:
        lines.append("Tool groups:")
        lines += [f"  {g}: {', '.join(sorted(m))}" for g, m in v.groups.items()]
    if any(c.kind in PROVENANCE_TESTS for p in v.props for c in getattr(p, "where", ())):
        trusted = ", ".join(sorted(v.trusted)) or "none"
        lines += [f"Trusted tools: {trusted} (every other tool's result is untrusted)",
                  f"Where a value came from: {MATCHING}"]  # fmt: skip
    names = ", ".join(o.name for o in policy.overlays if o.kind != "permissive")
    lines.append(f"Overlays: {policy.overlays_from or 'none'}" + (f" ({names})" if names else ""))
    if policy.safety_value is not None:
        lines += safety_value_lines(policy.safety_value)
    t = policy.tools
    offered = "those the request offers" if t.offered is None else ", ".join(t.offered) or "none"
    alone = f"; called alone: {', '.join(t.not_in_parallel)}" if t.not_in_parallel else ""
    lines.append(f"Tools: {offered} (names matched exactly){alone}")
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
    if policy.supervision is not None:
        lines += ["", *supervision_lines(policy.supervision, policy)]
    return lines


def safety_value_lines(s: SafetyValueSpec) -> list[str]:
    """The safety_value section in English."""
    q, argument, path = s.learned, ".".join(s.argument), ".".join(s.observation)
    info = q.info
    trained = (f", trained {info['iteration']} iterations, sign agreement {info['agreement']:.0%}"
               if "iteration" in info and "agreement" in info else "")  # fmt: skip
    pairs = zip(s.actions, s.labels, strict=True)
    actions = ", ".join(f"{a} ({label.lower()})" for a, label in pairs)
    what = "text" if q.obs == "text" else f"{q.model.task.state_dim} numbers, the {q.env} state"
    refused = ("the same call with the safest action (argmax Q) instead" if s.recovery
               else "the tool_refused fallback text")  # fmt: skip
    return [
        f"Safety value {s.name}: {s.text}",
        f"  judges every {s.tool} call: its action is {argument}, one of {actions}",
        f"  admits it iff Q(observation, action) > margin {s.margin:g}; Q from {s.checkpoint}"
        f" ({q.env}, {q.obs} model{trained})",
        f"  observation: {path} in the JSON content of the latest tool message ({what})",
        f"  refused: {refused}; a missing or malformed observation or another {argument} is"
        " refused unchecked",
    ]


def _override(o: OverrideSpec) -> str:
    to = f" to {o.mode}" if o.mode else ""
    if o.kind == "threshold":
        when = f"when {o.when}"
    elif o.kind == "escalating_affect":
        p = {"feature": "user_affect", "window": 3, "drop": 0.5, "below": -0.5, **o.params}
        when = (f"when {p['feature']} fell by {p['drop']:g} or more within {p['window']:g}"
                f" step(s) and is below {p['below']:g}")  # fmt: skip
    else:
        p = {"repeats": 3, "similarity": 0.5, **o.params}
        when = (f"when the user's last {p['repeats']:g} turns say the same thing"
                f" (word overlap >= {p['similarity']:g})")  # fmt: skip
    return f"  {o.name}: {o.action.replace('_', ' ')}{to} {when}"


def supervision_lines(spec: SupervisionSpec, policy: GuardPolicy) -> list[str]:
    """The supervision section in English: modes, graph, rules, selection, gate, overrides."""
    entries = ", ".join(spec.entries or (spec.initial,))
    lines = [f"Supervision: {len(spec.modes)} mode(s); starts in {spec.initial};"
             f" an interaction may start in {entries}"]  # fmt: skip
    for m in spec.modes:
        how = "says its fixed text, no model" if m.silent else (
            f"prompt: {m.system_prompt or policy.upstream.system_prompt or 'none'}")  # fmt: skip
        own = f"; own LTL rules: {', '.join(r.name for r in m.ltl)}" if m.ltl else ""
        lines += [
            f"  {m.name}: {m.description or 'no description'}",
            f"    {how}",
            f"    overlays: {m.overlays_from or 'none'}{own}; fallback: {m.fallbacks['default']}",
        ]
    lines.append("Mode graph (staying in a mode is always allowed):")
    for m in spec.modes:
        after = ", ".join(spec.edges.get(m.name, ())) or "no other mode"
        lines.append(f"  after {m.name}: {after}")
    if spec.safe_mode:
        lines.append(f"  safe mode (when no ranked mode is admissible): {spec.safe_mode}")
    domain = Domain.of(
        "supervision", [*(mode_atom(m.name) for m in spec.modes), *spec.propositions]
    )
    lines.append(f"Mode rules ({len(spec.rules)}), checked before every mode is chosen:")
    for name, text, formula in spec.rules:
        f = parse(formula)
        lines += [f"  {name}: {text}", f"    formula: {f}", f"    reads:   {english(f, domain)}"]
    if spec.propositions:
        lines.append(
            "State propositions: " + "; ".join(f"{k}: {v}" for k, v in spec.propositions.items())
        )
    choices = "; ".join(f"{mode} when {when}" for when, mode in spec.choices)
    lines.append(f"Selection: {choices + '; ' if choices else ''}otherwise stay, else"
                 f" {spec.default_mode or spec.initial}")  # fmt: skip
    if spec.max_steps:
        lines.append(
            "  at most: " + ", ".join(f"{k} {v} step(s)" for k, v in spec.max_steps.items())
        )
    lines.append(f"Classifiers on user input: {', '.join(spec.classifiers) or 'none'}")
    gate = [f"  {g.name}: engage only while {g.condition}" + (" (and end when it stops)" if g.sustain else "")
            for g in spec.gating]  # fmt: skip
    lines += ["Gating rules:" if gate else "Gating rules: none", *gate]
    lines += ["Protective overrides:" if spec.overrides else "Protective overrides: none"]
    lines += [_override(o) for o in spec.overrides]
    c = spec.config
    lines.append(
        f"Refusals: after {c.max_refusals} in a row, no prompting for {c.cooldown_steps} step(s)"
    )
    return lines


def check_command(args: argparse.Namespace, console: Console) -> int:
    """Validate ``args.file`` and print what it enforces."""
    policy = load_policy(args.file)
    for line in describe(policy):
        console.print(line, markup=False, highlight=False, soft_wrap=True)
    return 0
