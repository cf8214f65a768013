"""The formula tree, printing and parsing (infix and prefix)."""

from __future__ import annotations

import copy
import pickle

import pytest
from hypothesis import given, settings
from ltl_oracle import formulas, traces

from governor.errors import SpecError
from governor.ltl import operators as op
from governor.ltl import syntax as s
from governor.ltl.parser import atom, canonical_label, parse, parse_prefix, to_prefix
from governor.ltl.progression import progress

a, b, c = s.Atom("a"), s.Atom("b"), s.Atom("c")


def binarised(f: s.Formula) -> s.Formula:
    """``f`` with n-ary ``&``/``|`` nested to the right, as prefix notation writes them."""
    if isinstance(f, s.NAry):
        args = [binarised(x) for x in f.args]
        out = args[-1]
        for x in reversed(args[:-1]):
            out = type(f)((x, out))
        return out
    kids = f.children()
    return type(f)(*(binarised(k) for k in kids)) if kids else f


@settings(max_examples=300, deadline=None)
@given(formulas(past=True))
def test_print_then_parse_gives_back_the_formula(f: s.Formula) -> None:
    assert parse(str(f)) == f
    assert str(parse(str(f))) == str(f)


@settings(max_examples=200, deadline=None)
@given(formulas(past=True), traces(max_size=3))
def test_progressed_states_print_and_parse_back(f: s.Formula, w: list[frozenset[str]]) -> None:
    state = f
    for letter in w:
        state = progress(state, letter)
        assert parse(str(state)) == state


@settings(max_examples=200, deadline=None)
@given(formulas(past=True))
def test_prefix_round_trip(f: s.Formula) -> None:
    assert parse_prefix(to_prefix(f)) == binarised(f)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("G(a -> F b)", op.Always(op.Implies(a, op.Eventually(b)))),
        ("!a W b", op.WeakUntil(op.Not(a), b)),
        ("a U b & c", op.And((op.Until(a, b), c))),  # U binds tighter than &
        ("G a U b", op.Until(op.Always(a), b)),  # unary binds tighter than U
        ("a U b U c", op.Until(a, op.Until(b, c))),  # right-associative
        ("a -> b -> c", op.Implies(a, op.Implies(b, c))),
        ("a & b | c", op.Or((op.And((a, b)), c))),
        ("a | b -> c <-> a", op.Iff(op.Implies(op.Or((a, b)), c), a)),
        ("a & b & c", op.And((a, b, c))),
        ("a & (b & c)", op.And((a, op.And((b, c))))),
        ("not a and b or c", op.Or((op.And((op.Not(a), b)), c))),
        ("WX a", op.WeakNext(a)),
        ("N a", op.WeakNext(a)),
        ("[]<>a", op.Always(op.Eventually(a))),
        ("a => b", op.Implies(a, b)),
        ("a <=> b", op.Iff(a, b)),
        ("~a && b || c", op.Or((op.And((op.Not(a), b)), c))),
        ("O(a & Y b) S c", op.Since(op.Once(op.And((a, op.Yesterday(b)))), c)),
        ("Z a B H b", op.WeakSince(op.WeakYesterday(a), op.Historically(b))),
        ("true | false", op.Or((s.TRUE, s.FALSE))),
        ("is_in(apple,fridge)", s.Atom("is_in", ("apple", "fridge"))),
    ],
)
def test_parse_infix(text: str, expected: s.Formula) -> None:
    assert parse(text) == expected


def test_printing_uses_few_parentheses() -> None:
    assert str(parse("(G(a)) -> (F((b)))")) == "G a -> F b"
    assert str(parse("((a U b)) U c")) == "(a U b) U c"
    assert str(parse("!(a & b) | X(a | b)")) == "!(a & b) | X(a | b)"
    assert str(s.Atom("is_in", ("apple", "fridge"))) == "is_in(apple, fridge)"


