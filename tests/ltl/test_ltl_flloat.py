"""Progression against flloat's LTLf semantics (the future fragment flloat implements)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from ltl_oracle import ev, flloat_formulas, flloat_trace, to_flloat, traces

from governor.ltl import syntax as s
from governor.ltl.progression import accepts_empty, progress

# flloat.ltlf, not flloat.parser: the parser needs lark-parser, whose import warns on Python 3.11
pytest.importorskip("flloat.ltlf")

ORACLE = settings(max_examples=400, deadline=None)


def run(f: s.Formula, w: list[frozenset[str]]) -> bool:
    state = f
    for letter in w:
        state = progress(state, letter)
    return accepts_empty(state)


@ORACLE
@given(flloat_formulas(), traces())
def test_progression_agrees_with_flloat(f: s.Formula, w: list[frozenset[str]]) -> None:
    assert run(f, w) == to_flloat(f).truth(flloat_trace(w), 0)


@ORACLE
@given(flloat_formulas(), traces())
def test_textbook_evaluator_agrees_with_flloat(f: s.Formula, w: list[frozenset[str]]) -> None:
    # the second oracle is itself checked against the first on their common fragment
    assert ev(f, w) == to_flloat(f).truth(flloat_trace(w), 0)
