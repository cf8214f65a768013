"""The ``ltl translate`` and ``ltl check`` handlers, and spec files."""

from __future__ import annotations

import argparse
import io
import json
from pathlib import Path

import pytest
from rich.console import Console

from governor.cli.ltl import add_ltl_parser
from governor.errors import ConfigError, SpecError
from governor.ltl import MonitorSet, parse
from governor.ltl.specs import Spec, append_specs, load_specs, monitor_specs


def run(*argv: str) -> tuple[int, str]:
    parser = argparse.ArgumentParser(prog="governor")
    add_ltl_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["ltl", *argv])
    out = io.StringIO()
    code = args.handler(args, Console(file=out, width=200))
    return code, out.getvalue()


def write(path: Path, data: object) -> Path:
    path.write_text(json.dumps(data) if not isinstance(data, str) else data)
    return path


def test_check_a_hand_trace(tmp_path: Path) -> None:
    trace = write(
        tmp_path / "t.json",
        [["agent_at(kitchen)"], ["agent_at(living_room)"], ["agent_at(bathroom)"]],
    )
    code, out = run(
        "check", "--formula", "!agent_at(bathroom) W agent_at(living_room)", "--trace", str(trace)
    )
    assert code == 0 and json.loads(out) == {"steps": ["ok", "ok", "ok"], "final": "satisfied"}
    trace = write(tmp_path / "u.json", [[], ["is_open(fridge)", "is_in(apple,fridge)"]])
    code, out = run(
        "check",
        "--prefix",
        "--formula",
        "G i is_open(fridge) F ! is_open(fridge)",
        "--trace",
        str(trace),
    )
    assert code == 1 and json.loads(out) == {"steps": ["ok", "pending"], "final": "violated"}
    code, out = run("check", "--formula", "G !is_in(apple, fridge)", "--trace", str(trace))
    assert json.loads(out) == {"steps": ["ok", "violated"], "final": "violated"}


@pytest.mark.parametrize(
    ("content", "error", "message"),
    [
        ("[[", ConfigError, "not valid JSON"),
        ('{"steps": []}', ConfigError, "a non-empty JSON list of steps"),
        ("[]", ConfigError, "a non-empty JSON list of steps"),
        ('[["a"], "b"]', ConfigError, "step 1: expected a list of proposition strings"),
        ('[["a"], ["is in(x)"]]', SpecError, "step 1"),
    ],
)
def test_check_rejects_bad_traces(tmp_path: Path, content: str, error: type, message: str) -> None:
    trace = write(tmp_path / "t.json", content)
    with pytest.raises(error, match=message) as info:
        run("check", "--formula", "G a", "--trace", str(trace))
    assert "\n" not in str(info.value)


def test_check_rejects_a_bad_formula_and_a_missing_file(tmp_path: Path) -> None:
    trace = write(tmp_path / "t.json", [["a"]])
    with pytest.raises(SpecError, match="column"):
        run("check", "--formula", "G (a ->", "--trace", str(trace))
    with pytest.raises(ConfigError, match="cannot read"):
        run("check", "--formula", "G a", "--trace", str(tmp_path / "missing.json"))


def test_translate_shows_formula_english_and_example() -> None:
    code, out = run(
        "translate", "you have to enter living room before bathroom", "--task", "rooms/0_5"
    )
    assert code == 0
    for part in (
        "!agent_at(bathroom) U agent_at(living_room)",
        "U ! agent_at(bathroom) agent_at(living_room)",
        "the agent must not be in the bathroom before it has been in the living room",
        "step 0: agent_at(bathroom)",
        "violated at step 0",
        "0 LLM call(s)",
    ):
        assert part in out


