"""One decision as one JSON-safe record, and back.

:func:`decision_record` turns a :class:`~governor.core.Decision` into the record a trace stores
(``Decision.latency`` is in seconds; records hold milliseconds); :func:`decision_from_record`
rebuilds the decision for replay.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from governor.core import (
    Attempt,
    Candidate,
    Decision,
    DecisionKind,
    Feedback,
    FeedbackKind,
    RejectionCause,
    Severity,
    Verdict,
)
from governor.errors import ConfigError, expected
from governor.trace.jsonable import fields_jsonable, from_json_float, to_jsonable
from governor.usage import Usage


def step_seconds(latency: Mapping[str, float]) -> float:
    """A step's latency: its ``"total"`` stage when recorded, else the sum of its stages."""
    return float(latency["total"]) if "total" in latency else float(sum(latency.values()))


def decision_record(
    decision: Decision, *, episode: str, t: int, extra: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """One JSON-safe record of ``decision`` at step ``t`` of ``episode``; ``extra`` rides along.

    Keys: type ("decision"), episode, t, kind, action, reason, cause, errors, latency_ms (per
    stage), step_latency_ms, usage (per stage), usage_total (with tokens), feedback, verdicts (of
    the executed action; severity by name), attempts (candidates, verdict rows, feedback, chosen,
    cause), intervened, regenerations, extra.
    """
    total = decision.total_usage
    record = to_jsonable(  # one walk; verdicts are placed below, each converted once
        {
            "type": "decision",
            "episode": episode,
            "t": t,
            "kind": decision.kind,
            "action": decision.action,
            "reason": decision.reason,
            "cause": decision.cause,
            "errors": decision.errors,
            "latency_ms": {stage: 1000.0 * s for stage, s in decision.latency.items()},
            "step_latency_ms": 1000.0 * step_seconds(decision.latency),
            "usage": dict(decision.usage),
            "usage_total": {**fields_jsonable(total, {}), "tokens": total.tokens},
            "feedback": decision.feedback,
            "verdicts": None,
            "attempts": [
                {
                    "candidates": a.candidates,
                    "verdicts": None,
                    "feedback": a.feedback,
                    "chosen": a.chosen,
                    "cause": a.cause,
                }
                for a in decision.attempts
            ],
            "intervened": decision.intervened,
            "regenerations": decision.regenerations,
            "extra": dict(extra or {}),
        }
    )
    verdict = _VerdictRecords()
    record["verdicts"] = [verdict(v) for v in decision.verdicts]
    for out, a in zip(record["attempts"], decision.attempts, strict=True):
        out["verdicts"] = [[verdict(v) for v in row] for row in a.verdicts]
    return record


class _VerdictRecords:
    """Verdicts as JSON-safe dicts (severity by name), each verdict object converted once (the
    executed action's verdicts are also a row of its attempt); each call returns its own dict."""

    def __init__(self) -> None:
        self._done: dict[int, tuple[Verdict, dict[str, Any]]] = {}  # the verdict keeps its id

    def __call__(self, v: Verdict) -> dict[str, Any]:
        done = self._done.get(id(v))
        if done is None:
            if type(v) is Verdict:  # its fields but the severity converted, that by name
                out = fields_jsonable(v, {"severity": v.severity.name})
            else:
                out = {**to_jsonable(v), "severity": v.severity.name}
            done = self._done[id(v)] = v, out
        return dict(done[1])


def decision_from_record(record: Mapping[str, Any]) -> Decision:
    """The decision a record was made from; actions come back in their JSON form (lists, dicts)."""
    try:
        return Decision(
            kind=DecisionKind(record["kind"]),
            action=record["action"],
            verdicts=tuple(_verdict_from(v) for v in record["verdicts"]),
            feedback=_feedback(record["feedback"]),
            reason=record["reason"],
            cause=_cause(record["cause"]),
            attempts=tuple(_attempt(a) for a in record["attempts"]),
            latency={k: float(ms) / 1000.0 for k, ms in record["latency_ms"].items()},
            usage={k: Usage(**u) for k, u in record["usage"].items()},
            errors=tuple(record["errors"]),
        )
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        found = f"{type(exc).__name__}: {exc}"
        raise ConfigError(f"decision record: {expected('a decision_record', found)}") from exc


def _attempt(a: Mapping[str, Any]) -> Attempt:
    return Attempt(
        tuple(
            Candidate(c["action"], c["text"], c["error"], from_json_float(c["logprob"]))
            for c in a["candidates"]
        ),
        tuple(tuple(_verdict_from(v) for v in row) for row in a["verdicts"]),
        _feedback(a["feedback"]),
        a["chosen"],
        _cause(a["cause"]),
    )


def _verdict_from(v: Mapping[str, Any]) -> Verdict:
    margin, severity = from_json_float(v["margin"]), Severity[v["severity"]]
    return Verdict(**{**v, "margin": margin, "severity": severity, "cause": _cause(v.get("cause"))})


def _feedback(f: Mapping[str, Any] | None) -> Feedback | None:
    if f is None:
        return None
    return Feedback(FeedbackKind(f["kind"]), f["text"], tuple(f["constraints"]))


def _cause(value: str | None) -> RejectionCause | None:
    return None if value is None else RejectionCause(value)
