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


DRONE = Path(__file__).parents[2] / "examples" / "domains" / "drone.yaml"
OWN_SET = [  # our own sentences, with the formulas their writer intended
    {"text": "fly to the red room , then to landmark three .", "ltl": "F ( red_room & F ( landmark_3 ) )"},
    {"text": "go to the blue room without leaving the first floor", "ltl": "F ( blue_room ) & G ( first_floor )"},
    {"text": "keep away from the red room until you reach landmark two", "ltl": "~ ( red_room ) U ( landmark_2 )"},
    {"text": "go to the green room through the secnod floor", "ltl": "F ( second_floor & F ( green_room ) )"},
    {"text": "go to the yellow room then the orange room", "ltl": "F ( orange_room & F ( yellow_room ) )"},
    {"text": "go to landmark two without changing floors", "ltl": "F ( landmark_2 ) & G ( first_floor )"},
    {"text": "Fly to the red room ,  then to landmark three .", "ltl": "F ( landmark_3 & F ( red_room ) )"},
]  # fmt: skip


def _own_set(tmp_path: Path, rows: list[dict[str, str]] = OWN_SET) -> Path:
    path = tmp_path / "own.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return path


def test_bench_file_scores_a_set_with_gold_formulas(tmp_path: Path) -> None:
    out = tmp_path / "own.json"
    argv = ["bench", "ltl-translate", "--file", str(_own_set(tmp_path)), "--domain-file",
            str(DRONE), "--json", str(out)]  # fmt: skip
    assert main(argv) == 0  # the conventions the domain file declares: drone_commands
    data = json.loads(out.read_text())
    s = data["summary"]
    assert data["convention"] == "drone_commands"
    assert (s["sentences"], s["translated"], s["equivalent"], s["crashes"]) == (7, 7, 4, 0)
    # three wrong readings, listed: a gold with the rooms the other way round; the same, where
    # the first sentence's own words have another gold (disputed); and a gold that names the
    # floor the run starts on, which the sentence does not say (the gold says more)
    wrong = {w["line"]: w for w in data["wrong"]}
    assert set(wrong) == {5, 6, 7}
    assert wrong[5]["formula"] == "F(yellow_room & F orange_room)"
    assert (wrong[5]["other_propositions"], wrong[5]["gold_disputed"]) == (False, False)
    assert (wrong[7]["other_propositions"], wrong[7]["gold_disputed"]) == (False, True)
    assert wrong[5]["gold_narrower"] is False and wrong[7]["gold_narrower"] is False
    assert wrong[6]["formula"] == (
        "F landmark_2 & (G first_floor | G second_floor | G third_floor)"
    )
    assert (wrong[6]["gold_narrower"], wrong[6]["gold_disputed"]) == (True, False)
    assert (s["wrong_gold_narrower"], s["wrong_gold_disputed"]) == (1, 1)
    assert set(data["shapes"]) == {"F(a & F b)", "F a & G b", "!a U b"}
    assert data["shapes"]["F a & G b"]["translated"] == 2


def test_bench_file_gold_in_prefix_and_input_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from governor.bench import ltl_people
    from governor.ltl.english.domain_file import load_domain_file

    rows = [{"text": "go through the red room to landmark one", "ltl": "F & red_room F landmark_1"}]
    domain = load_domain_file(DRONE)
    result = ltl_people.run(_own_set(tmp_path, rows), domain, "prefix", "drone_commands")
    assert result["summary"]["equivalent"] == 1
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"text": "go"}\n')
    with pytest.raises(ConfigError, match=r"bad.jsonl:1: expected the string fields text and ltl"):
        ltl_people.load_gold_set(bad)
    bad.write_text('{"text": "go", "ltl": "F ( ("}\n')
    with pytest.raises(ConfigError, match=r"bad.jsonl:1: ltl: expected a gold formula in infix"):
        ltl_people.load_gold_set(bad)
    assert main(["bench", "ltl-translate", "--file", str(bad)]) == 2
    assert "--file: expected --domain-file" in capsys.readouterr().err
    assert main(["bench", "ltl-translate", "--domain-file", str(DRONE), "--set", "dev"]) == 2
    assert "--domain-file: only with --file" in capsys.readouterr().err


def test_bench_file_counts_a_crash_and_keeps_the_batch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from governor.bench import ltl_people
    from governor.ltl.english.domain_file import load_domain_file

    real = ltl_people.translate_offline

    def flaky(sentence: str, *args: object) -> object:
        if "orange" in sentence:
            from governor.ltl.english.translate import Translation

            return Translation(sentence, None, error="internal error: IndexError: boom")
        return real(sentence, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(ltl_people, "translate_offline", flaky)
    result = ltl_people.run(_own_set(tmp_path), load_domain_file(DRONE), "infix", "drone_commands")
    assert result["summary"]["crashes"] == 1 and result["summary"]["sentences"] == 7
    assert result["summary"]["translated"] == 6
