"""The offline features' speed benchmark, with a tiny budget."""

from __future__ import annotations

from governor.bench.feature_speed import feature_speed
from governor.overlays.features import FEATURES


def test_feature_speed_reports_a_median() -> None:
    report = feature_speed(8)
    assert report["responses"] == 8 and report["median_ms"] > 0
    assert report["features"] == len(FEATURES)
