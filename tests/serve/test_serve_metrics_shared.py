"""``/metrics`` under ``governor serve --workers N``: each worker's counters in a file of the
shared folder, a worker restarted in a slot starting from its file, a scrape summing every
worker's counters (labels merged by label), and files that are not snapshots left out."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import time
from pathlib import Path

import httpx
import pytest
from serve_helpers import tools_guard

from governor.serve import create_app, prometheus
from governor.serve.prometheus import BUCKETS, Metrics, SharedMetrics, read_snapshot


def _value(text: str, name: str) -> float:
    """The value of the sample ``name`` (a metric name with its labels, as written)."""
    found = re.findall(rf"^{re.escape(name)} (\S+)$", text, re.MULTILINE)
    assert len(found) == 1, f"{name}: {found}\n{text}"
    return float(found[0])


def _busy(metrics: Metrics, kinds: list[str], policy: str = "p", seconds: float = 0.02) -> None:
    for kind in kinds:
        metrics.observe({"kind": kind, "llm": {"calls": 2, "failed": 1}}, seconds)
        metrics.count_policy(policy, kind, ["no_leak", "made_up"], {"no_leak"})


def test_a_scrape_sums_every_workers_counters_by_label(tmp_path: Path) -> None:
    a, b = Metrics(), Metrics()
    shared_a, shared_b = SharedMetrics(a, tmp_path, 0), SharedMetrics(b, tmp_path, 1)
    _busy(a, ["execute", "execute", "fallback"], policy="p", seconds=0.004)
    _busy(b, ["execute", "feedback"], policy="q", seconds=3.0)
    _busy(b, ["execute"], policy="p", seconds=0.004)
    shared_b.write()
    text = shared_a.render()
    expected = {
        'governor_decisions_total{kind="execute"}': 4,
        'governor_decisions_total{kind="fallback"}': 1,
        'governor_decisions_total{kind="feedback"}': 1,
        "governor_interventions_total": 2,
        "governor_llm_calls_total": 12,
        "governor_llm_failed_total": 6,
        'governor_step_seconds_bucket{le="0.005"}': 4,
        'governor_step_seconds_bucket{le="2.5"}': 4,
        'governor_step_seconds_bucket{le="5"}': 6,
        'governor_step_seconds_bucket{le="+Inf"}': 6,
        "governor_step_seconds_count": 6,
        "governor_step_seconds_sum": pytest.approx(4 * 0.004 + 2 * 3.0),
        'governor_policy_decisions_total{policy="p",kind="execute"}': 3,
        'governor_policy_decisions_total{policy="q",kind="execute"}': 1,
        'governor_rule_refusals_total{policy="p",rule="no_leak"}': 4,
        'governor_rule_refusals_total{policy="p",rule="other"}': 4,
        'governor_rule_refusals_total{policy="q",rule="other"}': 2,
        "governor_workers_reporting": 2,
        "governor_worker_snapshots_skipped": 0,
    }
    assert {series: _value(text, series) for series in expected} == expected
    # the scrape wrote worker 0's own file: worker 1's scrape sums the same figures
    assert shared_b.render() == text
    # and only the workers' own counters are in their files, never the sum
    assert read_snapshot(tmp_path / "metrics-0.json").seconds_count == 3


def test_one_process_renders_as_before(tmp_path: Path) -> None:
    metrics = Metrics()
    _busy(metrics, ["execute"])
    assert "governor_workers_reporting" not in metrics.render()
    app = create_app(tools_guard("http://127.0.0.1:9"))
    assert app.state.service.shared_metrics is None
    assert not list(tmp_path.iterdir())


def test_a_worker_restarted_in_its_slot_starts_from_its_file(tmp_path: Path) -> None:
    a, b = Metrics(), Metrics()
    shared_a, shared_b = SharedMetrics(a, tmp_path, 0), SharedMetrics(b, tmp_path, 1)
    _busy(a, ["execute"] * 5)
    seen = [_value(shared_a.render(), "governor_step_seconds_count")]
    _busy(b, ["execute", "abort", "abort"], policy="q")
    seen.append(_value(shared_b.render(), "governor_step_seconds_count"))
    _busy(a, ["execute"])
    seen.append(_value(shared_a.render(), "governor_step_seconds_count"))
    # worker 1 dies after its last scrape; the one started in its slot goes on from its file
    restarted = Metrics()
    shared_c = SharedMetrics(restarted, tmp_path, 1)
    assert restarted.decisions == {"execute": 1, "abort": 2}
    assert restarted.policy_decisions == {("q", "execute"): 1, ("q", "abort"): 2}
    seen.append(_value(shared_c.render(), "governor_step_seconds_count"))
    _busy(restarted, ["execute"])
    text = shared_a.render()  # (reads slot 1's file: the restarted worker's, not wrote yet)
    seen.append(_value(text, "governor_step_seconds_count"))
    seen.append(_value(shared_c.render(), "governor_step_seconds_count"))
    assert seen == [5, 8, 9, 9, 9, 10]
    assert _value(shared_a.render(), 'governor_decisions_total{kind="abort"}') == 2


def test_the_thread_writes_the_counters_and_once_more_when_stopped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(prometheus, "SNAPSHOT_INTERVAL_S", 0.02)
    metrics = Metrics()
    shared = SharedMetrics(metrics, tmp_path, 3)
    path = tmp_path / "metrics-3.json"
    shared.start()
    try:
        assert read_snapshot(path).seconds_count == 0  # (written at once: the worker reports)
        _busy(metrics, ["execute", "defer"])
        deadline = time.monotonic() + 3
        while not path.exists() or read_snapshot(path).seconds_count < 2:
            assert time.monotonic() < deadline, "the counters were not written"
            time.sleep(0.01)
    finally:
        monkeypatch.setattr(prometheus, "SNAPSHOT_INTERVAL_S", 60.0)
        time.sleep(0.05)  # (the thread now waits a minute)
        _busy(metrics, ["execute"])
        shared.stop()
    assert read_snapshot(path).decisions == {"execute": 2, "defer": 1}
    assert [p.name for p in tmp_path.iterdir()] == ["metrics-3.json"]  # no temporary left


def _good_snapshot() -> dict[str, object]:
    metrics = Metrics()
    _busy(metrics, ["execute", "execute"])
    return metrics.snapshot()


def _with(**changes: object) -> bytes:
    return json.dumps({**_good_snapshot(), **changes}).encode()


BAD = {
    "partial": _with()[:-7],
    "not JSON": b"\x00\xffmetrics",
    "empty": b"",
    "a list": b"[1, 2]",
    "an old version": _with(version=0),
    "a negative count": _with(llm_calls=-1),
    "a count that is a float": _with(interventions=1.5),
    "a count that is true": _with(llm_failed=True),
    "a count past 2**63": _with(llm_abandoned=2**63),
    "a string count": _with(decisions={"execute": "2"}),
    "NaN seconds": _with(seconds_sum=float("nan")),
    "infinite seconds": _with(seconds_sum=float("inf")),
    "negative seconds": _with(seconds_sum=-0.5),
    "seconds past a float": _with(seconds_sum=10**400),
    "too few buckets": _with(buckets=[2]),
    "buckets off the count": _with(seconds_count=3),
    "a label that is a number": _with(policy_decisions=[["p", 7, 1]]),
    "a label pair of two": _with(rule_refusals=[["p", 1]]),
    "deep nesting": b"[" * 200_000,
    "a huge number": b'{"version": 1, "llm_calls": ' + b"9" * 5000 + b"}",
}


@pytest.mark.parametrize("name", list(BAD))
def test_a_file_that_is_not_a_snapshot_is_left_out_and_logged(
    tmp_path: Path, name: str, caplog: pytest.LogCaptureFixture
) -> None:
    (tmp_path / "metrics-1.json").write_text(json.dumps(_good_snapshot()))
    (tmp_path / "metrics-2.json").write_bytes(BAD[name])
    metrics = Metrics()
    _busy(metrics, ["execute"])
    with caplog.at_level(logging.WARNING, logger="governor.serve.prometheus"):
        text = SharedMetrics(metrics, tmp_path, 0).render()
    assert _value(text, 'governor_decisions_total{kind="execute"}') == 3
    assert _value(text, "governor_workers_reporting") == 2
    assert _value(text, "governor_worker_snapshots_skipped") == 1
    assert "left out worker 2's counters" in caplog.text and "expected" in caplog.text


def test_a_huge_a_linked_or_a_special_file_is_left_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(prometheus, "MAX_SNAPSHOT_BYTES", 1000)
    good = json.dumps(_good_snapshot())
    (tmp_path / "metrics-1.json").write_text(good + " " * (999 - len(good)))  # 999 bytes: read
    (tmp_path / "metrics-2.json").write_text(good + " " * (1001 - len(good)))
    (tmp_path / "elsewhere.json").write_text(good)
    (tmp_path / "metrics-3.json").symlink_to(tmp_path / "elsewhere.json")
    os.mkfifo(tmp_path / "metrics-4.json")  # (a reader must not wait for a writer)
    (tmp_path / "metrics-5.json").mkdir()
    (tmp_path / "metrics-x.json").write_text(good)  # not a worker's name: not read
    (tmp_path / ".metrics-6.json.abc.tmp").write_text(good)
    with pytest.raises(ValueError, match="expected at most 1000 bytes"):
        read_snapshot(tmp_path / "metrics-2.json")
    text = SharedMetrics(Metrics(), tmp_path, 0).render()
    assert _value(text, 'governor_decisions_total{kind="execute"}') == 2
    assert _value(text, "governor_workers_reporting") == 2
    assert _value(text, "governor_worker_snapshots_skipped") == 4


def test_an_unreadable_own_file_starts_the_worker_from_zero(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (tmp_path / "metrics-0.json").write_bytes(_with(llm_calls=-3))
    metrics = Metrics()
    with caplog.at_level(logging.ERROR, logger="governor.serve.prometheus"):
        SharedMetrics(metrics, tmp_path, 0)
    assert metrics.snapshot() == Metrics().snapshot()
    assert "worker 0 starts from zero" in caplog.text and "llm_calls" in caplog.text


def test_labels_read_back_are_escaped_as_ever(tmp_path: Path) -> None:
    other = Metrics()
    other.count_policy('a"b\\c\nd', "execute", ["r"], {"r"})
    (tmp_path / "metrics-1.json").write_text(json.dumps(other.snapshot()))
    text = SharedMetrics(Metrics(), tmp_path, 0).render()
    assert 'governor_policy_decisions_total{policy="a\\"b\\\\c\\nd",kind="execute"} 1' in text
    assert len(BUCKETS) + 1 == len(other.snapshot()["buckets"])  # type: ignore[arg-type]


def test_the_apps_lifespan_writes_and_its_scrape_sums(tmp_path: Path) -> None:
    other = Metrics()
    _busy(other, ["execute"] * 4)
    (tmp_path / "metrics-1.json").write_text(json.dumps(other.snapshot()))
    app = create_app(tools_guard("http://127.0.0.1:9"), shared_dir=tmp_path, worker=0)

    async def served() -> tuple[httpx.Response, str]:
        transport = httpx.ASGITransport(app=app)
        async with (
            app.router.lifespan_context(app),
            httpx.AsyncClient(transport=transport, base_url="http://t") as http,
        ):
            judged = await http.post("/v1/checks", json={"session": "s", "candidate": "Done."})
            text = (await http.get("/metrics")).text
            await http.post("/v1/checks", json={"session": "s", "candidate": "Done again."})
        return judged, text  # (the lifespan ended: the last decision written too)

    judged, text = asyncio.run(served())
    assert judged.status_code == 200, judged.text
    assert _value(text, "governor_workers_reporting") == 2
    assert _value(text, 'governor_policy_decisions_total{policy="default",kind="admissible"}') == 1
    assert _value(text, 'governor_decisions_total{kind="execute"}') == 4
    assert read_snapshot(tmp_path / "metrics-0.json").policy_decisions == {
        ("default", "admissible"): 2
    }