def test_translate_accept_round_trip(tmp_path: Path) -> None:
    specs = tmp_path / "specs.yaml"
    sentences = [
        "if you open the fridge you need to close the fridge later",
        "never go to bathroom twice",
    ]
    code, _ = run("translate", *sentences, "--accept", str(specs))
    assert code == 0
    loaded = load_specs(specs)
    assert [s.text for s in loaded] == sentences
    assert all(s.verified and s.method == "offline" for s in loaded)
    assert loaded[0].formula == parse("G(is_open(fridge) -> F !is_open(fridge))")
    assert loaded[0].grounding == {
        "open the fridge": "is_open(fridge)",
        "close the fridge": "!is_open(fridge)",
    }
    code, out = run("translate", "--json", "avoid bathroom at any time", "--accept", str(specs))
    assert code == 0 and json.loads(out)["accepted_to"] == str(specs)
    assert len(load_specs(specs)) == 3
    monitors = MonitorSet.from_specs(monitor_specs(load_specs(specs)))
    assert monitors.names == ("c1", "c2", "c3")


def test_translate_accepts_nothing_when_a_sentence_fails(tmp_path: Path) -> None:
    specs = tmp_path / "specs.yaml"
    code, out = run("translate", "never open the fridge", "be nice", "--accept", str(specs))
    assert code == 1 and not specs.exists() and "nothing appended" in out
    code, out = run("translate", "--json", "be nice")
    data = json.loads(out)
    assert code == 1 and data["constraints"][0]["error"] and data["accepted_to"] is None


def test_translate_with_llm_needs_an_endpoint(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("GOVERNOR_BASE_URL", "GOVERNOR_MODEL", "GOVERNOR_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(ConfigError, match="no LLM endpoint"):
        run("translate", "--llm", "never open the fridge")


def test_translate_with_a_dead_llm_says_it_fell_back(closed_port_url: str) -> None:
    code, out = run(
        "translate", "--llm", "--base-url", closed_port_url, "--model", "m", "never open the fridge"
    )
    text = " ".join(out.split())
    assert code == 0 and "G !is_open(fridge)" in text
    assert "the LLM translator failed for 1 sentence(s): they were translated offline" in text
    assert "1 failed" in text


GOOD = {"text": "never open the fridge", "formula": "G !is_open(fridge)", "verified": True}


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"text": "x", "verified": True}, r"constraints\[0\]: missing field formula"),
        (
            {**GOOD, "formula": "G (is_open(fridge) ->"},
            r"constraints\[0\]\.formula: .* at column 22",
        ),
        ({**GOOD, "prefix": "G is_open(fridge)"}, "prefix expected the same formula"),
        ({**GOOD, "verified": "yes"}, r"verified: expected bool"),
        ({**GOOD, "grounding": ["x"]}, "grounding: expected a mapping"),
        ("just text", r"constraints\[0\]: expected a mapping"),
    ],
)
def test_load_specs_errors(tmp_path: Path, entry: object, message: str) -> None:
    path = write(tmp_path / "s.json", {"constraints": [entry]})
    with pytest.raises(SpecError, match=message):
        load_specs(path)


def test_load_specs_file_errors(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match="constraints: expected a list"):
        load_specs(write(tmp_path / "a.yaml", "other: 1\n"))
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_specs(write(tmp_path / "b.yaml", "constraints: [\n"))
    with pytest.raises(ConfigError, match="cannot read"):
        load_specs(tmp_path / "none.yaml")


