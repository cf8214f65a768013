"""JSON-safe summaries of what the guard decided, for callers and (later) the service.

:func:`decision_summary` says, for one reply: the decision's kind and reason, the verdicts with
their descriptors, the feedback given (forced, per regeneration, and implicit), the
regenerations, whether the fallback spoke and whether it recovered (acted with a tool call: a
safety value's safest action), the LLM calls and tokens per stage, and the latency per
stage. :func:`verdicts_summary` is the check-only answer. :func:`supervision_summary` is the
``supervision`` field a supervised reply adds: the supervisor's kind, mode, rule and reason, and
the violations at both levels (``oversight``: a mode the mode rules rejected; ``activity``: a
reply the mode's own constraints rejected). Imports the core types, the supervision package's
decision and the guard's exchange.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from governor.core import Decision, DecisionKind, Severity, Verdict
from governor.guard.exchange import Reply
from governor.supervision import SupervisorDecision, activity_violations

FALLBACK_KINDS = (DecisionKind.FALLBACK, DecisionKind.DEFER, DecisionKind.ABORT)
_SEVERITY_NAMES = {s: s.name.lower() for s in Severity}


def verdict_summary(v: Verdict) -> dict[str, Any]:
    return {
        "constraint": v.constraint,
        "admissible": v.admissible,
        "deviation": v.deviation,
        "descriptor": v.descriptor,
        "severity": _SEVERITY_NAMES[v.severity],
        "error": v.error,
    }


def verdicts_summary(verdicts: Sequence[Verdict]) -> dict[str, Any]:
    """The answer of a check: admissible iff every verdict is."""
    return {
        "admissible": all(v.admissible for v in verdicts),
        "verdicts": [verdict_summary(v) for v in verdicts],
        "rejected_by": [v.constraint for v in verdicts if not v.admissible],
    }


def decision_summary(
    decision: Decision, reply: Reply, *, session: str, t: int, seconds: float
) -> dict[str, Any]:
    """One reply's summary (see the module doc)."""
    forced = [a.feedback.text for a in decision.attempts[1:] if a.feedback is not None]
    rejected = [
        verdict_summary(v)
        for a in decision.attempts
        for row in a.verdicts
        for v in row
        if not v.admissible
    ]
    invalid = [c.error for a in decision.attempts for c in a.candidates if c.error is not None]
    total = decision.total_usage
    return {
        "session": session,
        "t": t,
        "kind": decision.kind.value,
        "reason": decision.reason,
        "cause": None if decision.cause is None else decision.cause.value,
        "reply": reply.to_dict(),
        "verdicts": [verdict_summary(v) for v in decision.verdicts],
        "rejected": rejected,
        "invalid_candidates": invalid,
        "feedback": {
            "forced": forced,
            "implicit": None if decision.feedback is None else decision.feedback.text,
        },
        "regenerations": decision.regenerations,
        "fallback": decision.kind in FALLBACK_KINDS,
        "recovery": decision.kind is DecisionKind.FALLBACK and reply.is_tool_call,
        "llm": {
            "calls": total.calls,
            "failed": total.failed,
            "abandoned": total.abandoned,
            "tokens": total.tokens,
            "stages": {
                stage: {
                    "calls": u.calls,
                    "prompt_tokens": u.prompt_tokens,
                    "completion_tokens": u.completion_tokens,
                }
                for stage, u in decision.usage.items()
            },
        },
        "latency_ms": {
            **{stage: 1000.0 * s for stage, s in decision.latency.items()},
            "total": 1000.0 * seconds,
        },
        "errors": list(decision.errors),
    }


def supervision_summary(sup: SupervisorDecision, activity: Decision | None) -> dict[str, Any]:
    """The supervisor's step (``activity``: the acting mode's decision, None when no mode acted)."""
    below = () if activity is None else activity_violations(activity, sup.mode)
    return {
        "kind": sup.kind.value,
        "mode": sup.mode,
        "previous": sup.previous,
        "rule": sup.rule,
        "reason": sup.reason,
        "override": None
        if sup.override is None
        else {"rule": sup.override.rule, "action": sup.override.action},
        "violations": [dataclasses.asdict(v) for v in (*sup.violations(), *below)],
    }
