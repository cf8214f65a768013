"""Fuzzed text into every reader: LTL formulas (both syntaxes), configs, overlay files, transcripts
and traces. Only errors of governor's tree come out, and 1 MB of input is handled without echoing it (its time: ``python tests/fuzz/bench_readers.py``).

A reader that refused everything would pass a test that only checks the kind of its errors, so
each fuzz test also counts what was accepted and requires a share of it, and valid inputs of each
reader are checked to be accepted, and read right."""

from __future__ import annotations

import json
import warnings
from collections import Counter
from pathlib import Path

import pytest
import yaml
from fuzzing import counted, fuzz_settings
from hypothesis import given
from hypothesis import strategies as st

from governor.config import ObserverConfig, from_mapping
from governor.errors import GovernorError, SpecError
from governor.files import load_mapping
from governor.ltl.monitor import Monitor
from governor.ltl.parser import parse, parse_prefix
from governor.overlays.loader import parse_overlays
from governor.trace import read_trace
from governor.worlds.smalltalk.audit import read_transcript

LTL_WORDS = ["G", "F", "X", "WX", "U", "W", "R", "S", "B", "O", "H", "Y", "Z", "!", "&", "|"]
LTL_WORDS += ["->", "<->", "(", ")", "a", "b", "is_in(x, y)", "true", "false", "i", "e", ",", "  "]
formula_text = st.one_of(
    st.lists(st.sampled_from(LTL_WORDS), max_size=60).map(" ".join),
    st.text(max_size=200),
    st.integers(0, 400).map(lambda n: "G(" * n + "a" + ")" * n),
    st.integers(0, 2000).map(lambda n: "! " * n + "a"),
)


def accepted_share(outcomes: Counter[bool]) -> float:
    """The share of fuzzed inputs a reader accepted (each test asks for some)."""
    assert outcomes.total() > 0, "no input was tried"
    return outcomes[True] / outcomes.total()


def test_ltl_readers_accept_or_refuse_with_a_spec_error() -> None:
    outcomes: Counter[bool] = Counter()

    @fuzz_settings(1000)
    @given(formula_text, st.booleans())
    def read(text: str, prefix: bool) -> None:
        counted("ltl text")
        try:
            f = (parse_prefix if prefix else parse)(text)
        except GovernorError:
            outcomes[False] += 1
            return
        outcomes[True] += 1
        assert parse(str(f)) == f  # what is read prints back to itself

    read()
    assert accepted_share(outcomes) > 0.05


@pytest.mark.parametrize(
    ("text", "prefix", "printed"),
    [
        ("G (a -> X b)", False, "G(a -> X b)"),
        ("a U b", False, "a U b"),
        ("H a S b", False, "H a S b"),
        ("G !is_in(x, y)", False, "G !is_in(x, y)"),
        ("G(" * 100 + "a" + ")" * 100, False, "G " * 99 + "G a"),
        ("! " * 40 + "a", False, "!" * 40 + "a"),
        ("G -> a X b", True, "G(a -> X b)"),
        ("U a b", True, "a U b"),
    ],
)
def test_ltl_readers_accept_valid_formulas(text: str, prefix: bool, printed: str) -> None:
    f = (parse_prefix if prefix else parse)(text)
    assert str(f) == printed and parse(printed) == f


def test_monitors_step_any_formula_over_any_trace() -> None:
    outcomes: Counter[bool] = Counter()

    @fuzz_settings(500)
    @given(
        st.lists(st.sampled_from([*LTL_WORDS[:16], "a", "b", "(", ")"]), max_size=40).map(" ".join),
        st.lists(st.sets(st.sampled_from(["a", "b", "c"])), max_size=12),
    )
    def step(text: str, trace: list[set[str]]) -> None:
        counted("ltl monitor")
        try:
            monitor = Monitor(parse(text), "fuzzed")
        except GovernorError:
            outcomes[False] += 1
            return
        outcomes[True] += 1
        state = monitor.initial
        for labels in trace:
            state = monitor.step(state, labels)
        assert monitor.final_verdict(state) in ("ok", "pending", "violated")

    step()
    assert accepted_share(outcomes) > 0.02  # random words seldom make a formula


def test_a_monitor_of_a_valid_formula_gives_its_verdicts() -> None:
    monitor = Monitor(parse("G (a -> F b)"), "valid")
    state = monitor.initial
    for labels, verdict in (({"a"}, "violated"), ({"b"}, "ok"), ({"a"}, "violated")):
        state = monitor.step(state, labels)
        assert monitor.final_verdict(state) == verdict
    never = Monitor(parse("G !c"), "never")
    assert never.final_verdict(never.step(never.initial, {"c"})) == "violated"
    assert never.final_verdict(never.step(never.initial, {"a"})) == "ok"