def test_parse_prefix_safety_chip_examples() -> None:
    assert parse_prefix("G i kitchen F living_room") == parse("G(kitchen -> F living_room)")
    assert parse_prefix("G i bathroom G ! bedroom") == parse("G(bathroom -> G !bedroom)")
    assert parse_prefix("U ! bedroom living_room") == parse("!bedroom U living_room")
    assert parse_prefix("G e a X b") == parse("G(a <-> X b)")
    assert parse_prefix("| W a b R a V b c") == parse("a W b | a R b R c")
    assert parse_prefix("G ! is_in(apple, fridge)") == parse("G !is_in(apple, fridge)")
    assert to_prefix(parse("a & b & c")) == "& a & b c"


@pytest.mark.parametrize(
    ("text", "column", "found"),
    [
        ("a & & b", 5, "'&'"),
        ("G(a -> F b", 11, "the end of the text"),
        ("a b", 3, "'b'"),
        ("a @ b", 3, "'@'"),
        ("U a", 1, "'U'"),
        ("is_in(apple,)", 13, "')'"),
        ("O F a", 1, "F a"),
    ],
)
def test_infix_errors_point_at_the_spot(text: str, column: int, found: str) -> None:
    with pytest.raises(SpecError) as err:
        parse(text)
    message = str(err.value)
    assert f"at column {column}" in message and "expected" in message and found in message
    lines = message.splitlines()
    assert lines[1] == f"  {text}" and lines[2] == "  " + " " * (column - 1) + "^"


@pytest.mark.parametrize(("text", "column"), [("G i kitchen", 12), ("& a b c", 7), ("& a )", 5)])
def test_prefix_errors_point_at_the_spot(text: str, column: int) -> None:
    with pytest.raises(SpecError, match=f"expected .* at column {column}"):
        parse_prefix(text)


def test_nodes_are_immutable_hashable_and_picklable() -> None:
    f = parse("G(agent_at(kitchen) -> F is_open(fridge)) & O a S b")
    g = parse("G(agent_at(kitchen) -> F is_open(fridge)) & O a S b")
    assert f == g and hash(f) == hash(g) and f is not g
    assert len({f, g}) == 1
    assert pickle.loads(pickle.dumps(f)) == f
    assert copy.deepcopy(f) == f
    with pytest.raises(AttributeError):
        f.args = ()  # type: ignore[misc]
    assert parse("a U b") != parse("a W b")
    assert eval(repr(f), {"parse": parse}) == f


def test_atoms_and_labels() -> None:
    f = parse("G(agent_at(kitchen) -> F is_in(apple, fridge)) & kitchen")
    assert {str(x) for x in f.atoms()} == {"agent_at(kitchen)", "is_in(apple, fridge)", "kitchen"}
    assert f.atom_labels() == {"agent_at(kitchen)", "is_in(apple, fridge)", "kitchen"}
    assert atom("is_in( apple ,fridge )") == s.Atom("is_in", ("apple", "fridge"))
    assert canonical_label("is_in(apple,fridge)") == "is_in(apple, fridge)"
    with pytest.raises(SpecError, match="expected an atom"):
        atom("a & b")


@pytest.mark.parametrize(
    "build",
    [
        lambda: s.Atom("G"),
        lambda: s.Atom("true"),
        lambda: s.Atom("9lives"),
        lambda: s.Atom("at", ("two words",)),
        lambda: op.And((a,)),
        lambda: op.Not("a"),  # type: ignore[arg-type]
        lambda: op.Once(op.Eventually(a)),
        lambda: op.Since(a, op.Next(b)),
        lambda: op.Yesterday(s.END),
    ],
)
def test_bad_nodes_are_spec_errors(build: object) -> None:
    with pytest.raises(SpecError, match="expected"):
        build()  # type: ignore[operator]


def test_single_string_argument_is_one_argument() -> None:
    assert s.Atom("agent_at", "kitchen") == s.Atom("agent_at", ("kitchen",))  # type: ignore[arg-type]


def test_strong_release_reads_and_prints_in_both_syntaxes() -> None:
    f = parse("a M (b | c)")
    assert isinstance(f, op.StrongRelease) and str(f) == "a M (b | c)"
    assert parse(str(f)) == f
    assert parse_prefix("M a | b c") == f and to_prefix(f) == "M a | b c"
    assert parse("x M y M z") == op.StrongRelease(s.Atom("x"), parse("y M z"))  # to the right
