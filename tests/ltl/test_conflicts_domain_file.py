"""``governor ltl conflicts --domain-file``: a domain file's actions in the joint check."""

from __future__ import annotations

import argparse
import io
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from rich.console import Console

from governor.cli.ltl import add_ltl_parser
from governor.errors import ConfigError
from governor.ltl.english.domain_file import load_domain_file, read_domain_file
from governor.ltl.parser import parse
from governor.ltl.progression import accepts_empty, progress
from governor.worlds.household.ltl_phrases import HOUSEHOLD_PHRASES

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "domains" / "warehouse.yaml"
CYCLE = (
    "don't go to the shelf before the aisle",
    "don't go to the aisle before the lobby",
    "don't go to the lobby before you pick up the pallet",
)


def run(*argv: str) -> tuple[int, str]:
    parser = argparse.ArgumentParser(prog="governor")
    add_ltl_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["ltl", "conflicts", *argv])
    out = io.StringIO()
    return args.handler(args, Console(file=out, width=200)), out.getvalue()


def example() -> dict[str, Any]:
    data = yaml.safe_load(EXAMPLE.read_text())
    assert isinstance(data, dict)
    return data


def write(tmp_path: Path, data: dict[str, Any]) -> Path:
    path = tmp_path / "domain.json"
    path.write_text(json.dumps(data))
    return path


def test_a_cycle_conflicts_through_the_pick_precondition(tmp_path: Path) -> None:
    out_path = tmp_path / "c.json"
    code, out = run("--domain-file", str(EXAMPLE), "--goal", "is_in(pallet, truck)", *CYCLE,
                    "never turn on the alarm", "--json", str(out_path))  # fmt: skip
    data = json.loads(out_path.read_text())
    assert code == 1 and data["conflict"] is True and data["witness"] is None
    assert data["minimal"] == list(CYCLE) and data["minimal_exact"] and not data["undecided"]
    assert data["domain"] == "warehouse" and data["goal"] == "is_in(pallet, truck)"
    assert "conflict" in out and CYCLE[2] in out
    # the same constraints, with picking allowed anywhere: the conflict was the precondition's
    changed = example()
    pick = next(a for a in changed["actions"] if a["name"] == "pick_pallet")
    pick["pre"].remove("agent_at(shelf)")
    code, _ = run("--domain-file", str(write(tmp_path, changed)), "--goal", "is_in(pallet, truck)",
                  *CYCLE)  # fmt: skip
    assert code == 0


def replay(path: Path, steps: list[str]) -> list[frozenset[str]]:
    """The labels of the states the steps lead through, each step checked to be allowed."""
    domain = read_domain_file(path, HOUSEHOLD_PHRASES).actions
    assert domain is not None
    by_name = {a.name: a for a in domain.actions}
    state = domain.initial
    trace = [domain.labels(state)]
    for step in steps:
        action = by_name[step]
        assert action.applicable(state), step
        state = action.apply(state)
        assert all(i.holds(state) for i in domain.invariants), step
        trace.append(domain.labels(state))
    return trace


def test_a_satisfiable_set_has_a_witness_that_replays(tmp_path: Path) -> None:
    out_path = tmp_path / "ok.json"
    code, out = run("--domain-file", str(EXAMPLE), "--goal", "put the pallet in the truck",
                    *CYCLE[:2], "you must open the loading door", "never go to the freezer",
                    "--json", str(out_path))  # fmt: skip
    data = json.loads(out_path.read_text())
    assert code == 0 and data["conflict"] is False and data["minimal"] == []
    assert "no conflict" in out and data["goal"] == "is_in(pallet, truck)"
    steps = data["witness"]
    assert steps.index("drop_crate") < steps.index("pick_pallet")  # a free hand first
    assert "open_dock_door" in steps and "go_lobby" in steps
    trace = replay(EXAMPLE, steps)
    assert "is_in(pallet, truck)" in trace[-1]
    for c in data["constraints"]:
        obligation = parse(c["formula"])
        for labels in trace:
            obligation = progress(obligation, labels)
        assert accepts_empty(obligation), c["text"]


