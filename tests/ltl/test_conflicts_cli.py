"""``governor ltl conflicts``: verdict, JSON and exit status."""

from __future__ import annotations

import argparse
import io
import json
from pathlib import Path

import pytest
from rich.console import Console

from governor.cli.ltl import add_ltl_parser
from governor.errors import ConfigError, EnvError

CYCLE = (
    "you have to enter bathroom before kitchen",
    "don't go to bathroom before living room",
    "don't go to living room before you put the salmon in the fridge",
)


def run(*argv: str) -> tuple[int, str]:
    parser = argparse.ArgumentParser(prog="governor")
    add_ltl_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["ltl", "conflicts", *argv])
    out = io.StringIO()
    return args.handler(args, Console(file=out, width=200)), out.getvalue()


def test_a_conflict_names_the_minimal_set_and_exits_1(tmp_path: Path) -> None:
    out_path = tmp_path / "c.json"
    code, out = run("--domain", "household", "--task", "rooms/0_10", *CYCLE, "you can only go to kitchen twice",
                    "--json", str(out_path))  # fmt: skip
    data = json.loads(out_path.read_text())
    assert code == 1 and data["conflict"] is True and data["witness"] is None
    assert set(data["minimal"]) == set(CYCLE) and not data["undecided"] and data["states"] > 0
    assert "conflict" in out and CYCLE[2] in out


def test_no_conflict_prints_a_witness_and_exits_0(tmp_path: Path) -> None:
    out_path = tmp_path / "ok.json"
    code, out = run("--task", "rooms/0_10", CYCLE[0], "--json", str(out_path))
    data = json.loads(out_path.read_text())
    assert code == 0 and data["conflict"] is False and data["minimal"] == []
    assert data["witness"] and data["witness"][-1].startswith("[PUTIN] <salmon> <fridge>")
    assert "[WALK] <bathroom>" in data["witness"] and "no conflict" in out


def test_a_tiny_cap_is_undecided_not_a_conflict(tmp_path: Path) -> None:
    code, out = run("--task", "rooms/0_10", CYCLE[0], "--max-states", "1")
    assert code == 0 and "undecided" in out


def test_bad_input_is_an_error() -> None:
    with pytest.raises(ConfigError, match="cannot translate"):
        run("--task", "rooms/0_10", "the moon is made of cheese")
    with pytest.raises(EnvError, match="task"):
        run("--task", "nowhere/0", CYCLE[0])
    with pytest.raises(ConfigError, match="max-states"):
        run("--task", "rooms/0_10", CYCLE[0], "--max-states", "0")
