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

A summary is what the client is told, so it never carries any part of a candidate the guard
refused (its text, a tool name, arguments): a refused verdict names its constraint and the kind of
violation (:func:`violation_summary`), never its descriptor (which may quote the candidate, and
goes to the model as feedback and to the decision record); a forced feedback is named by the
constraints behind it; an error or an invalid candidate by where it happened and its type, never
its message (:func:`public_error`, :func:`public_reason`). The decision record keeps everything.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from governor.core import Decision, DecisionKind, Severity, Verdict, VerdictMemo
from governor.guard.exchange import Reply
from governor.guard.value_constraint import public_descriptor
from governor.supervision import SupervisorDecision, activity_violations

FALLBACK_KINDS = (DecisionKind.FALLBACK, DecisionKind.DEFER, DecisionKind.ABORT)
_SEVERITY_NAMES = {s: s.name.lower() for s in Severity}


STORE_STAGE = "store"
"""Errors of the session store keep their message in a summary (no candidate reaches it, and a
failed save leaves no record to read it from)."""


def verdict_summary(v: Verdict) -> dict[str, Any]:
    """A verdict as the judge of a candidate the client sent itself (a check): everything but
    the detail a descriptor keeps for the decision record (the values a safety value found:
    :func:`~.value_constraint.public_descriptor`). Each call its own dict."""
    kept = _KEPT.get(v)
    if kept is not None:
        return kept.copy()  # (its values are scalars)
    summary = {
        "constraint": v.constraint,
        "admissible": v.admissible,
        "deviation": v.deviation,
        "descriptor": public_descriptor(v),
        "severity": _SEVERITY_NAMES[v.severity],
        "error": v.error,
    }
    _KEPT.keep(v, summary.copy())
    return summary


_KEPT: VerdictMemo[dict[str, Any]] = VerdictMemo()
"""The summaries of verdicts met lately that always have one summary."""


def verdicts_summary(verdicts: Sequence[Verdict]) -> dict[str, Any]:
    """The answer of a check: admissible iff every verdict is."""
    return {
        "admissible": all(v.admissible for v in verdicts),
        "verdicts": [verdict_summary(v) for v in verdicts],
        "rejected_by": [v.constraint for v in verdicts if not v.admissible],
    }


def violation_kinds(constraints: Sequence[Any]) -> dict[str, str]:
    """Each constraint's kind of violation (its ``violation`` attribute), by name."""
    return {c.name: str(getattr(c, "violation", "refused")) for c in constraints}


def violation_summary(v: Verdict, kinds: Mapping[str, str] | None = None) -> dict[str, Any]:
    """A verdict on a reply the guard produced: a refused one names its constraint and the kind of
    violation (``kinds`` maps a constraint's name to its kind; ``check_failed`` when the check
    could not be made), never its descriptor or error text; an admissible one (of the reply the
    client gets) is :func:`verdict_summary`."""
    if v.admissible:
        return verdict_summary(v)
    kind = "check_failed" if v.error is not None else (kinds or {}).get(v.constraint, "refused")
    return {
        "constraint": v.constraint,
        "admissible": False,
        "violation": kind,
        "deviation": v.deviation,
        "severity": _SEVERITY_NAMES[v.severity],
    }


def public_error(text: str) -> str:
    """An error as ``stage: Type`` (the first two parts of ``stage: Type: message``), without its
    message, which may quote what a model wrote; a store's error is kept whole."""
    parts = text.split(": ", 2)
    return text if parts[0] == STORE_STAGE else ": ".join(parts[:2])


def public_reason(decision: Decision) -> str:
    """The decision's reason without the messages of its errors (:func:`public_error`) and
    without the fallback action it may quote (the observer's reason when a hard constraint
    refused the fallback's action, ``...'s action ACTION refused by NAMES: deferred``: a safety
    value's recovery keeps the refused call's other arguments)."""
    reason = decision.reason
    start, end = reason.find("'s action "), reason.rfind(" refused by ")
    if 0 <= start < end and reason.endswith(": deferred"):
        reason = f"{reason[:start]}'s action{reason[end:]}"
    for error in decision.errors:
        parts = error.split(": ", 2)
        if len(parts) == 3 and parts[0] != STORE_STAGE and parts[2]:
            reason = reason.replace(f": {parts[2]}", "")
    return reason


def decision_summary(
    decision: Decision,
    reply: Reply,
    *,
    session: str,
    t: int,
    seconds: float,
    kinds: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """One reply's summary (see the module doc); ``kinds``: the kind of violation of each
    constraint, by name (:func:`violation_summary`)."""
    forced = [
        "refused by " + ", ".join(a.feedback.constraints or ("an invalid candidate",))
        for a in decision.attempts[1:]
        if a.feedback is not None
    ]
    rejected = [
        violation_summary(v, kinds)
        for a in decision.attempts
        for row in a.verdicts
        for v in row
        if not v.admissible
    ]
    invalid = [
        c.error.split(": ", 1)[0]
        for a in decision.attempts
        for c in a.candidates
        if c.error is not None
    ]
    total = decision.total_usage
    return {
        "session": session,
        "t": t,
        "kind": decision.kind.value,
        "reason": public_reason(decision),
        "cause": None if decision.cause is None else decision.cause.value,
        "reply": reply.to_dict(),
        "verdicts": [violation_summary(v, kinds) for v in decision.verdicts],
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
        "errors": [public_error(e) for e in decision.errors],
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
        "violations": [
            *(dataclasses.asdict(v) for v in sup.violations()),
            *({**dataclasses.asdict(v), "descriptor": ""} for v in below),  # see the module doc
        ],
    }
