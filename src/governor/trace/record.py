"""One decision as one JSON-safe record, and back.

:func:`decision_record` turns a :class:`~governor.core.Decision` into the record a trace stores
(``Decision.latency`` is in seconds; records hold milliseconds); :func:`decision_from_record`
rebuilds the decision for replay.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
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
    VerdictMemo,
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
    verdicts = _VerdictRecords()
    # built JSON-safe in place: each value converted where it sits (its depth counts toward
    # to_jsonable's bound), the verdicts each once
    return {
        "type": "decision",
        "episode": to_jsonable(episode, 1),
        "t": to_jsonable(t, 1),
        "kind": to_jsonable(decision.kind, 1),
        "action": to_jsonable(decision.action, 1),
        "reason": to_jsonable(decision.reason, 1),
        "cause": to_jsonable(decision.cause, 1),
        "errors": to_jsonable(decision.errors, 1),
        "latency_ms": to_jsonable({stage: 1000.0 * s for stage, s in decision.latency.items()}, 1),
        "step_latency_ms": to_jsonable(1000.0 * step_seconds(decision.latency), 1),
        "usage": to_jsonable(dict(decision.usage), 1),
        "usage_total": {**fields_jsonable(total, {}), "tokens": to_jsonable(total.tokens, 2)},
        "feedback": to_jsonable(decision.feedback, 1),
        "verdicts": verdicts.row(decision.verdicts),
        "attempts": [
            {
                "candidates": to_jsonable(a.candidates, 3),
                "verdicts": [verdicts.row(row) for row in a.verdicts],
                "feedback": to_jsonable(a.feedback, 3),
                "chosen": to_jsonable(a.chosen, 3),
                "cause": to_jsonable(a.cause, 3),
            }
            for a in decision.attempts
        ],
        "intervened": to_jsonable(decision.intervened, 1),
        "regenerations": to_jsonable(decision.regenerations, 1),
        "extra": to_jsonable(dict(extra or {}), 1),
    }


class _VerdictRecords:
    """Verdicts as JSON-safe dicts (severity by name), each verdict object converted once (the
    executed action's verdicts are also a row of its attempt); each record its own dicts.

    Checks memoise their verdicts (the same objects come back step after step), so the record of
    a verdict whose fields are all immutable scalars is also kept across records
    (:data:`_KEPT`); any other verdict is converted once per record."""

    def __init__(self) -> None:
        self._done: dict[int, tuple[Verdict, dict[str, Any]]] = {}  # the verdict keeps its id

    def row(self, verdicts: Iterable[Verdict]) -> list[dict[str, Any]]:
        """The records of ``verdicts``, in order."""
        out = []
        for v in verdicts:
            record = _KEPT.get(v)
            if record is None:
                done = self._done.get(id(v))
                record = self._convert(v) if done is None else done[1]
            out.append(record.copy())  # (its values are scalars)
        return out

    def _convert(self, v: Verdict) -> dict[str, Any]:
        if type(v) is Verdict:  # its fields but the severity converted, that by name
            record = fields_jsonable(v, {"severity": v.severity.name})
        else:
            record = {**to_jsonable(v), "severity": v.severity.name}
        if not _KEPT.keep(v, record):
            self._done[id(v)] = v, record
        return record


_KEPT: VerdictMemo[dict[str, Any]] = VerdictMemo()
"""The records of verdicts met lately that always have one record."""


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
