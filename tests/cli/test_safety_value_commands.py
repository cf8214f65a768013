import argparse
import json

import pytest
from rich.console import Console

from governor.cli.safety_value import add_eval_parser, add_train_parser
from governor.errors import ConfigError
from governor.worlds.driving.env import DrivingParams
from governor.worlds.driving.grid_value import GridSpec, load_or_compute

SMALL = GridSpec(nx=31, ny=31, ntheta=16)  # as in conftest

GRID_FLAGS = ["--grid-nx", "31", "--grid-ny", "31", "--grid-ntheta", "16"]


@pytest.fixture
def cache(tmp_path_factory, monkeypatch):
    path = tmp_path_factory.getbasetemp() / "commands-grid"
    load_or_compute(DrivingParams(), SMALL, cache_dir=path, progress=False)
    monkeypatch.setenv("GOVERNOR_CACHE_DIR", str(path))
    return path


def _parse(argv):
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command", required=True)
    add_train_parser(sub)
    add_eval_parser(sub)
    return parser.parse_args(argv)


def _run(argv):
    args = _parse(argv)
    console = Console(record=True, width=200)
    return args.handler(args, console), console.export_text()


def test_train_then_eval_writes_the_metrics(cache, tmp_path):
    out = tmp_path / "ck"
    train = "train safety-value --env driving --obs state --minutes 0.5 --seed 3 --iterations 30"
    tiny = "--n-envs 8 --batch-size 32 --learning-starts 32 --eval-states 100"
    status, text = _run([*train.split(), *tiny.split(), "--out", str(out), *GRID_FLAGS])
    assert status == 0 and "done: 30 iterations" in text and (out / "checkpoint.pt").is_file()
    report = tmp_path / "eval.json"
    evaluate = ["eval", "safety-value", str(out), "--json", str(report), "--states", "300"]
    status, text = _run([*evaluate, "--obs", "state", *GRID_FLAGS])
    metrics = json.loads(report.read_text())
    assert status == 0 and "driving/state: agreement" in text
    assert sorted(metrics) == sorted(
        ["env", "obs", "agreement", "value_f1", "tp_rate", "tn_rate", "fn_rate", "train_minutes"]
    )
    assert metrics["obs"] == "state" and 0.0 < metrics["train_minutes"] < 0.5
    with pytest.raises(ConfigError, match="trained for obs 'state', expected obs 'text'"):
        _run(["eval", "safety-value", str(out), "--obs", "text", *GRID_FLAGS])
    again = [*train.split(), *tiny.split(), "--out", str(out), *GRID_FLAGS]
    with pytest.raises(ConfigError, match=r"expected a new folder, found checkpoint.pt, meta.json"):
        _run(again)
    status, text = _run([*again, "--force"])
    assert status == 0 and "done: 30 iterations" in text


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--minutes", "0"], r"minutes: expected a number in \[0.001"),
        (["--seed", "-1"], r"seed: expected a number in \[0, 4.29497e\+09\], found -1"),
    ],
)
def test_a_zero_budget_and_a_negative_seed_are_refused(tmp_path, flags, message):
    with pytest.raises(ConfigError, match=message):
        _run(["train", "safety-value", "--out", str(tmp_path / "ck"), *flags])
    assert not (tmp_path / "ck").exists()


def test_flags_are_checked():
    with pytest.raises(SystemExit):
        _parse(["train", "safety-value", "--out", "x", "--obs", "pixels"])
    with pytest.raises(ConfigError, match="obs"):
        _run(["eval", "safety-value", "x", "--obs", "pixels"])
    args = _parse(["train", "safety-value", "--out", "x"])
    assert args.obs is None and args.minutes is None  # the config's defaults apply


def test_eval_draws_the_held_out_states_by_default():
    from governor.cli.safety_value import EvalConfig
    from governor.safety_values.learned import EVAL_SEED

    assert EvalConfig().seed == EVAL_SEED


def test_commerce_text_trains_and_evaluates_against_the_exact_programme(tmp_path):
    out = tmp_path / "shop"
    train = "train safety-value --env commerce --obs text --minutes 0.5 --iterations 4"
    tiny = "--batch-size 8 --learning-starts 16 --eval-states 20 --d-model 8 --ff 16"
    status, text = _run([*train.split(), *tiny.split(), "--head-hidden", "16", "--out", str(out)])
    assert status == 0 and "done: 4 iterations" in text
    report = tmp_path / "eval.json"
    evaluate = ["eval", "safety-value", str(out), "--json", str(report), "--states", "40"]
    status, text = _run([*evaluate, "--env", "commerce", "--obs", "text"])
    metrics = json.loads(report.read_text())
    assert status == 0 and "commerce/text: agreement" in text
    assert sorted(metrics) == sorted(
        ["env", "obs", "agreement", "value_f1", "tp_rate", "tn_rate", "fn_rate", "train_minutes"]
    )
    assert metrics["env"] == "commerce" and metrics["tp_rate"] + metrics["fn_rate"] == 1.0
    with pytest.raises(ConfigError, match="trained for env 'commerce', expected env 'driving'"):
        _run(["eval", "safety-value", str(out), "--env", "driving"])
    with pytest.raises(ConfigError, match="env: expected driving or commerce"):
        _run(["eval", "safety-value", str(out), "--env", "shop"])


def test_eval_of_a_missing_folder_names_it(tmp_path, capsys):
    from governor.cli import main

    assert main(["eval", "safety-value", str(tmp_path / "nowhere")]) == 2
    assert "found no folder at" in capsys.readouterr().err
