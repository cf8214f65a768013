"""The Lang2LTL-style translator through a scripted backend: every step, validation, the retry,
the offline fallback, and the call count."""

from __future__ import annotations

import json

import pytest

from governor.backends import ScriptedBackend
from governor.errors import BackendError, BackendTimeout
from governor.ltl import parse
from governor.ltl import patterns as p
from governor.ltl.domain import Domain
from governor.ltl.english.lang2ltl import offer, read_formula, translate_all, translate_llm
from governor.ltl.english.translate import translate_offline
from governor.ltl.operators import And
from governor.ltl.syntax import Atom
from governor.usage import metered
from governor.worlds.household.ltl_domain import household_domain


@pytest.fixture(scope="module")
def domain() -> Domain:
    return household_domain("mobile_manip/0_9")


def test_happy_path_across_the_four_steps(domain: Domain) -> None:
    sentence = "wash up in the bathroom before you raid the fridge"
    backend = ScriptedBackend(
        [
            '["wash up in the bathroom", "raid the fridge"]',
            '{"wash up in the bathroom": "agent_at(bathroom)", "raid the fridge": "is_open(fridge)"}',
            "!P2 W P1",
        ]
    )
    with metered() as meter:
        t = translate_llm(sentence, domain, backend)
    assert meter.total.calls == 3 and backend.remaining == 0
    assert t.error is None and t.method == "llm"
    assert t.formula == p.precedence("agent_at(bathroom)", "is_open(fridge)")
    assert t.pattern == "precedence"
    assert t.lifted == "P1 before you P2" and t.lifted_formula == "!P2 W P1"
    assert t.grounding == {
        "wash up in the bathroom": "agent_at(bathroom)",
        "raid the fridge": "is_open(fridge)",
    }
    extract, ground, lifted = backend.requests
    assert extract[-1].content == f"Rule: {sentence}"
    assert "- is_open(microwave)" in ground[0].content  # the domain's propositions are offered
    assert lifted[-1].content == "Rule: P1 before you P2"


def test_offline_grounding_first_and_the_model_only_for_the_rest(domain: Domain) -> None:
    backend = ScriptedBackend(
        [
            '["open the fridge", "raid the pantry shelf"]',
            '{"raid the pantry shelf": "!agent_at(kitchen)"}',
            "G(P1 -> F P2)",
        ]
    )
    t = translate_llm("if you open the fridge, raid the pantry shelf later", domain, backend)
    assert t.formula == p.delayed_reaction("is_open(fridge)", "!agent_at(kitchen)")
    assert json.loads(backend.requests[1][-1].content) == ["raid the pantry shelf"]


def test_everything_grounded_offline_skips_the_grounding_call(domain: Domain) -> None:
    backend = ScriptedBackend(['["go to the bathroom"]', "at_most(P1, 2)"])
    with metered() as meter:
        t = translate_llm("go to the bathroom at most twice", domain, backend)
    assert meter.total.calls == 2
    assert t.formula == p.upper_restricted_avoidance("agent_at(bathroom)", 2)
    assert t.pattern == "upper_rest_avoid"


def test_a_bad_formula_is_retried_once_with_the_parser_error(domain: Domain) -> None:
    backend = ScriptedBackend(['["open the fridge"]', "G (P1 ->", "G !P1"])
    with metered() as meter:
        t = translate_llm("never open the fridge", domain, backend)
    assert meter.total.calls == 3
    assert t.formula == p.global_avoidance("is_open(fridge)")
    retry = backend.requests[-1]
    assert retry[-2].role == "assistant" and retry[-2].content == "G (P1 ->"
    assert retry[-1].content.startswith("That formula cannot be used: ")
    assert "column" in retry[-1].content


def test_a_formula_still_bad_after_the_retry_is_reported(domain: Domain) -> None:
    backend = ScriptedBackend(['["open the fridge"]', "G (P1 ->", "G(P1 -> Q9)"])
    with metered() as meter:
        t = translate_llm("never open the fridge", domain, backend)
    assert meter.total.calls == 3
    assert t.formula is None and t.method == "llm"
    assert t.error is not None and "step 3" in t.error and "after one retry" in t.error
    assert "Q9" in t.error and t.grounding == {"open the fridge": "is_open(fridge)"}


