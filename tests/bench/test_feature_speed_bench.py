"""The offline features' speed benchmark, with a tiny budget."""

from __future__ import annotations

import argparse
import io

import pytest
from rich.console import Console

from governor.bench.feature_speed import CACHES, add_parser, feature_speed, main, overlay_speed
from governor.overlays.features import FEATURES


def test_feature_speed_reports_a_median() -> None:
    report = feature_speed(8)
    assert report["responses"] == 8 and report["median_ms"] > 0
    assert report["features"] == len(FEATURES)


def test_overlay_speed_times_every_shipped_overlay_on_two_candidates(
    capsys: pytest.CaptureFixture[str],
) -> None:
    for caches in CACHES:
        report = overlay_speed(3, caches=caches)
        assert report["steps"] == 3 and report["candidates"] == 2
        assert report["overlays"] >= 15 and report["median_ms"] > 0 and report["cpu_ms"] > 0
    main(["-n", "2"])
    out = capsys.readouterr().out
    assert "warm caches" in out and "new caches" in out and "cold caches" in out


def test_the_feature_speed_subcommand_prints_every_figure() -> None:
    parser = argparse.ArgumentParser()
    add_parser(parser.add_subparsers(dest="bench", required=True))
    args = parser.parse_args(["feature-speed", "-n", "2"])
    out = io.StringIO()
    assert args.handler(args, Console(file=out, width=200)) == 0
    printed = out.getvalue()
    assert "all " in printed and printed.count("overlay evaluate") == 3
