"""User domains: ``--props``/``--places`` lists and domain files, with their validation."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from governor.errors import ConfigError
from governor.ltl import parse
from governor.ltl.english.domain_file import flag_domain, load_domain_file, split_names, user_domain
from governor.ltl.english.translate import translate_offline
from governor.ltl.english.verify import verify_view
from governor.worlds.household.ltl_phrases import HOUSEHOLD_PHRASES

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "domains" / "warehouse.yaml"


def formula(sentence: str, domain: object) -> str:
    t = translate_offline(sentence, domain)  # type: ignore[arg-type]
    assert t.formula is not None, t.error
    return str(t.formula)


def test_split_names_keeps_commas_inside_parentheses() -> None:
    assert split_names(" a, is_in(x,y) ,b,,") == ["a", "is_in(x,y)", "b"]
    assert split_names("") == []


def test_props_and_places_make_a_custom_domain() -> None:
    domain = flag_domain(
        "charger,is_open(dock_door),is_in(pallet,truck)", "lobby,garage", HOUSEHOLD_PHRASES
    )
    assert domain.name == "custom" and domain.rooms == ("agent_at(lobby)", "agent_at(garage)")
    assert "is_in(pallet, truck)" in domain.known
    assert formula("never enter the lobby", domain) == "G !agent_at(lobby)"
    assert formula("you must visit the charger", domain) == "F charger"
    assert formula("never open the dock door", domain) == "G !is_open(dock_door)"
    assert formula("avoid the garage", domain) == "G !agent_at(garage)"
    assert formula("you must put the pallet in the truck", domain) == "F is_in(pallet, truck)"
    view = verify_view(translate_offline("never enter the lobby", domain), domain)
    assert view["english"] == "the agent must never be in the lobby"
    assert view["counterexample"] == [["agent_at(lobby)"]]


def test_props_alone_need_no_places() -> None:
    domain = flag_domain("charger,is_switchedon(forklift)", None, HOUSEHOLD_PHRASES)
    assert domain.rooms == () and domain.rules == []
    assert formula("never turn on the forklift", domain) == "G !is_switchedon(forklift)"
    t = translate_offline("never enter the office", domain)
    assert t.formula is None and "office" in str(t.error)


@pytest.mark.parametrize(
    ("props", "places", "message"),
    [
        ("a,is in(x)", None, r"--props: item 2: expected a proposition .* found 'is in\(x\)'"),
        ("a,G", None, "--props: item 2: expected a proposition"),
        (None, "lobby,x(y)", r"--places: item 2: expected a place name .* found 'x\(y\)'"),
        ("", None, "--props: expected 1 to 1000 propositions and places"),
        ("a", ",".join(f"p{i}" for i in range(201)), "places: expected at most 200, found 201"),
    ],
)
def test_bad_flag_lists(props: str | None, places: str | None, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        flag_domain(props, places, HOUSEHOLD_PHRASES)


def test_the_example_domain_file() -> None:
    domain = load_domain_file(EXAMPLE, HOUSEHOLD_PHRASES)
    assert domain.name == "warehouse"
    assert "agent_at(cold_room)" in domain.rooms
    assert formula("never go to the freezer", domain) == "G !agent_at(cold_room)"
    assert formula("you must visit the charging station", domain) == "F agent_at(charger)"
    assert formula("never open the loading door", domain) == "G !is_open(dock_door)"
    assert formula("never turn on the lift truck", domain) == "G !is_switchedon(forklift)"
    assert parse("G !(is_open(dock_door) & is_switchedon(alarm))") in domain.rules
    assert parse("G(is_switchedon(forklift) -> !agent_at(cold_room))") in domain.rules


def test_rules_shape_the_counterexample(tmp_path: Path) -> None:
    path = tmp_path / "d.json"
    spec = {"name": "lab", "propositions": ["is_open(door)", "is_switchedon(laser)"]}
    path.write_text(json.dumps({**spec, "rules": ["is_open(door) -> !is_switchedon(laser)"]}))
    domain = load_domain_file(path, HOUSEHOLD_PHRASES)
    view = verify_view(translate_offline("you must open the door", domain), domain)
    assert view["counterexample"] == [[]]
    sentence = "if you turn on the laser you must open the door later"
    view = verify_view(translate_offline(sentence, domain), domain)
    # the door cannot open while the laser is on: the laser's step is the whole example
    assert view["counterexample"] == [["is_switchedon(laser)"]]
    assert "forbids" not in " ".join(view["notes"])


BASE = "name: w\npropositions: [charger, is_open(door)]\n"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("name: w\n", "propositions: missing"),
        ("propositions: [a]\n", "name: expected a non-empty string, found None"),
        (BASE + "colour: red\n", r"expected only the keys name, .*, found \['colour'\]"),
        ("name: w\npropositions: charger\n", "propositions: expected a list, found 'charger'"),
        ("name: w\npropositions: [a, 'is in(x)']\n", r"propositions\[1\]: expected a propos"),
        ("name: w\npropositions: [a, 3]\n", r"propositions\[1\]: expected a proposition"),
        (BASE + "places: [lobby, 'x(y)']\n", r"places\[1\]: expected a place name"),
        (BASE + "aliases: [a]\n", "aliases: expected a mapping from phrases to objects"),
        (BASE + "aliases: {dock: garage}\n", r"aliases\['dock'\]: expected an object of the"),
        (BASE + "aliases: {charger: door}\n", r"aliases\['charger'\]: the phrase already names"),
        (BASE + "aliases: {the very long door phrase: door}\n", "a phrase of one to three words"),
        (BASE + "rules: ['G (charger ->']\n", r"rules\[0\]: expected an LTL formula .* column"),
        (BASE + "rules: ['G lobby']\n", r"rules\[0\]: .*lobby is not a proposition of the w"),
        (BASE + "rules: [G charger, F !charger]\n", "rules: no trace of the domain satisfies"),
        (BASE + "conventions: drones\n", "conventions: expected safety_chip or lang2ltl or drone"),
        (BASE + "groups: [charger]\n", "groups: expected a mapping from group names to"),
        (BASE + "groups: {Level: [charger, is_open(door)]}\n", r"groups\['Level'\]: expected a lo"),
        (BASE + "groups: {level: [charger]}\n", r"groups\['level'\]: expected a list of two or"),
        (
            BASE + "groups: {level: [charger, lobby]}\n",
            r"expected distinct propositions of the d.*lobby",
        ),
        (
            BASE + "groups: {level: [charger, charger]}\n",
            r"propositions of the domain, found 'charger twice'",
        ),
        (
            BASE
            + "groups: {level: [charger, is_open(door)]}\nrules: ['charger & is_open(door)']\n",
            "groups and rules: no trace of the domain satisfies",
        ),
        ("[a, b]\n", "expected a mapping at the top level"),
        ("name: [\n", "not valid YAML"),
    ],
)
def test_domain_file_errors_name_the_file_and_field(
    tmp_path: Path, text: str, message: str
) -> None:
    path = tmp_path / "d.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=message) as info:
        load_domain_file(path, HOUSEHOLD_PHRASES)
    assert str(info.value).startswith(f"{path}: ")
    assert "YAML" in message or "\n" not in str(info.value)


def test_a_missing_domain_file() -> None:
    with pytest.raises(ConfigError, match="cannot read"):
        load_domain_file("/nonexistent/d.yaml", HOUSEHOLD_PHRASES)


def test_user_domain_aliases_with_determiners() -> None:
    domain = user_domain("w", ["agent_at(dock)"], ["hall"], {"the front hall": "hall"})
    assert formula("never enter the front hall", domain) == "G !agent_at(hall)"
    assert formula("you must go to the dock", domain) == "F agent_at(dock)"


def test_a_domain_file_declares_its_conventions_and_groups(tmp_path: Path) -> None:
    path = tmp_path / "tower.yaml"
    path.write_text(
        "name: tower\npropositions: [lab, office, ground_level, top_level]\n"
        "groups: {level: [ground_level, top_level]}\nconventions: drone_commands\n"
    )
    domain = load_domain_file(path)
    assert domain.convention == "drone_commands"
    assert domain.groups == {"level": ("ground_level", "top_level")}
    assert parse("G !(ground_level & top_level)") in domain.rules
    # the domain's conventions are the default; a convention given overrides them
    assert formula("go to the lab avoiding the office", domain) == "F(lab & !office)"
    other = translate_offline("go to the lab avoiding the office", domain, "safety_chip")
    assert str(other.formula) != "F(lab & !office)"
    assert formula("go to the lab without changing levels", domain) == (
        "F lab & (G ground_level | G top_level)"
    )
    t = translate_offline("go to the lab without changing floors", domain)  # no name says floor
    assert t.formula is None and t.error == "could not place the words: changing, floors"