yaml_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4)
    ),
    max_leaves=12,
)
OBSERVER_KEYS = ["n_candidates", "max_regenerations", "time_budget_s", "arbitration", "weights"]
OBSERVER_KEYS += ["quorum", "min_confidence", "stop_on_repeat", "colour"]


def test_observer_configs_from_files_are_checked() -> None:
    outcomes: Counter[bool] = Counter()

    valid = st.fixed_dictionaries(
        {},
        optional={
            "n_candidates": st.integers(1, 8),
            "max_regenerations": st.integers(0, 5),
            "stop_on_repeat": st.booleans(),
            "min_confidence": st.floats(0.0, 1.0),
        },
    )

    @fuzz_settings(800)
    @given(st.dictionaries(st.sampled_from(OBSERVER_KEYS), yaml_values, max_size=5) | valid)
    def read(data: dict) -> None:
        counted("config")
        try:
            config = from_mapping(ObserverConfig, data, where="fuzz.yaml")
        except GovernorError:
            outcomes[False] += 1
            return
        outcomes[True] += 1
        assert isinstance(config.max_regenerations, int)
        assert not isinstance(config.stop_on_repeat, str)

    read()
    assert accepted_share(outcomes) > 0.02  # the empty mapping at least


def test_a_valid_observer_config_is_read() -> None:
    data = {"n_candidates": 3, "max_regenerations": 2, "stop_on_repeat": False, "quorum": 0.75}
    config = from_mapping(ObserverConfig, data, where="valid.yaml")
    assert (config.n_candidates, config.max_regenerations) == (3, 2)
    assert config.stop_on_repeat is False and config.quorum == 0.75


RULE_KEYS = ["name", "feature", "bounds", "epsilon", "kind", "condition", "scope", "priority"]
RULE_KEYS += ["severity", "descriptor", "feedback", "target", "calibration", "extra"]
# A rule's fields are small values: a rule has up to 14 of them, and drawing deep values for each
# took most of this test's time (the reader's checks are per field, not per depth).
small_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=12), inner, max_size=3)
    ),
    max_leaves=4,
)
rule = st.fixed_dictionaries(
    {"name": st.text(max_size=8), "feature": st.sampled_from(["word_count", "tone", "x"])},
    optional={k: small_values for k in RULE_KEYS[2:]}
    | {"descriptor": st.sampled_from(["{value}", "{value.x}", "{value[0]}", "{", "{nope}"])},
)


VALID_RULE = {"name": "short", "feature": "word_count", "bounds": {"max": 50}, "epsilon": 0}
VALID_RULE["kind"] = "prohibitory"
valid_rule = st.fixed_dictionaries(
    {k: st.just(v) for k, v in VALID_RULE.items()}, optional={"priority": st.integers(0, 9)}
)


def test_overlay_files_are_checked() -> None:
    outcomes: Counter[bool] = Counter()

    @fuzz_settings(400)
    @given(
        st.one_of(
            yaml_values,
            st.fixed_dictionaries({"overlays": st.lists(rule, max_size=3)}),
            st.fixed_dictionaries({"overlays": st.lists(valid_rule, min_size=1, max_size=3)}),
        )
    )
    def read(data: object) -> None:
        counted("overlays")
        try:
            overlays = parse_overlays(data, where="fuzz.yaml")  # type: ignore[arg-type]
        except GovernorError:
            outcomes[False] += 1
            return
        outcomes[True] += 1
        assert isinstance(data, dict) and len(overlays) == len(data["overlays"])

    read()
    assert accepted_share(outcomes) > 0.05


def test_a_valid_overlay_file_is_read() -> None:
    (made,) = parse_overlays({"overlays": [VALID_RULE]}, where="valid.yaml")
    assert (made.name, made.feature, made.bounds.max, made.kind) == (
        "short",
        "word_count",
        50.0,
        "prohibitory",
    )
    with pytest.raises(SpecError, match="non-empty list"):
        parse_overlays({"overlays": []}, where="empty.yaml")


def test_config_files_of_any_bytes_are_checked(tmp_path_factory: pytest.TempPathFactory) -> None:
    outcomes: Counter[bool] = Counter()

    @fuzz_settings(1000)
    @given(
        st.binary(max_size=400)
        | st.text(max_size=400).map(str.encode)
        | st.dictionaries(st.text(max_size=12), yaml_values, max_size=4).map(
            lambda d: yaml.safe_dump(d).encode()
        )
    )
    def read(raw: bytes) -> None:
        counted("config file")
        path = tmp_path_factory.mktemp("cfg") / "c.yaml"
        path.write_bytes(raw)
        try:
            data = load_mapping(path)
        except GovernorError:
            outcomes[False] += 1
            return
        outcomes[True] += 1
        assert isinstance(data, dict)

    read()
    assert accepted_share(outcomes) > 0.05


