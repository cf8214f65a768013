"""The service's counters and latency histogram, written in the Prometheus text format by hand.

``governor_decisions_total{kind}``, ``governor_interventions_total`` (a decision that was not a
plain execute: feedback, a regeneration or a fallback), ``governor_llm_calls_total``,
``governor_llm_failed_total``, ``governor_llm_abandoned_total`` (calls still running when
their step gave up on them) and the histogram ``governor_step_seconds`` (fixed buckets) are
fed from each reply's summary. Per served policy, ``governor_policy_decisions_total{policy,kind}``
counts its replies and checks (a check's kind ``admissible`` or ``refused``) and
``governor_rule_refusals_total{policy,rule}`` the decisions in which a rule refused a candidate.
The labels' cardinality is bounded by the configuration: ``policy`` is a served policy's name and
``rule`` one of that policy's constraint names (any other name is counted as ``other``), never
text a client sent. Imports nothing from governor.
"""

from __future__ import annotations

import bisect
import itertools
import threading
from collections.abc import Container, Iterable, Mapping
from typing import Any

BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)
"""Upper bounds (seconds) of the step latency histogram; +Inf is implied."""


def _label(value: str) -> str:
    """A label value escaped for the text format (backslash, double quote, newline)."""
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _number(value: float) -> str:
    return repr(float(value)) if value != int(value) else str(int(value))


class Metrics:
    """Thread-safe counters; :meth:`observe` takes one decision summary."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.decisions: dict[str, int] = {}
        self.interventions = 0
        self.llm_calls = 0
        self.llm_failed = 0
        self.llm_abandoned = 0
        self.bucket_counts = [0] * (len(BUCKETS) + 1)
        """Observations per bucket: the i-th in (BUCKETS[i-1], BUCKETS[i]], the last above all."""
        self.seconds_sum = 0.0
        self.seconds_count = 0
        self.policy_decisions: dict[tuple[str, str], int] = {}
        self.rule_refusals: dict[tuple[str, str], int] = {}

    def count_policy(
        self, policy: str, kind: str, refused: Iterable[str], rules: Container[str]
    ) -> None:
        """One decision of ``policy`` of ``kind``, refused by ``refused`` (each counted under its
        own name when ``rules`` has it, else as ``other``)."""
        with self._lock:
            key = (policy, kind)
            self.policy_decisions[key] = self.policy_decisions.get(key, 0) + 1
            for rule in refused:
                key = (policy, rule if rule in rules else "other")
                self.rule_refusals[key] = self.rule_refusals.get(key, 0) + 1

    def observe(self, summary: Mapping[str, Any], seconds: float) -> None:
        kind = str(summary.get("kind", "unknown"))
        llm = summary.get("llm") or {}
        intervened = kind != "execute" or bool(summary.get("regenerations"))
        with self._lock:
            self.decisions[kind] = self.decisions.get(kind, 0) + 1
            self.interventions += int(intervened)
            self.llm_calls += int(llm.get("calls", 0))
            self.llm_failed += int(llm.get("failed", 0))
            self.llm_abandoned += int(llm.get("abandoned", 0))
            self.bucket_counts[bisect.bisect_left(BUCKETS, seconds)] += 1
            self.seconds_sum += seconds
            self.seconds_count += 1

    def render(self) -> str:
        """The Prometheus text exposition (version 0.0.4); buckets count up to their bound."""
        with self._lock:
            cumulative = list(itertools.accumulate(self.bucket_counts[:-1]))
            lines = [
                "# HELP governor_decisions_total Guarded replies, by the decision's kind.",
                "# TYPE governor_decisions_total counter",
                *(
                    f'governor_decisions_total{{kind="{k}"}} {n}'
                    for k, n in sorted(self.decisions.items())
                ),
                "# HELP governor_interventions_total Replies the guard changed or gave feedback on.",
                "# TYPE governor_interventions_total counter",
                f"governor_interventions_total {self.interventions}",
                "# HELP governor_llm_calls_total Upstream LLM calls made.",
                "# TYPE governor_llm_calls_total counter",
                f"governor_llm_calls_total {self.llm_calls}",
                "# HELP governor_llm_failed_total Upstream LLM calls that failed.",
                "# TYPE governor_llm_failed_total counter",
                f"governor_llm_failed_total {self.llm_failed}",
                "# HELP governor_llm_abandoned_total Upstream LLM calls still running when their"
                " step's time budget ran out (counted in governor_llm_calls_total).",
                "# TYPE governor_llm_abandoned_total counter",
                f"governor_llm_abandoned_total {self.llm_abandoned}",
                "# HELP governor_step_seconds Seconds per guarded reply.",
                "# TYPE governor_step_seconds histogram",
                *(
                    f'governor_step_seconds_bucket{{le="{_number(b)}"}} {n}'
                    for b, n in zip(BUCKETS, cumulative, strict=True)
                ),
                f'governor_step_seconds_bucket{{le="+Inf"}} {self.seconds_count}',
                f"governor_step_seconds_sum {self.seconds_sum!r}",
                f"governor_step_seconds_count {self.seconds_count}",
                "# HELP governor_policy_decisions_total Replies and checks, by served policy and"
                " kind.",
                "# TYPE governor_policy_decisions_total counter",
                *(
                    f'governor_policy_decisions_total{{policy="{_label(p)}",kind="{_label(k)}"}} {n}'
                    for (p, k), n in sorted(self.policy_decisions.items())
                ),
                "# HELP governor_rule_refusals_total Decisions in which a rule refused a"
                " candidate, by served policy and rule.",
                "# TYPE governor_rule_refusals_total counter",
                *(
                    f'governor_rule_refusals_total{{policy="{_label(p)}",rule="{_label(r)}"}} {n}'
                    for (p, r), n in sorted(self.rule_refusals.items())
                ),
            ]
        return "\n".join(lines) + "\n"
