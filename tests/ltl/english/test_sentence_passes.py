"""The sentence-level passes of the clause grammar: permissions, anaphora, clauses about "the
previous / next one", and the rules that must not drop a timing word. Sentences written for
these tests, checked equivalent to the family's formula over one place at a time."""

from __future__ import annotations

import time
from typing import Any

import pytest

from governor.ltl.english.domain_file import user_domain
from governor.ltl.english.grammar.sentence.passes import anaphora, list_references, permissions
from governor.ltl.english.translate import translate_offline
from governor.papers.ltl_translate import equivalent, intended

PLACES = ["depot", "tower", "quay", "mess_hall"]
PROPS = ["siren", "intruder_seen"]
DOMAIN = user_domain("test", PROPS, PLACES)
CASES: list[tuple[str, list[str], str]] = [
    ("visit", ["depot", "tower"], "Visit the depot and the tower. Going to the quay first is fine."),
    ("sequenced_visit", ["depot", "tower", "quay"], "Visit the depot, the tower and the quay in this order; extra visits along the way are allowed."),
    ("future_avoid", ["depot", "quay"], "Once you have been to the depot, never go to the quay afterwards; going to the quay before that is fine."),
    ("past_avoid", ["depot", "quay"], "Go to the quay, and don't enter the depot before that."),
    ("past_avoid", ["tower", "mess_hall"], "Reach the mess hall; until then, keep off the tower."),
    ("ordered_visit", ["depot", "tower"], "Do not enter the tower until you have been to the depot; both must be visited."),
    ("ordered_visit", ["depot", "tower", "quay"], "Go to the depot, the tower and the quay, never entering one before the previous one."),
    ("ordered_visit", ["quay", "depot", "tower"], "The quay, then the depot, then the tower. Do not visit the depot before the quay or the tower before the depot, and all three have to be visited."),
    ("strictly_ordered_visit", ["depot", "tower", "quay"], "Visit the depot, the tower and the quay in this order, and never go back to any of them before reaching the next one."),
    ("strictly_ordered_visit", ["tower", "depot"], "Go to the tower, then the depot; do not enter the depot before the tower, and do not re-enter the tower before you reach the depot."),
    ("bound_delay", ["siren", "tower"], "Whenever the siren sounds, be in the tower at the next step; whenever the siren does not sound, do not be in the tower at the next step."),
    ("bound_react", ["siren", "tower"], "Whenever the siren sounds you must be in the tower, and you may only be in the tower while the siren sounds."),
    ("bound_react", ["siren", "quay"], "Be on the quay when the siren sounds and only when the siren sounds."),
    ("bounded_react", ["intruder_seen", "quay"], "Every time you see an intruder, you have 3 steps to reach the quay."),
    ("delay_react", ["siren", "tower"], "Whenever the siren sounds, go to the tower sooner or later, each time."),
    ("visit", ["depot", "tower"], "At some point reach the depot, and at some point reach the tower."),
    ("sequenced_visit", ["depot", "tower"], "Reach the depot, and the tower some time after that."),
    ("exact_rest_avoid", ["quay"], "Visit the quay once and only once."),
]  # fmt: skip


def _record(family: str, args: list[str]) -> dict[str, Any]:
    n = 1 if family == "exact_rest_avoid" else None
    n = 3 if family == "bounded_react" else n
    return {"family": family, "args": args, "n": n, "places": PLACES, "props": PROPS}


@pytest.mark.parametrize("family,args,sentence", CASES, ids=[c[2] for c in CASES])
def test_sentence_is_translated_to_its_family(family: str, args: list[str], sentence: str) -> None:
    t = translate_offline(sentence, DOMAIN)
    assert t.formula is not None, t.error
    rec = _record(family, args)
    assert equivalent(intended(rec), t.formula, rec), f"{t.formula} is not {intended(rec)}"


def test_a_permission_is_named_and_relaxes_the_order() -> None:
    t = translate_offline(
        "Visit the depot and the tower in this order; extra visits are fine.", DOMAIN
    )
    assert t.pattern == "sequenced_visit" and t.reading and "extra visits allowed" in t.reading
    assert [a.pattern for a in t.alternatives] == ["ordered_visit"]
    only = translate_offline("Going to the quay is fine.", DOMAIN)
    assert only.formula is None and only.error


@pytest.mark.parametrize(
    "sentence",
    [
        "Don't enter the tower before that.",  # "that" refers to nothing
        "Never go to the tower at the next step.",  # no rule reads the timing: not dropped
        "Go to the depot, and never return to the tower before the next one.",
        "Visit the depot, the tower and the quay, without visiting the tower first.",
    ],
)
def test_what_cannot_be_read_is_not_translated(sentence: str) -> None:
    t = translate_offline(sentence, DOMAIN)
    assert t.formula is None and t.error


def test_passes_on_symbols() -> None:
    assert anaphora(["P1", "COMMA", "NOT", "P2", "BEFORE", "REF"]) == [
        "P1", "COMMA", "NOT", "P2", "BEFORE", "P1",
    ]  # fmt: skip
    assert anaphora(["NOT", "P2", "BEFORE", "REF"])[-1] == "REF"
    assert permissions(["P1", "STOP", "P2", "BEFORE", "P1", "PERMIT"]) == (["P1", "STOP"], True)
    kept = ["P1", "STOP", "LE_4", "P1", "PERMIT"]  # "no more than four visits are allowed"
    assert permissions(kept) == (kept, False)
    order = list_references(
        ["P1", "AND", "P2", "AND", "P3", "COMMA", "NOT", "BEFORE"], ["P1", "P2", "P3"]
    )
    assert order[6:] == ["NOT", "P2", "BEFORE", "P1", "COMMA", "NOT", "P3", "BEFORE", "P2"]


def test_passes_are_linear_in_the_sentence() -> None:
    """Four times the text costs about four times the CPU (this process's own time, so other
    work on the machine does not count): a quadratic pass would cost sixteen."""

    def cpu_seconds(copies: int) -> float:
        long = "Visit the depot, and don't enter the tower before that. " * copies
        best = float("inf")
        for _ in range(2):
            start = time.process_time()
            t = translate_offline(long, DOMAIN)
            best = min(best, time.process_time() - start)
            assert t.formula is None and t.error  # more clauses than the grammar cuts: refused
        return best

    short, long = cpu_seconds(50), cpu_seconds(200)
    assert long < 8 * max(short, 0.01)
