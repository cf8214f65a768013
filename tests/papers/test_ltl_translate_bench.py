"""`governor bench ltl-translate` on a few dev sentences: the JSON it writes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from governor.cli import main
from governor.errors import ConfigError
from governor.ltl import operators as op
from governor.ltl.parser import atom
from governor.papers import ltl_translate


def test_bench_writes_the_summary_and_records(tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    assert main(["bench", "ltl-translate", "--set", "dev", "--limit", "6", "--json", str(out)]) == 0
    data = json.loads(out.read_text())
    dev = data["sets"]["dev"]
    keys = {"sentences", "translated", "equivalent", "translated_rate", "equivalent_rate"}
    assert keys <= set(dev) and dev["sentences"] == 6
    assert dev["families"] and all(keys <= set(f) for f in dev["families"].values())
    assert sum(f["sentences"] for f in dev["families"].values()) == 6
    assert len(data["records"]) == 6
    rec = data["records"][0]
    assert {"id", "family", "text", "translated", "equivalent", "reading", "ambiguous"} <= set(rec)
    assert set(data["sets"]) == {"dev"}


def test_a_wrong_translation_is_not_counted_equivalent() -> None:
    rec = {"family": "visit", "args": ["a", "b"], "n": None, "places": ["a", "b"], "props": []}
    goal = ltl_translate.intended(rec)
    assert ltl_translate.equivalent(goal, goal, rec)
    other = ltl_translate.intended(rec | {"family": "sequenced_visit"})
    assert not ltl_translate.equivalent(goal, other, rec)


def test_the_sets_and_a_missing_set(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shipped = {p.stem for p in ltl_translate.data_dir().glob("dev*.jsonl")}
    assert set(ltl_translate.SETS) == shipped | {"heldout"}  # every shipped set is scored
    assert ltl_translate.SETS[0] == "dev" and ltl_translate.SETS[-1] == "heldout"
    numbers = [int(name[3:]) for name in ltl_translate.SETS[1:-1]]
    assert numbers == list(range(2, len(numbers) + 2))  # in the order they were written
    found = ltl_translate.run("dev2", limit=3)
    assert set(found["sets"]) == {"dev2"} and found["sets"]["dev2"]["sentences"] == 3
    assert all(r["set"] == "dev2" for r in found["records"])
    monkeypatch.setattr(ltl_translate, "data_dir", lambda: tmp_path)
    with pytest.raises(ConfigError, match=r"dev2\.jsonl"):
        ltl_translate.run("dev2")
    (tmp_path / "dev.jsonl").write_text('{"id": "x"}\n')
    with pytest.raises(ConfigError, match="the fields"):
        ltl_translate.run("dev")


def test_without_places_every_prop_is_free() -> None:
    """Over props alone no prop is fixed: G(a -> b) and G b differ (a trace where a and b are
    both false tells them apart)."""
    rec = {
        "family": "instant_react",
        "args": ["a", "b"],
        "n": None,
        "places": [],
        "props": ["a", "b"],
    }
    reaction = ltl_translate.intended(rec)
    assert ltl_translate.equivalent(reaction, reaction, rec)
    assert not ltl_translate.equivalent(reaction, op.Always(atom("b")), rec)
