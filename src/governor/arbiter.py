"""The arbiter: from a table of verdicts to an admissible set, a choice, or a named cause.

Rows are candidates (in the policy's order of preference), columns are constraints. A candidate is
admissible when

- ``intersection`` (default): every constraint admits it;
- ``majority``: more than half of the constraints admit it;
- ``weighted``: the admitting constraints hold more than ``quorum`` of the total weight.

A verdict whose check failed (``error`` set) vetoes in every mode: a broken constraint is never
outvoted. In the voting modes, disagreement between constraints is a risk signal: a candidate's
confidence is scaled by the share of weight that admits it, so ``min_confidence`` sends a split
vote down the conservative path.

When nothing is chosen the cause is named (the journal paper, section 5.5):
``conflicting_constraints`` when every constraint admits some valid candidate but no candidate
satisfies them jointly; ``empty_admissible_set`` otherwise; ``low_confidence`` when admissible
candidates exist but the best confidence is below ``min_confidence``; a constraint's own cause
when every rejection carries it (``Verdict.cause``: ``lookahead_failure`` when the only
rejections come from lookahead constraints, whose candidates were locally admissible but whose
rollouts reach an unsafe region).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from governor.config import ObserverConfig
from governor.core import Candidate, RejectionCause, Verdict


@dataclass(frozen=True)
class Arbitration:
    admissible: tuple[int, ...]  # indices of admissible candidates
    chosen: int | None
    cause: RejectionCause | None
    confidence: float  # of the chosen candidate (0 when none)
    confidences: tuple[float, ...]  # one per candidate


class Arbiter:
    """Combines verdicts; see the module docstring for the rules."""

    def __init__(self, config: ObserverConfig | None = None) -> None:
        config = config or ObserverConfig()
        self.mode = config.arbitration
        self.weights = dict(config.weights)
        self.quorum = config.quorum
        self.min_confidence = config.min_confidence

    def arbitrate(
        self, candidates: Sequence[Candidate[object]], rows: Sequence[Sequence[Verdict]]
    ) -> Arbitration:
        if self.mode == "intersection":
            return self._intersection(candidates, rows)
        return self._voted(candidates, rows)

    def _voted(
        self, candidates: Sequence[Candidate[object]], rows: Sequence[Sequence[Verdict]]
    ) -> Arbitration:
        """:meth:`arbitrate` in any mode, from :meth:`_admits` and :meth:`_confidence`."""
        confidences = tuple(
            self._confidence(row) if cand.valid else 0.0
            for cand, row in zip(candidates, rows, strict=True)
        )
        admissible = tuple(
            i
            for i, (cand, row) in enumerate(zip(candidates, rows, strict=True))
            if cand.valid and self._admits(row)
        )
        if not admissible:
            return Arbitration((), None, self._empty_cause(candidates, rows), 0.0, confidences)
        confident = [i for i in admissible if confidences[i] >= self.min_confidence]
        if not confident:
            return Arbitration(admissible, None, RejectionCause.LOW_CONFIDENCE, 0.0, confidences)
        return Arbitration(admissible, confident[0], None, confidences[confident[0]], confidences)

    def _intersection(
        self, candidates: Sequence[Candidate[object]], rows: Sequence[Sequence[Verdict]]
    ) -> Arbitration:
        """:meth:`arbitrate` in ``intersection`` mode: each row read once (whether every
        verdict admits, none failed, and the least confidence of those that admit)."""
        if len(candidates) != len(rows):
            raise ValueError(
                f"arbitrate: expected one row of verdicts per candidate ({len(candidates)}),"
                f" found {len(rows)}"
            )
        confidences: list[float] = []
        admissible: list[int] = []
        for i, cand in enumerate(candidates):
            if not cand.valid:
                confidences.append(0.0)
                continue
            row = rows[i]
            least: float | None = None
            admits = True
            for v in row:
                if v.error is not None:
                    admits = False
                if v.admissible:
                    c = v.confidence
                    if least is None or c < least:
                        least = c
                else:
                    admits = False
            confidences.append(least if least is not None else 0.0 if row else 1.0)
            if admits:
                admissible.append(i)
        if not admissible:
            cause = self._empty_cause(candidates, rows)
            return Arbitration((), None, cause, 0.0, tuple(confidences))
        for i in admissible:
            if confidences[i] >= self.min_confidence:
                return Arbitration(tuple(admissible), i, None, confidences[i], tuple(confidences))
        return Arbitration(
            tuple(admissible), None, RejectionCause.LOW_CONFIDENCE, 0.0, tuple(confidences)
        )

    def _weight(self, verdict: Verdict) -> float:
        return self.weights.get(verdict.constraint, 1.0)

    def _admitting_share(self, row: Sequence[Verdict]) -> float:
        total = sum(self._weight(v) for v in row)
        if total == 0.0:
            return 1.0
        return sum(self._weight(v) for v in row if v.admissible) / total

    def _admits(self, row: Sequence[Verdict]) -> bool:
        if any(v.error is not None for v in row):
            return False
        if self.mode == "intersection":
            return all(v.admissible for v in row)
        if self.mode == "majority":
            return 2 * sum(v.admissible for v in row) > len(row) or not row
        return self._admitting_share(row) > self.quorum or not row

    def _confidence(self, row: Sequence[Verdict]) -> float:
        admitting = [v.confidence for v in row if v.admissible]
        base = min(admitting, default=1.0 if not row else 0.0)
        if self.mode == "intersection":
            return base
        return base * self._admitting_share(row)

    @staticmethod
    def _empty_cause(
        candidates: Sequence[Candidate[object]], rows: Sequence[Sequence[Verdict]]
    ) -> RejectionCause:
        valid_rows = [row for cand, row in zip(candidates, rows, strict=True) if cand.valid]
        names = {v.constraint for row in valid_rows for v in row}
        causes = {v.cause for row in valid_rows for v in row if not v.admissible}
        if len(causes) == 1 and None not in causes:
            (own,) = causes
            return own  # type: ignore[return-value]
        if len(names) < 2 or any(v.error for row in valid_rows for v in row):
            return RejectionCause.EMPTY
        satisfiable = {v.constraint for row in valid_rows for v in row if v.admissible}
        return RejectionCause.CONFLICT if satisfiable == names else RejectionCause.EMPTY


def violation_signature(
    candidates: Sequence[Candidate[object]], rows: Sequence[Sequence[Verdict]]
) -> frozenset[str]:
    """Which constraints rejected this attempt (and whether any reply was malformed)."""
    names = {v.constraint for row in rows for v in row if not v.admissible}
    if any(not c.valid for c in candidates):
        names.add("<invalid candidate>")
    return frozenset(names)
