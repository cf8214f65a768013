"""Fuzzed text into every reader: LTL formulas (both syntaxes), configs, overlay files, transcripts
and traces. Only errors of governor's tree come out, and 1 MB of input is handled without echoing it (its time: ``python tests/fuzz/bench_readers.py``)."""

from __future__ import annotations

import contextlib
import json
import warnings
from pathlib import Path

import pytest
import yaml
from fuzzing import counted, fuzz_settings
from hypothesis import given
from hypothesis import strategies as st

from governor.config import ObserverConfig, from_mapping
from governor.errors import GovernorError
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


@fuzz_settings(3000)
@given(formula_text, st.booleans())
def test_ltl_readers_accept_or_refuse_with_a_spec_error(text: str, prefix: bool) -> None:
    counted("ltl text")
    try:
        f = (parse_prefix if prefix else parse)(text)
    except GovernorError:
        return
    assert parse(str(f)) == f  # what is read prints back to itself


@fuzz_settings(500)
@given(
    st.lists(st.sampled_from([*LTL_WORDS[:16], "a", "b", "(", ")"]), max_size=40).map(" ".join),
    st.lists(st.sets(st.sampled_from(["a", "b", "c"])), max_size=12),
)
def test_monitors_step_any_formula_over_any_trace(text: str, trace: list[set[str]]) -> None:
    counted("ltl monitor")
    try:
        monitor = Monitor(parse(text), "fuzzed")
    except GovernorError:
        return
    state = monitor.initial
    for labels in trace:
        state = monitor.step(state, labels)
    assert monitor.final_verdict(state) in ("ok", "pending", "violated")


yaml_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4)
    ),
    max_leaves=12,
)
OBSERVER_KEYS = ["n_candidates", "max_regenerations", "time_budget_s", "arbitration", "weights"]
OBSERVER_KEYS += ["quorum", "min_confidence", "stop_on_repeat", "colour"]


@fuzz_settings(1500)
@given(st.dictionaries(st.sampled_from(OBSERVER_KEYS), yaml_values, max_size=5))
def test_observer_configs_from_files_are_checked(data: dict) -> None:
    counted("config")
    try:
        config = from_mapping(ObserverConfig, data, where="fuzz.yaml")
    except GovernorError:
        return
    assert isinstance(config.max_regenerations, int) and not isinstance(config.stop_on_repeat, str)


RULE_KEYS = ["name", "feature", "bounds", "epsilon", "kind", "condition", "scope", "priority"]
RULE_KEYS += ["severity", "descriptor", "feedback", "target", "calibration", "extra"]
rule = st.fixed_dictionaries(
    {"name": st.text(max_size=8), "feature": st.sampled_from(["word_count", "tone", "x"])},
    optional={k: yaml_values for k in RULE_KEYS[2:]}
    | {"descriptor": st.sampled_from(["{value}", "{value.x}", "{value[0]}", "{", "{nope}"])},
)


@fuzz_settings(1500)
@given(st.one_of(yaml_values, st.fixed_dictionaries({"overlays": st.lists(rule, max_size=3)})))
def test_overlay_files_are_checked(data: object) -> None:
    counted("overlays")
    with contextlib.suppress(GovernorError):
        parse_overlays(data, where="fuzz.yaml")  # type: ignore[arg-type]


@fuzz_settings(1000)
@given(st.binary(max_size=400) | st.text(max_size=400).map(str.encode))
def test_config_files_of_any_bytes_are_checked(
    tmp_path_factory: pytest.TempPathFactory, raw: bytes
) -> None:
    counted("config file")
    path = tmp_path_factory.mktemp("cfg") / "c.yaml"
    path.write_bytes(raw)
    with contextlib.suppress(GovernorError):
        load_mapping(path)


transcript_line = st.one_of(
    st.builds(
        lambda r, c: json.dumps({"role": r, "content": c}),
        st.sampled_from(["user", "assistant", "system", "tool", 3]),
        st.text(max_size=40) | st.integers(),
    ),
    st.text(max_size=60),
)


@fuzz_settings(1000)
@given(st.lists(transcript_line, max_size=8), st.binary(max_size=8))
def test_transcripts_of_any_content_are_checked(
    tmp_path_factory: pytest.TempPathFactory, lines: list[str], tail: bytes
) -> None:
    counted("transcript")
    path = tmp_path_factory.mktemp("tr") / "t.jsonl"
    path.write_bytes("\n".join(lines).encode("utf-8", "surrogatepass") + tail)
    with contextlib.suppress(GovernorError):
        read_transcript(path)


@fuzz_settings(1000)
@given(st.lists(st.one_of(yaml_values.map(json.dumps), st.text(max_size=50)), max_size=6))
def test_traces_of_any_content_are_checked(
    tmp_path_factory: pytest.TempPathFactory, lines: list[str]
) -> None:
    counted("trace")
    path = tmp_path_factory.mktemp("trace") / "t.jsonl"
    path.write_text("\n".join(lines), encoding="utf-8", errors="surrogateescape")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with contextlib.suppress(GovernorError):
            read_trace(path)


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
