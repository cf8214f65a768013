"""The LTL readers are bounded: deep nesting, long text and huge inputs end in a SpecError that
shows a window of the text, never in a RecursionError or a message that echoes the input."""

from __future__ import annotations

import pytest

from governor.errors import SpecError
from governor.ltl import operators as op
from governor.ltl.monitor import Monitor
from governor.ltl.parser import parse, parse_prefix
from governor.ltl.progression import progress
from governor.ltl.reader import MAX_CHARS
from governor.ltl.syntax import MAX_DEPTH, Atom


@pytest.mark.parametrize(
    "text",
    [
        "G(" * (MAX_DEPTH + 5) + "a" + ")" * (MAX_DEPTH + 5),
        "! " * 1000 + "a",
        "a U " * 400 + "b",
    ],
)
def test_deep_infix_is_a_spec_error(text: str) -> None:
    with pytest.raises(SpecError, match=f"nested at most {MAX_DEPTH} levels"):
        parse(text)


@pytest.mark.parametrize("text", ["! " * 1000 + "a", "& a " * 1000 + "b", "( " * 3000 + "a"])
def test_deep_prefix_is_a_spec_error(text: str) -> None:
    with pytest.raises(SpecError, match=r"nested at most|expected"):
        parse_prefix(text)


def test_a_deep_formula_cannot_be_built() -> None:
    f = Atom("a")
    for _ in range(MAX_DEPTH - 1):
        f = op.Next(f)
    assert f.depth == MAX_DEPTH
    assert progress(f, {"a"}).depth <= MAX_DEPTH  # the deepest formula still progresses
    with pytest.raises(SpecError, match="nested at most"):
        op.Next(f)


def test_long_text_within_the_limit_is_read() -> None:
    assert parse("a" + " " * (MAX_CHARS - 10)) == Atom("a")
    assert parse("(" * 20_000 + "a" + ")" * 20_000) == Atom("a")  # parentheses add no depth
    chain = " & ".join(f"p{i}" for i in range(5000))
    assert len(parse(chain).args) == 5000  # type: ignore[attr-defined]


def test_text_over_the_limit_is_refused_without_echo() -> None:
    with pytest.raises(SpecError) as err:
        parse("a" * (MAX_CHARS + 1))
    assert "at most 100,000 characters" in str(err.value) and len(str(err.value)) < 200


def test_an_error_deep_in_long_text_shows_a_window_with_the_caret() -> None:
    text = "a & " * 2000 + "@" + " & b" * 2000
    with pytest.raises(SpecError) as err:
        parse(text)
    message, line, caret = str(err.value).splitlines()
    assert "found '@'" in message and f"column {text.index('@') + 1}" in message
    assert len(line) < 200 and line.startswith("  ...") and line.endswith("...")
    assert line[len(caret) - 1] == "@"


def test_a_monitor_of_the_deepest_formula_steps() -> None:
    f = Atom("a")
    for _ in range(MAX_DEPTH - 2):
        f = op.Always(f) if isinstance(f, op.Next) else op.Next(f)
    monitor = Monitor(f, "deep")
    state = monitor.step(monitor.start({"a"}), {"a"})
    assert state.t == 2
