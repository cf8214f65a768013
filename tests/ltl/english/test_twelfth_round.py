"""Rules of the twelfth round, each checked on phrasings of no benchmark set. Precision first:
"whenever you get a chance" is an unhurried aside, no reaction; "visit B, but only after (once
you've been to) A" followed by the avoidance said on its own ("B is out of bounds before that")
leaves the first clause its task: the ordered visit; "one trip to A, then out, then B" and "one
visit to A, leave it, and only then B" are the one visit before B of a strict order; "each one"
is a pronoun, no count ("coming back to each one time after time" patrols); a "strictly" no
order reads ("it has to be strictly ordered" with nothing listed) fails rather than reading a
bare visit. Coverage: "a single stop at A" / "two stops at A" count visits; other counts denied after an exact one with "and" / "nor" and "a third
time"; more spans of a frame of the run ("during the brew", "throughout the rehearsal")."""

from __future__ import annotations

import pytest
from phrasing_kit import Phrasings

PLACES = ["mill", "barn", "silo", "jetty", "boathouse"]
KIT = Phrasings(PLACES, ["horn_on", "lamp_on"])

CASES: list[tuple[str, list[str], int | None, str]] = [
 # an unhurried aside: no reaction between the places
 ("visit", ["mill", "barn"], None, "Pop into the mill and the barn whenever you get a chance; both have to happen."),
 ("visit", ["silo", "jetty"], None, "Whenever you get the chance, call in at the silo and the jetty."),
 ("visit", ["boathouse"], None, "Look in on the boathouse when you have a moment."),
 # the avoidance said again on its own: the first clause is the task
 ("ordered_visit", ["mill", "barn"], None, "Visit the barn, though only once you've been to the mill; the barn is out of bounds before that."),
 ("ordered_visit", ["silo", "jetty"], None, "Head to the jetty, but only after the silo. Stay off the jetty until you have been to the silo."),
 ("ordered_visit", ["boathouse", "mill"], None, "Go to the mill, but only when you have been to the boathouse; the mill is off limits until then."),
 # one visit before the next place of a strict order, said with leaving
 ("strictly_ordered_visit", ["mill", "barn"], None, "The mill first, the barn second, strictly: one trip to the mill, then out, then the barn, and never the barn before the mill."),
 ("strictly_ordered_visit", ["silo", "jetty"], None, "Go to the silo and then the jetty, strictly in this order: one visit to the silo, leave it, and only then go to the jetty."),
 ("strictly_ordered_visit", ["boathouse", "barn"], None, "Strictly in order: one stop at the boathouse, then out, then the barn."),
 ("strictly_ordered_visit", ["mill", "barn"], None, "Go strictly from the mill to the barn: a single stop at the mill, then leave and head to the barn."),
 ("strictly_ordered_visit", ["jetty", "silo"], None, "The jetty, then the silo, strictly one after the other: only one stop at the jetty before you get to the silo, and the silo not before the jetty."),
 # a stop is a visit counted
 ("exact_rest_avoid", ["silo"], 2, "Make exactly two stops at the silo."),
 ("upper_rest_avoid", ["barn"], 1, "Allow yourself one stop in the barn at most."),
 # "each one": a pronoun
 ("patrolling", ["mill", "barn", "silo"], None, "Patrol the mill, the barn and the silo continually, coming back to each one time after time."),
 ("patrolling", ["jetty", "boathouse"], None, "Keep going round the jetty and the boathouse, returning to each one again and again."),
 # other counts denied after an exact one
 ("exact_rest_avoid", ["mill"], 2, "Go into the mill exactly 2 times, not once and not a third time."),
 ("exact_rest_avoid", ["silo"], 3, "Visit the silo three times exactly, not two times nor four."),
 # more spans of a frame of the run
 ("lower_rest_avoid", ["barn"], 3, "Go down into the barn no fewer than three times during the brew."),
 ("upper_rest_avoid", ["jetty"], 2, "During the screening, enter the jetty two times at the very most."),
 ("global_avoid", ["boathouse"], None, "Throughout the rehearsal, stay out of the boathouse."),
]  # fmt: skip


@pytest.mark.parametrize("family,args,n,sentence", CASES, ids=[c[3] for c in CASES])
def test_twelfth_round_phrasing_is_translated_to_its_family(
    family: str, args: list[str], n: int | None, sentence: str
) -> None:
    KIT.reads_as(sentence, family, args, n)


@pytest.mark.parametrize(
    "sentence",
    [
        # "strictly" with no order it can read is no bare visit
        "Go to the mill and then to the barn. It has to be strictly ordered.",
        "Visit the silo and then the jetty. It must be strictly ordered.",
        # one denied count is no restatement of the exact one
        "Enter the barn exactly once, not a second time or a third time.",
    ],
)  # fmt: skip
def test_twelfth_round_cases_fail_rather_than_guess(sentence: str) -> None:
    KIT.fails(sentence)


def test_only_after_alone_stays_the_past_avoidance() -> None:
    """Without the avoidance said again, "go to B, but only once you have been to A" stays the
    past avoidance, the ordered visit offered."""
    KIT.reads_as("Go to the barn, but only once you have been to the mill.", "past_avoid",
                 ["barn", "mill"], None)  # fmt: skip