def test_a_valid_config_file_is_read(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("n_candidates: 3\nweights: {a: 1.5}\n", encoding="utf-8")
    assert load_mapping(path) == {"n_candidates": 3, "weights": {"a": 1.5}}


transcript_line = st.one_of(
    st.builds(
        lambda r, c: json.dumps({"role": r, "content": c}),
        st.sampled_from(["user", "assistant", "system", "tool", 3]),
        st.text(max_size=40) | st.integers(),
    ),
    st.text(max_size=60),
)


valid_transcript_line = st.builds(
    lambda r, c: json.dumps({"role": r, "content": c}),
    st.sampled_from(["user", "assistant", "system"]),
    st.text(max_size=40),
)


def test_transcripts_of_any_content_are_checked(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    outcomes: Counter[bool] = Counter()

    @fuzz_settings(1000)
    @given(
        st.lists(transcript_line, max_size=8) | st.lists(valid_transcript_line, max_size=8),
        st.binary(max_size=8) | st.just(b""),
    )
    def read(lines: list[str], tail: bytes) -> None:
        counted("transcript")
        path = tmp_path_factory.mktemp("tr") / "t.jsonl"
        path.write_bytes("\n".join(lines).encode("utf-8", "surrogatepass") + tail)
        try:
            turns = read_transcript(path)
        except GovernorError:
            outcomes[False] += 1
            return
        outcomes[True] += 1
        assert any(t.role == "assistant" for t in turns)

    read()
    assert accepted_share(outcomes) > 0.05


def test_a_valid_transcript_is_read(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    lines = [("system", "Be kind."), ("user", "Hi."), ("assistant", "Hello!"), ("user", "Bye.")]
    path.write_text("".join(json.dumps({"role": r, "content": c}) + "\n" for r, c in lines))
    assert [(t.role, t.text) for t in read_transcript(path)] == lines[1:]


decision_line = st.builds(
    lambda e, t: json.dumps({"type": "decision", "episode": e, "t": t}),
    st.text(max_size=8),
    st.integers(0, 99),
)


def test_traces_of_any_content_are_checked(tmp_path_factory: pytest.TempPathFactory) -> None:
    outcomes: Counter[bool] = Counter()

    @fuzz_settings(600)
    @given(
        st.lists(st.one_of(yaml_values.map(json.dumps), st.text(max_size=50)), max_size=6)
        | st.lists(decision_line, max_size=6)
    )
    def read(lines: list[str]) -> None:
        counted("trace")
        path = tmp_path_factory.mktemp("trace") / "t.jsonl"
        path.write_text("\n".join(lines), encoding="utf-8", errors="surrogateescape")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                decisions, _ = read_trace(path)
            except GovernorError:
                outcomes[False] += 1
                return
        outcomes[True] += 1
        assert all(isinstance(d, dict) for d in decisions)

    read()
    assert accepted_share(outcomes) > 0.05


def test_a_valid_trace_is_read(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    lines = [{"type": "decision", "episode": "e", "t": t} for t in range(3)]
    path.write_text("".join(json.dumps(d) + "\n" for d in lines), encoding="utf-8")
    decisions, summaries = read_trace(path)
    assert [(d["episode"], d["t"]) for d in decisions] == [("e", 0), ("e", 1), ("e", 2)]
    assert summaries == {}


MEGABYTE = 1_000_000


@pytest.mark.parametrize(
    "name, text",
    [
        ("infix whitespace", "a" + " " * MEGABYTE),
        ("infix chain", " & ".join(["p"] * (MEGABYTE // 4))),
        ("prefix chain", "& a " * (MEGABYTE // 4) + "b"),
        ("nesting", "(" * (MEGABYTE // 2) + "a" + ")" * (MEGABYTE // 2)),
    ],
)
def test_a_megabyte_of_formula_is_refused_without_echo(name: str, text: str) -> None:
    counted("megabyte")
    with pytest.raises(GovernorError, match="at most 100,000 characters") as err:
        (parse_prefix if name.startswith("prefix") else parse)(text)
    assert len(str(err.value)) < 200


@pytest.mark.parametrize("kind", ["yaml", "transcript", "trace"])
def test_a_megabyte_file_is_handled_without_echo(tmp_path: Path, kind: str) -> None:
    counted("megabyte")
    word = "x" * MEGABYTE
    path = tmp_path / ("c.yaml" if kind == "yaml" else "t.jsonl")
    if kind == "yaml":
        path.write_text(yaml.safe_dump({"max_regenerations": word}), encoding="utf-8")
    elif kind == "transcript":
        path.write_text(json.dumps({"role": "assistant", "content": word}) + "\n", encoding="utf-8")
    else:
        path.write_text(json.dumps({"type": "decision", "episode": word, "t": 0}) + "\n")
    try:
        if kind == "yaml":
            from_mapping(ObserverConfig, load_mapping(path), where=str(path))
        elif kind == "transcript":
            read_transcript(path)
        else:
            read_trace(path)
    except GovernorError as exc:
        assert len(str(exc)) < 1000  # the input is never echoed whole