def test_unverified_specs_stay_unverified(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    append_specs(path, [Spec("avoid bathroom", parse("G !agent_at(bathroom)"), verified=False)])
    (spec,) = load_specs(path)
    assert spec.verified is False and spec.prefix == "G ! agent_at(bathroom)"


EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "domains" / "warehouse.yaml"


def test_translate_over_props_and_places() -> None:
    code, out = run(
        "translate", "--json", "--props", "charger,is_open(dock_door)", "--places", "lobby,garage",
        "never enter the lobby", "you must visit the charger",
    )  # fmt: skip
    data = json.loads(out)
    views = data["constraints"]
    assert code == 0 and data["domain"] == "custom"
    assert [v["formula"] for v in views] == ["G !agent_at(lobby)", "F charger"]
    assert views[0]["english"] == "the agent must never be in the lobby"
    assert views[0]["counterexample"] == [["agent_at(lobby)"]]
    code, out = run("translate", "--props", "charger", "never open the fridge")
    assert code == 1 and "expected an object of the custom domain (charger)" in out


def test_translate_over_a_domain_file_with_aliases() -> None:
    code, out = run(
        "translate", "--json", "--domain-file", str(EXAMPLE),
        "never go to the freezer", "if you open the loading door you must close it later",
    )  # fmt: skip
    data = json.loads(out)
    assert code == 0 and data["domain"] == "warehouse"
    assert [v["formula"] for v in data["constraints"]] == [
        "G !agent_at(cold_room)",
        "G(is_open(dock_door) -> F !is_open(dock_door))",
    ]
    assert data["constraints"][0]["grounding"] == {"go to the freezer": "agent_at(cold_room)"}


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--domain", "household", "--props", "a"], "--domain household: not with --props"),
        (["--domain-file", "d.yaml", "--places", "a"], "--domain-file: not with --props or"),
        (["--props", "a", "--task", "rooms/0_5"], "--task names a household task"),
        (["--props", "a,b c"], "--props: item 2: expected a proposition"),
        (["--places", "x(y)"], "--places: item 1: expected a place name"),
    ],
)
def test_domain_flags_that_conflict_or_are_bad(argv: list[str], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        run("translate", *argv, "never enter the lobby")


def test_household_default_unchanged_when_named() -> None:
    sentences = ["never open the fridge", "you have to enter living room before bathroom"]
    assert run("translate", *sentences) == run("translate", "--domain", "household", *sentences)
    code, out = run("translate", "--json", "--domain", "household", *sentences)
    assert code == 0 and json.loads(out)["domain"] == "household"


SENTENCES = """\
# a warehouse shift
never enter the cold room

  never turn on the lift truck
be nice
"""


def test_batch_records_and_exit_status(tmp_path: Path) -> None:
    text = write(tmp_path / "s.txt", SENTENCES + "never " + "x" * 1000 + "\n")
    out_path = tmp_path / "out" / "records.json"
    code, out = run(
        "translate", "--domain-file", str(EXAMPLE), "--file", str(text), "--out", str(out_path)
    )
    assert code == 1 and out == "4 sentences, 2 translated, 2 failed\n"
    data = json.loads(out_path.read_text())
    assert data["domain"] == "warehouse"
    first, second, nice, long = data["records"]
    assert first == {
        "line": 2, "text": "never enter the cold room", "ok": True,
        "formula": "G !agent_at(cold_room)", "prefix": "G ! agent_at(cold_room)",
        "pattern": "global_avoid", "reading": "the agent must never be in the cold room",
        "error": None, "ambiguous": False, "alternatives": [],
    }  # fmt: skip
    assert second["line"] == 4 and second["formula"] == "G !is_switchedon(forklift)"
    assert nice["ok"] is False and nice["formula"] is None and "grounding" in nice["error"]
    assert long["ok"] is False and "expected at most 1,000 characters" in long["error"]


def test_batch_exit_zero_and_json_to_stdout(tmp_path: Path) -> None:
    text = write(tmp_path / "s.txt", "never open the fridge\navoid bathroom at any time\n")
    code, out = run("translate", "--file", str(text), "--json")
    data = json.loads(out)
    assert code == 0 and data["domain"] == "household"
    assert [r["formula"] for r in data["records"]] == [
        "G !is_open(fridge)",
        "G !agent_at(bathroom)",
    ]
    assert all(r["ok"] and r["error"] is None for r in data["records"])


def test_batch_input_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = write(tmp_path / "s.txt", "# nothing\n\n")
    with pytest.raises(ConfigError, match="expected 1 to 10,000 sentences, one a line"):
        run("translate", "--file", str(text))
    monkeypatch.setattr("governor.cli.ltl_batch.MAX_SENTENCES", 2)
    text = write(tmp_path / "s.txt", "a\nb\nc\n")
    with pytest.raises(ConfigError, match="found '3 sentences'"):
        run("translate", "--file", str(text))
    with pytest.raises(ConfigError, match="--file: not with sentences as arguments"):
        run("translate", "--file", str(text), "never open the fridge")
    with pytest.raises(ConfigError, match="--out: only with --file"):
        run("translate", "--out", "x.json", "never open the fridge")
    with pytest.raises(ConfigError, match="expected sentences as arguments, or --file"):
        run("translate")


def test_translate_convention_flag(tmp_path: Path) -> None:
    sentence = "After the siren sounds, never enter the lobby."
    places = ("--props", "siren", "--places", "lobby,garage")
    _, out = run("translate", "--json", *places, sentence)
    assert json.loads(out)["constraints"][0]["formula"] == "G(siren -> G !agent_at(lobby))"
    _, out = run("translate", "--json", *places, "--convention", "lang2ltl", sentence)
    view = json.loads(out)["constraints"][0]
    assert view["formula"] == "G(siren -> WX G !agent_at(lobby))"
    assert "Lang2LTL's form" in view["reading"]
    lines = write(tmp_path / "s.txt", sentence + "\n")
    out_path = tmp_path / "out.json"
    args = ("--file", str(lines), "--out", str(out_path), "--convention", "lang2ltl")
    run("translate", *places, *args)
    (record,) = json.loads(out_path.read_text())["records"]
    assert record["formula"] == "G(siren -> WX G !agent_at(lobby))"
    with pytest.raises(ConfigError, match="only for the offline translator"):
        run("translate", *places, "--convention", "lang2ltl", "--llm", sentence)


def test_batch_keeps_every_record_when_one_sentence_reaches_a_bug(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from governor.ltl.english import translate

    real = translate.lift

    def lift(sentence: str, domain: object) -> object:
        if "fridge" in sentence:
            raise IndexError("list index out of range")
        return real(sentence, domain)  # type: ignore[arg-type]

    monkeypatch.setattr(translate, "lift", lift)
    text = write(tmp_path / "s.txt", "avoid bathroom at any time\nnever open the fridge\n")
    code, out = run("translate", "--file", str(text), "--json")
    first, second = json.loads(out)["records"]
    assert code == 1 and first["ok"] and first["formula"] == "G !agent_at(bathroom)"
    assert second["ok"] is False
    assert second["error"] == "internal error: IndexError: list index out of range"


def test_translate_the_drone_commands_convention() -> None:
    drone = str(EXAMPLE.parent / "drone.yaml")
    sentence = "go to the yellow room through the secnod floor"
    _, out = run("translate", "--json", "--domain-file", drone, "--convention", "drone_commands",
                 sentence)  # fmt: skip
    (view,) = json.loads(out)["constraints"]
    assert view["formula"] == "F(second_floor & F yellow_room)"
    assert "read secnod -> second" in view["reading"]


def test_translate_reads_by_the_domain_files_conventions_unless_overridden() -> None:
    drone = str(EXAMPLE.parent / "drone.yaml")
    sentence = "fly to the red room avoiding landmark one"
    _, out = run("translate", "--json", "--domain-file", drone, sentence)
    (view,) = json.loads(out)["constraints"]
    assert view["formula"] == "F(red_room & !landmark_1)"  # drone.yaml: conventions: drone_commands
    _, out = run("translate", "--json", "--domain-file", drone, "--convention", "safety_chip",
                    sentence)  # fmt: skip
    (view,) = json.loads(out)["constraints"]
    assert view["formula"] != "F(red_room & !landmark_1)"
