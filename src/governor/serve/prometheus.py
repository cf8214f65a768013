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
text a client sent.

Under ``governor serve --workers N`` each worker's :class:`SharedMetrics` keeps its counters in a
file of the folder the workers share (``metrics-<worker>.json``, replaced whole every
:data:`SNAPSHOT_INTERVAL_S`, on each scrape and when the worker stops); a worker started again
in the same slot begins from that file, and a scrape of any worker sums its own counters and every
other worker's latest file (``governor_workers_reporting`` says how many workers it summed). A
file that cannot be read or is not a snapshot is left out (logged, and counted in
``governor_worker_snapshots_skipped``), never an error. Imports nothing from governor.
"""

from __future__ import annotations

import bisect
import contextlib
import itertools
import json
import logging
import math
import os
import re
import stat
import tempfile
import threading
from collections.abc import Container, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)
"""Upper bounds (seconds) of the step latency histogram; +Inf is implied."""


SNAPSHOT_INTERVAL_S = 1.0
"""How often a worker writes its counters to the shared folder (when they changed)."""
MAX_SNAPSHOT_BYTES = 4 * 1024 * 1024
"""The most bytes read of a worker's snapshot file; a longer one is left out."""
MAX_SNAPSHOT_FILES = 1024
"""The most other workers' files one scrape reads (``--workers`` is far fewer)."""
SNAPSHOT_VERSION = 1
MAX_COUNT = 2**63 - 1
_SNAPSHOT_NAME = re.compile(r"metrics-(\d{1,6})\.json")


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

    def snapshot(self) -> dict[str, Any]:
        """The counters as a JSON value (read back by :meth:`from_snapshot`)."""
        with self._lock:
            return {
                "version": SNAPSHOT_VERSION,
                "decisions": dict(self.decisions),
                "interventions": self.interventions,
                "llm_calls": self.llm_calls,
                "llm_failed": self.llm_failed,
                "llm_abandoned": self.llm_abandoned,
                "buckets": list(self.bucket_counts),
                "seconds_sum": self.seconds_sum,
                "seconds_count": self.seconds_count,
                "policy_decisions": [[p, k, n] for (p, k), n in self.policy_decisions.items()],
                "rule_refusals": [[p, r, n] for (p, r), n in self.rule_refusals.items()],
            }

    @classmethod
    def from_snapshot(cls, value: Any) -> Metrics:
        """The counters of a :meth:`snapshot` value; a ValueError naming what was expected and
        found for anything else (a count that is not an integer from 0 to 2**63-1, a sum that
        is negative or not finite, buckets that do not add up to the count)."""
        if not isinstance(value, dict):
            raise ValueError(f"expected a JSON object, found {_kind(value)}")
        if value.get("version") != SNAPSHOT_VERSION:
            raise ValueError(
                f"version: expected {SNAPSHOT_VERSION}, found {_kind(value.get('version'))}"
            )
        metrics = cls()
        decisions = value.get("decisions")
        if not isinstance(decisions, dict):
            raise ValueError(f"decisions: expected an object, found {_kind(decisions)}")
        metrics.decisions = {k: _count(n, f"decisions.{k[:40]}") for k, n in decisions.items()}
        metrics.interventions = _count(value.get("interventions"), "interventions")
        metrics.llm_calls = _count(value.get("llm_calls"), "llm_calls")
        metrics.llm_failed = _count(value.get("llm_failed"), "llm_failed")
        metrics.llm_abandoned = _count(value.get("llm_abandoned"), "llm_abandoned")
        buckets = value.get("buckets")
        if not isinstance(buckets, list) or len(buckets) != len(BUCKETS) + 1:
            raise ValueError(f"buckets: expected {len(BUCKETS) + 1} counts, found {_kind(buckets)}")
        metrics.bucket_counts = [_count(n, f"buckets[{i}]") for i, n in enumerate(buckets)]
        metrics.seconds_sum = _seconds(value.get("seconds_sum"))
        metrics.seconds_count = _count(value.get("seconds_count"), "seconds_count")
        if sum(metrics.bucket_counts) != metrics.seconds_count:
            raise ValueError(
                f"buckets: expected them to add up to seconds_count {metrics.seconds_count},"
                f" found {sum(metrics.bucket_counts)}"
            )
        metrics.policy_decisions = _labelled(value.get("policy_decisions"), "policy_decisions")
        metrics.rule_refusals = _labelled(value.get("rule_refusals"), "rule_refusals")
        return metrics

    def merge(self, other: Metrics) -> None:
        """Add ``other``'s counters to these (``other``: counters no other thread changes, such
        as a snapshot read back)."""
        with self._lock:
            for kind, n in other.decisions.items():
                self.decisions[kind] = self.decisions.get(kind, 0) + n
            self.interventions += other.interventions
            self.llm_calls += other.llm_calls
            self.llm_failed += other.llm_failed
            self.llm_abandoned += other.llm_abandoned
            self.bucket_counts = [
                a + b for a, b in zip(self.bucket_counts, other.bucket_counts, strict=True)
            ]
            self.seconds_sum += other.seconds_sum
            self.seconds_count += other.seconds_count
            for mine, theirs in (
                (self.policy_decisions, other.policy_decisions),
                (self.rule_refusals, other.rule_refusals),
            ):
                for key, n in theirs.items():
                    mine[key] = mine.get(key, 0) + n

    def render(self, workers: tuple[int, int] | None = None) -> str:
        """The Prometheus text exposition (version 0.0.4); buckets count up to their bound.
        ``workers``: how many workers' counters these are and how many snapshot files were left
        out, as two gauges (None, a service of one process: no such lines)."""
        with self._lock:
            cumulative = list(itertools.accumulate(self.bucket_counts[:-1]))
            lines = [
                "# HELP governor_decisions_total Guarded replies, by the decision's kind.",
                "# TYPE governor_decisions_total counter",
                *(
                    f'governor_decisions_total{{kind="{_label(k)}"}} {n}'
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
        if workers is not None:
            lines += [
                "# HELP governor_workers_reporting Worker processes whose counters this scrape"
                " summed (its own and each other worker's latest snapshot).",
                "# TYPE governor_workers_reporting gauge",
                f"governor_workers_reporting {workers[0]}",
                "# HELP governor_worker_snapshots_skipped Other workers' snapshot files this"
                " scrape left out (unreadable or malformed; each logged).",
                "# TYPE governor_worker_snapshots_skipped gauge",
                f"governor_worker_snapshots_skipped {workers[1]}",
            ]
        return "\n".join(lines) + "\n"


def _kind(value: Any) -> str:
    """A short account of a JSON value for an error message (a scalar's repr, cut)."""
    if isinstance(value, (dict, list)):
        return f"{type(value).__name__} of {len(value)}"
    return repr(value)[:60]


def _count(value: Any, what: str) -> int:
    if type(value) is not int or not 0 <= value <= MAX_COUNT:
        raise ValueError(f"{what}: expected an integer from 0 to 2**63-1, found {_kind(value)}")
    return value


def _seconds(value: Any) -> float:
    """A sum of seconds: a finite number >= 0 (an integer too large for a float is not)."""
    seconds = math.nan
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        with contextlib.suppress(OverflowError):
            seconds = float(value)
    if not (math.isfinite(seconds) and seconds >= 0):
        raise ValueError(f"seconds_sum: expected a finite number >= 0, found {_kind(value)}")
    return seconds


def _labelled(value: Any, what: str) -> dict[tuple[str, str], int]:
    """``[[label, label, count], ...]`` as counts by label pair (a pair given twice: summed)."""
    if not isinstance(value, list):
        raise ValueError(f"{what}: expected a list, found {_kind(value)}")
    counts: dict[tuple[str, str], int] = {}
    for i, item in enumerate(value):
        if not (
            isinstance(item, list)
            and len(item) == 3
            and isinstance(item[0], str)
            and isinstance(item[1], str)
        ):
            raise ValueError(f"{what}[{i}]: expected [label, label, count], found {_kind(item)}")
        key = (item[0], item[1])
        counts[key] = counts.get(key, 0) + _count(item[2], f"{what}[{i}]")
    return counts


def read_snapshot(path: Path) -> Metrics:
    """The counters in the snapshot file ``path``: an OSError when it cannot be read (a
    FileNotFoundError when there is none; a link is not followed), a ValueError when it is not
    a regular file, is over :data:`MAX_SNAPSHOT_BYTES`, or is not a snapshot."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    with os.fdopen(os.open(path, flags), "rb") as file:  # (a FIFO opens without waiting)
        if not stat.S_ISREG(os.fstat(file.fileno()).st_mode):
            raise ValueError("expected a regular file, found another kind")
        data = file.read(MAX_SNAPSHOT_BYTES + 1)
    if len(data) > MAX_SNAPSHOT_BYTES:
        raise ValueError(f"expected at most {MAX_SNAPSHOT_BYTES} bytes, found more")
    try:
        value = json.loads(data)
    except RecursionError:
        raise ValueError("expected JSON, found nesting too deep to read") from None
    except ValueError as exc:  # (not JSON, not UTF-8)
        raise ValueError(f"expected JSON, found {type(exc).__name__}: {exc}") from None
    return Metrics.from_snapshot(value)


def _replace(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` whole: a temporary file in the same folder, then renamed."""
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(data)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


class SharedMetrics:
    """Worker ``worker``'s ``metrics`` kept in ``folder``, the folder one service's workers
    share (see the module doc). Made before the worker counts anything: it starts ``metrics``
    from the file the worker last in this slot left. Requests only bump ``metrics`` as
    without workers; the file is written by a thread (:meth:`start`, :meth:`stop`) and by
    :meth:`render`, each write a snapshot at least as recent as the last one."""

    def __init__(self, metrics: Metrics, folder: Path, worker: int) -> None:
        self.metrics = metrics
        self.folder = folder
        self.worker = worker
        self.path = folder / f"metrics-{worker}.json"
        self._write_lock = threading.Lock()
        self._written: dict[str, Any] | None = None
        self._failing = False
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._restore()

    def _restore(self) -> None:
        try:
            restored = read_snapshot(self.path)
        except FileNotFoundError:
            return  # the slot's first worker
        except (OSError, ValueError) as exc:
            log.error("metrics: worker %d starts from zero: %s: %s", self.worker, self.path, exc)
            return
        self.metrics.merge(restored)

    def write(self) -> dict[str, Any]:
        """Write this worker's counters to its file when they changed since the last write (a
        failure logged, once until a write succeeds again); the snapshot taken."""
        with self._write_lock:
            snapshot = self.metrics.snapshot()
            if snapshot == self._written:
                return snapshot
            try:
                _replace(self.path, json.dumps(snapshot, separators=(",", ":")).encode())
            except OSError as exc:
                if not self._failing:
                    log.warning("metrics: could not write %s: %s", self.path, exc)
                self._failing = True
                return snapshot
            self._failing = False
            self._written = snapshot
            return snapshot

    def start(self) -> None:
        """Write the counters now (other workers' scrapes count this one from here on) and
        every :data:`SNAPSHOT_INTERVAL_S`, in a daemon thread."""
        if self._thread is not None:
            return
        self.write()
        self._stop.clear()
        self._thread = threading.Thread(
            target=self._run, name=f"governor-metrics-{self.worker}", daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        """Stop the thread and write the counters once more."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        self.write()

    def _run(self) -> None:
        while not self._stop.wait(SNAPSHOT_INTERVAL_S):
            try:
                self.write()
            except Exception:  # (never expected: the thread goes on)
                log.exception("metrics: writing %s failed", self.path)

    def _others(self) -> Iterator[tuple[int, Path]]:
        """The other workers' snapshot files (at most :data:`MAX_SNAPSHOT_FILES`), by slot."""
        found = []
        with os.scandir(self.folder) as entries:
            for entry in entries:
                name = _SNAPSHOT_NAME.fullmatch(entry.name)
                if name is not None and int(name[1]) != self.worker:
                    found.append((int(name[1]), Path(entry.path)))
        found.sort()
        if len(found) > MAX_SNAPSHOT_FILES:
            log.warning(
                "metrics: %d snapshot files, read the first %d", len(found), MAX_SNAPSHOT_FILES
            )
        yield from found[:MAX_SNAPSHOT_FILES]

    def render(self) -> str:
        """The exposition of this worker's counters (written to its file first, so no later
        scrape of another worker shows less) summed with every other worker's latest file."""
        merged = Metrics.from_snapshot(self.write())
        reporting, skipped = 1, 0
        try:
            others = list(self._others())
        except OSError as exc:
            log.warning("metrics: could not list %s: %s", self.folder, exc)
            others = []
        for index, path in others:
            try:
                merged.merge(read_snapshot(path))
            except FileNotFoundError:
                continue  # (gone since it was listed)
            except (OSError, ValueError) as exc:
                skipped += 1
                log.warning("metrics: left out worker %d's counters: %s: %s", index, path, exc)
                continue
            reporting += 1
        return merged.render(workers=(reporting, skipped))