def test_a_backend_error_falls_back_to_offline_and_says_so(domain: Domain) -> None:
    sentence = "you have to enter bathroom before kitchen"
    scripts: list[list[object]] = [
        [],  # step 1 fails
        ['["have to enter bathroom", "kitchen"]'],  # step 2 (a phrase needs the model) fails
        ['["enter bathroom", "kitchen"]'],  # both grounded offline; step 3 fails
    ]
    for replies in scripts:
        backend = ScriptedBackend([*replies, BackendTimeout("no answer in 5 s")])  # type: ignore[list-item]
        with metered() as meter:
            t = translate_llm(sentence, domain, backend)
        assert meter.total.calls == len(replies) + 1 and backend.remaining == 0
        assert t.method == "offline (llm failed: no answer in 5 s)"
        assert t.formula == translate_offline(sentence, domain).formula is not None


def test_invalid_model_answers_are_errors_naming_the_step(domain: Domain) -> None:
    cases = {
        "not json": "step 1",
        '["open the oven"]': "copied from the sentence",
        "[]": "non-empty",
    }
    for reply, message in cases.items():
        t = translate_llm("never open the fridge", domain, ScriptedBackend([reply]))
        assert t.formula is None and t.error is not None and message in t.error, t.error
    backend = ScriptedBackend(['["raid the fridge"]', '{"raid the fridge": "is_open(oven)"}'])
    t = translate_llm("never raid the fridge", domain, backend)
    assert t.error is not None and t.error.startswith("step 2")
    assert "is_open(oven) is not a proposition" in t.error
    backend = ScriptedBackend(['["raid the fridge"]', '{"raid the fridge": null}'])
    t = translate_llm("never raid the fridge", domain, backend)
    assert t.error is not None and "is_open(fridge)" in t.error  # names the known ones
    backend = ScriptedBackend(['["open the fridge", "bedroom"]', "G !P1", "G(P1 -> X !P1)"])
    t = translate_llm("never open the fridge in the bedroom", domain, backend)
    assert t.error is not None and "every placeholder (P1, P2)" in t.error and "P2" in t.error
    backend = ScriptedBackend(['["bath"]'])
    t = translate_llm("never go to the bathroom", domain, backend)
    assert t.error is not None and "whole phrases" in t.error
    backend = ScriptedBackend(['["pick up the chicken"]'])
    t = translate_llm("never pick up the chicken", domain, backend)
    assert t.error is not None and "chicken" in t.error and backend.remaining == 0


def test_translate_all_with_a_backend_keeps_every_sentence(domain: Domain) -> None:
    backend = ScriptedBackend(['["open the fridge"]', "G !P1", BackendError("down")])
    with metered() as meter:
        got = translate_all(["never open the fridge", "avoid bathroom"], domain, backend)
    assert meter.total.calls == 3
    assert [t.method for t in got] == ["llm", "offline (llm failed: down)"]
    assert all(t.ok for t in got)


def test_read_formula_accepts_prefix_fences_and_count_macros() -> None:
    names = {"P1": Atom("x"), "P2": Atom("y")}
    assert read_formula("```\nW ! P2 P1\n```", names) == parse("!P2 W P1")
    assert read_formula("Formula: G(P1 -> X P2)", names) == parse("G(P1 -> X P2)")
    exact = p.exact_restricted_avoidance("P1", 2)
    assert read_formula("exactly(P1, 2) & G !P2", names) == And((exact, parse("G !P2")))


def test_large_domains_offer_only_related_propositions() -> None:
    full = household_domain()
    offered = offer(full, ["raid the fridge"])
    assert "is_open(fridge)" in offered and "agent_at(kitchen)" in offered
    assert len(offered) < len(full.propositions) and all(
        "fridge" in x or x in full.rooms for x in offered
    )
