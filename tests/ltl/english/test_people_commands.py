"""Sentences the way people write them: never a crash, precision first, looser grounding, and
the drone-commands convention. Every sentence here is our own (or the issue's)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from governor.errors import SpecError
from governor.ltl.domain import Domain
from governor.ltl.english.domain_file import load_domain_file, user_domain
from governor.ltl.english.grammar.commands import command_symbols, read_command
from governor.ltl.english.grammar.readings import DRONE_COMMANDS, SAFETY_CHIP
from governor.ltl.english.grounding.spelling import correct, fused_ordinals, within
from governor.ltl.english.translate import translate_offline

DRONE = Path(__file__).parents[3] / "examples" / "domains" / "drone.yaml"


@pytest.fixture(scope="module")
def drone() -> Domain:
    return load_domain_file(DRONE)


def read(sentence: str, domain: Domain, convention: str = SAFETY_CHIP) -> str | None:
    t = translate_offline(sentence, domain, convention)
    assert (t.formula is None) != (t.error is None)
    return None if t.formula is None else str(t.formula)


# -- item 1: never crash ----------------------------------------------------------------------


def test_the_issue_typo_no_longer_crashes_and_is_not_guessed(drone: Domain) -> None:
    sentence = "go to the yellow room through the twond floor"
    for convention in (DRONE_COMMANDS, SAFETY_CHIP):
        t = translate_offline(sentence, drone, convention)
        assert t.formula is None and t.error is not None
        assert t.error.startswith("could not read 'twond': a number word run together")
    said = translate_offline("go to the yellow room through the 2nd floor", drone, DRONE_COMMANDS)
    assert str(said.formula) == "F(second_floor & F yellow_room)"
    assert said.reading is not None and "read 2nd -> second" in said.reading


@pytest.mark.parametrize(
    ("text", "fused"),
    [
        ("go to the onest floor", ["onest"]),
        ("threerd floor, then the twond floor and the fourth", ["threerd", "twond"]),
        ("go to the fourth room, then the ninth", []),
        ("go to the 3st floor", []),
    ],
)
def test_a_number_run_together_with_an_ordinal_ending_is_named(text: str, fused: list[str]) -> None:
    assert fused_ordinals(text) == fused


def test_an_error_inside_the_translator_fails_the_sentence(
    drone: Domain, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: object) -> None:
        raise IndexError("list index out of range")

    monkeypatch.setattr("governor.ltl.english.translate.lift", broken)
    t = translate_offline("go to the red room", drone, SAFETY_CHIP)
    assert t.formula is None
    assert t.error == "internal error: IndexError: list index out of range"


OURS = (
    "fly to the red room and then to the third floor",
    "head for landmark two, but keep away from the blue room until you get there",
    "go through the orange room to reach the first floor.",
    "never enter the purple room; the green room must be visited at some point",
    "whenever you reach landmark one, go to the second floor at the very next step",
    "visit the yellow room twice, then stay on the first floor",
    "avoid landmark three and go to the green room",
)


def _mutate(text: str, rng: random.Random) -> str:
    words = text.split()
    kind = rng.randrange(6)
    k = rng.randrange(len(words))
    if kind == 0 and len(words[k]) > 2:  # a typo: two letters swapped or one dropped
        w = words[k]
        j = rng.randrange(len(w) - 1)
        words[k] = (
            w[:j] + w[j + 1] + w[j] + w[j + 2 :] if rng.random() < 0.5 else w[:j] + w[j + 1 :]
        )
    elif kind == 1:  # truncated
        words = words[: max(1, k)]
    elif kind == 2:  # a doubled word
        words.insert(k, words[k])
    elif kind == 3:  # punctuation
        words.insert(k, rng.choice([",", ".", ";", "!", "(", ")", "--", "'", "?"]))
    elif kind == 4:  # a word dropped
        del words[k]
    else:  # two sentences run together
        words += rng.choice(OURS).split()
    return " ".join(words)


@pytest.mark.parametrize("convention", [SAFETY_CHIP, DRONE_COMMANDS])
def test_seeded_mutations_only_fail_or_translate(drone: Domain, convention: str) -> None:
    rng = random.Random(23)
    for _ in range(150):
        text = rng.choice(OURS)
        for _ in range(rng.randrange(1, 4)):
            text = _mutate(text, rng)
        read(text, drone, convention)  # no exception; formula xor error


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("abcdefgilmnorstuvwy ,.;'-()0123")), max_size=80))
def test_any_text_only_fails_or_translates(text: str) -> None:
    domain = load_domain_file(DRONE)
    for convention in (SAFETY_CHIP, DRONE_COMMANDS):
        read(text, domain, convention)


# -- item 2: precision first: the issue's wrong readings ----------------------------------------


def test_avoid_binds_its_own_clause_only(drone: Domain) -> None:
    rooms = user_domain("rooms", [], ["red_room", "green_room"])
    for domain in (drone, rooms):
        t = translate_offline("avoid the red room and go to the green room", domain, SAFETY_CHIP)
        assert t.formula is None and t.error and "a negation binds its own clause only" in t.error
    # with the drone conventions it is right: the goal reached, not in the avoided room
    assert (
        read("avoid the red room and go to the green room", drone, DRONE_COMMANDS)
        == "F(green_room & !red_room)"
    )


def test_the_very_next_time_instant_is_not_dropped() -> None:
    domain = user_domain("d", ["alarm", "beep"])
    got = read(
        "whenever the alarm occurs the beep must occur at the very next time instant", domain
    )
    assert got in (None, "G(alarm -> X beep)")
    assert got is not None  # it is read, with its timing


def test_a_fourth_visit_is_not_dropped() -> None:
    domain = user_domain("d", [], ["library", "lobby"])
    t = translate_offline(
        "visiting the library for the fourth time will lock it for future visits", domain
    )
    assert t.formula is None


def test_green_area_by_avoiding_red_area(drone: Domain) -> None:
    sentence = "go to the green area by avoiding red area"
    assert read(sentence, drone) is None
    got = read(sentence, drone, DRONE_COMMANDS)
    assert got == "F(green_room & !red_room)"
    t = translate_offline(sentence, drone, DRONE_COMMANDS)
    assert t.reading and "read green area -> green room" in t.reading


STAY_ON_A_FLOOR = "G first_floor | G second_floor | G third_floor"


def test_without_changing_floors_is_read_where_the_domain_declares_floors(drone: Domain) -> None:
    assert drone.groups == {"floor": ("first_floor", "second_floor", "third_floor")}
    for convention in (SAFETY_CHIP, DRONE_COMMANDS):
        t = translate_offline(
            "go to landmark two without changing floors, then to the red room", drone, convention
        )
        assert str(t.formula) == f"F(landmark_2 & F red_room) & ({STAY_ON_A_FLOOR})"
        assert t.reading and "not changing floors: the run stays on the floor it starts on" in (
            t.reading
        )
    assert read("go to landmark two without changing floors", drone, DRONE_COMMANDS) == (
        f"F landmark_2 & ({STAY_ON_A_FLOOR})"
    )
    assert read("fly to the blue room, staying on the same floor", drone, DRONE_COMMANDS) == (
        f"F blue_room & ({STAY_ON_A_FLOOR})"
    )
    # the issue's wrong reading G !landmark_2 is gone: a run on one floor that never reaches
    # landmark two does not satisfy the reading
    for text in ("without changing floors", "go to the blue room without changing floors and"
                 " never changing floors"):  # fmt: skip
        t = translate_offline(text, drone)
        assert t.formula is None and t.error and "expected a command with it" in t.error


def test_without_changing_floors_fails_where_the_domain_says_no_floors() -> None:
    rooms = user_domain("rooms", ["red_room", "first_floor", "second_floor"])
    for convention in (SAFETY_CHIP, DRONE_COMMANDS):
        t = translate_offline("go to the red room without changing floors", rooms, convention)
        assert t.formula is None and t.error is not None
        assert "the rooms domain declares no group 'floor'" in t.error
        assert "which propositions are the floors is not known" in t.error


def test_an_avoidance_set_off_by_a_comma_is_not_read(drone: Domain) -> None:
    t = translate_offline("fly to the red room , while avoiding landmark three", drone)
    assert t.formula is None and t.error and "set off by a comma" in t.error
    assert read("fly to the red room while avoiding landmark three", drone, DRONE_COMMANDS) == (
        "F(red_room & !landmark_3)"
    )


def test_after_with_a_command_is_no_reaction(drone: Domain) -> None:
    sentence = "navigate to the purple room after going to the second floor"
    rooms = user_domain("rooms", [], ["purple_room", "second_floor"])
    for domain in (drone, rooms):
        t = translate_offline(sentence, domain, SAFETY_CHIP)
        assert t.formula is None and t.error and "'after'" in t.error
    assert read(sentence, drone, DRONE_COMMANDS) == "F(second_floor & F purple_room)"


def test_but_first_is_not_read_in_text_order(drone: Domain) -> None:
    t = translate_offline("go to the red room but first go to the blue room", drone, SAFETY_CHIP)
    assert t.formula is None and t.error and "first" in t.error
    got = read("go to the red room but first go to the blue room", drone, DRONE_COMMANDS)
    assert got == "F(blue_room & F red_room)"


def test_a_detached_nt_is_not() -> None:
    domain = user_domain("d", ["alarm"], ["lab", "hall"])
    assert read("do n't enter the lab until the alarm", domain) == "!agent_at(lab) U alarm"


# -- item 3: looser grounding, declared --------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "said", "fix"),
    [
        ("go to the green area", "go to the green room", "green area -> green room"),
        ("then the blue one.", "then the blue room.", "blue one -> blue room"),
        ("go through the blue to the red room", "go through the blue room to the red room",
         "the blue -> blue room"),
        ("reach the secnod floor", "reach the second floor", "secnod -> second"),
        ("the purpel room", "the purple room", "purpel -> purple"),
        ("go to the 1st floor", "go to the first floor", "1st -> first"),
        ("go to the onest floor", "go to the onest floor", None),
        ("go to the 1nd floor", "go to the 1nd floor", None),
        ("pass landmark three", "pass landmark 3", None),
    ],
)  # fmt: skip
def test_corrections_are_made_and_named(
    drone: Domain, text: str, said: str, fix: str | None
) -> None:
    got, fixes = correct(text, drone)
    assert got == said
    assert (fix in fixes) if fix else fixes == ()


def test_no_correction_when_two_words_are_near_or_a_word_is_an_inflection() -> None:
    domain = user_domain("d", ["cat_seen", "car_seen", "sheep_escaped"])
    assert correct("the cax is here", domain) == ("the cax is here", ())  # too short
    assert correct("a sheep escapes", domain) == ("a sheep escapes", ())  # an inflection
    two = user_domain("d", [], ["stable", "staple"])
    assert correct("go to the stabel", two)[1] in ((), ("stabel -> stable",))
    assert within("twond", "second", 2) is False and within("secnod", "second", 1)


def test_distinctive_words_only_for_names_with_a_head_noun() -> None:
    domain = user_domain("d", ["door_open", "light_on"])
    assert correct("if the door is open", domain) == ("if the door is open", ())


# -- item 4: the drone-commands convention ---------------------------------------------------


@pytest.mark.parametrize(
    ("sentence", "formula", "family"),
    [
        ("fly to the red room, then to landmark three", "F(red_room & F landmark_3)", "route"),
        ("go through the orange room to the first floor", "F(orange_room & F first_floor)", "route"),
        ("reach landmark one via the blue room", "F(blue_room & F landmark_1)", "route"),
        ("go to the third floor while avoiding the red room", "F(third_floor & !red_room)", "avoid_at"),
        ("keep away from the red room until you reach landmark two", "!red_room U landmark_2",
         "avoid_until"),
        ("head to landmark two avoiding the blue room ; once you have reached landmark two you "
         "may go to the blue room", "!blue_room U landmark_2", "avoid_until"),
        ("go to the green room without leaving the second floor", "F green_room & G second_floor",
         "stay"),
        ("stay on the first floor and go to the yellow room", "F yellow_room & G first_floor",
         "stay"),
        ("go to the purple room", "F purple_room", "visit"),
    ],
)  # fmt: skip
def test_drone_command_shapes(drone: Domain, sentence: str, formula: str, family: str) -> None:
    t = translate_offline(sentence, drone, DRONE_COMMANDS)
    assert str(t.formula) == formula, t.error
    assert t.pattern == family
    assert t.reading and "drone_commands" in t.reading


@pytest.mark.parametrize(
    ("sentence", "word"),
    [
        ("go to the red room twice, then to landmark three", "twice"),
        ("go to the red room and immediately to landmark three", "immediately"),
        ("go to the red room quickly then to the blue room", "quickly"),
    ],
)
def test_drone_commands_name_the_words_they_could_not_place(
    drone: Domain, sentence: str, word: str
) -> None:
    t = translate_offline(sentence, drone, DRONE_COMMANDS)
    assert t.formula is None and t.error and word in t.error


def test_command_symbols_and_an_unknown_convention() -> None:
    syms, unread = command_symbols(["go", "through", "P1", "to", "P2", "swiftly"])
    assert syms == ["THROUGH", "P1", "TO", "P2", "?swiftly"] and unread == ["swiftly"]
    with pytest.raises(SpecError, match="no command shapes"):
        read_command(["P1"], SAFETY_CHIP)