def test_the_example_file_compiles_its_actions() -> None:
    parts = read_domain_file(EXAMPLE, HOUSEHOLD_PHRASES)
    assert (
        parts.actions is not None and load_domain_file(EXAMPLE, HOUSEHOLD_PHRASES) == parts.domain
    )
    names = {a.name for a in parts.actions.actions}
    assert {"pick_pallet", "drop_pallet", "charge", "go_shelf", "go_dock"} <= names
    assert parts.actions.initial == {"agent_at(dock)", "is_grabbed(crate)"}
    assert [t for t, _ in parts.rules] == example()["rules"]


def action_file(tmp_path: Path, **changes: Any) -> Path:
    data = {"name": "lab", "propositions": ["is_open(door)", "is_grabbed(key)"],
            "places": ["hall", "lab"], "init": ["agent_at(hall)"],
            "actions": [{"name": "open", "pre": ["is_grabbed(key)"], "add": ["is_open(door)"]}]}  # fmt: skip
    return write(tmp_path, data | changes)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"actions": [{"name": "grab", "pre": ["is_grabbed(box)"]}]},
         r"actions\[0\]\.pre\[0\]: is_grabbed\(box\) is not a proposition of the lab domain"),
        ({"actions": [{"name": "grab", "add": ["!is_grabbed(key)"]}]},
         r"actions\[0\]\.add: expected propositions without !"),
        ({"actions": [{"name": "grab", "effect": []}]}, r"actions\[0\]: expected only the keys"),
        ({"actions": [{"name": "a", "when": [{"if": ["x"]}]}]}, r"when\[0\]\.if\[0\]: x is not"),
        ({"actions": [{"name": "a"}, {"name": "a"}]}, "expected distinct action names"),
        ({"init": ["agent_at(hall)", "agent_at(lab)"]}, "init: expected exactly one place"),
        ({"init": []}, "init: expected exactly one place"),
        ({"moves": "yes"}, "moves: expected true or false"),
        ({"invariants": [{"facts": ["is_open(door)"], "least": 1}]}, "init: .*1 to 1 of is_open"),
        ({"invariants": [{"facts": [], "most": 1}]}, r"invariants\[0\]: expected some facts"),
        ({"actions": {"name": "a"}}, "actions: expected a list"),
    ],
)  # fmt: skip
def test_bad_actions_are_refused_naming_where(
    tmp_path: Path, changes: dict[str, Any], message: str
) -> None:
    path = action_file(tmp_path, **changes)
    with pytest.raises(ConfigError, match=message) as caught:
        read_domain_file(path, HOUSEHOLD_PHRASES)
    assert str(path) in str(caught.value)


def test_moves_keep_one_place_at_a_time(tmp_path: Path) -> None:
    domain = read_domain_file(action_file(tmp_path, moves=True), HOUSEHOLD_PHRASES).actions
    assert domain is not None
    nxt = dict((a.name, s) for a, s in domain.successors(domain.initial))
    assert set(nxt) == {"go_lab"} and nxt["go_lab"] == {"agent_at(lab)"}


def test_bad_command_lines_are_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="--goal"):
        run("--domain-file", str(EXAMPLE), CYCLE[0])
    with pytest.raises(ConfigError, match="neither --domain nor --task"):
        run("--domain-file", str(EXAMPLE), "--goal", "charged", "--task", "rooms/0_10", CYCLE[0])
    with pytest.raises(ConfigError, match="--goal: expected a condition on the last state"):
        run("--domain-file", str(EXAMPLE), "--goal", "G is_in(pallet, truck)", CYCLE[0])
    with pytest.raises(ConfigError, match="--goal: expected a formula"):
        run("--domain-file", str(EXAMPLE), "--goal", "be nice", CYCLE[0])
    with pytest.raises(ConfigError, match="expected --task KEY"):
        run(CYCLE[0])
    plain = write(tmp_path, {"name": "lab", "propositions": ["a"]})
    with pytest.raises(ConfigError, match="expected actions"):
        run("--domain-file", str(plain), "--goal", "a", "always a")
