"""A verdict's summary, kept across replies for the verdicts checks memoise, is each time what
the verdict's fields say then."""

from __future__ import annotations

from typing import Any

from governor.core import Severity, Verdict
from governor.guard.summary import verdict_summary, verdicts_summary


def _fresh(v: Verdict) -> dict[str, Any]:
    return {
        "constraint": v.constraint,
        "admissible": v.admissible,
        "deviation": v.deviation,
        "descriptor": v.descriptor,
        "severity": v.severity.name.lower(),
        "error": v.error,
    }


def test_a_verdict_met_again_has_its_own_summary_each_time() -> None:
    memo = Verdict.allow("tone", margin=0.5, descriptor="warm")
    first = verdict_summary(memo)
    first["descriptor"] = "changed"
    assert verdict_summary(memo) == _fresh(memo)
    assert verdicts_summary([memo, memo])["verdicts"] == [_fresh(memo), _fresh(memo)]
    for k in range(3000):  # many short-lived verdicts: ids reused once a verdict is gone
        v = Verdict.allow(f"rule{k % 7}", deviation=k / 3, severity=Severity(k % 4))
        assert verdict_summary(v) == _fresh(v), k
        del v
