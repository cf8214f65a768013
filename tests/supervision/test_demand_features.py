"""The demand feature family and the shipped demand overlays."""

from __future__ import annotations

import pytest

from governor.overlays.features import Turn, measure
from governor.overlays.features.demand import demand_score, directive_count, is_silence
from governor.supervision import demand_overlays

CALM = (Turn("user", "That was kind of fun."),)
UPSET = (Turn("user", "No. Stop asking me!"),)
ESCALATED = (Turn("user", "Leave me alone! I hate this place!"),)


@pytest.mark.parametrize(
    ("text", "count"),
    [
        ("Take a deep breath. Now sit down.", 2),
        ("Please look at me.", 1),
        ("You need to calm down.", 1),
        ("Let's draw a cat.", 1),
        ("Let's see, I went to the park.", 0),
        ("Can you breathe with me?", 0),  # a question, not a directive
        ("I like cats.", 0),
        ("[silence]", 0),
    ],
)
def test_directives(text: str, count: int) -> None:
    assert directive_count(text) == count


def test_silence_and_demand() -> None:
    assert is_silence("[sits quietly]") and is_silence("...") and not is_silence("ok...")
    assert demand_score("[silence]") == 0.0
    quiet, busy = "I'm here.", "What happened? Tell me about it. Why are you upset? Sit down."
    assert demand_score(quiet) < 0.1 < 0.5 < demand_score(busy) <= 1.0


def test_pacing_reads_the_assistants_recent_turns() -> None:
    ctx = (
        Turn("user", "hi"),
        Turn("assistant", "How are you? What did you do?"),
        Turn("user", "stuff"),
        Turn("assistant", "Tell me more. What stuff?"),
        Turn("user", "meh"),
    )
    assert measure("pacing", ctx, "Okay.").value == pytest.approx((2 + 2 + 0) / 3)
    assert measure("pacing", (), "Okay?").value == 1.0


def test_demand_overlays_lower_demand_as_affect_worsens() -> None:
    overlays = demand_overlays()
    assert {o.feature for o in overlays} >= {"word_count", "directives", "questions", "pacing"}

    def admitted(ctx: tuple[Turn, ...], text: str) -> bool:
        return all(o.evaluate(ctx, text).admissible for o in overlays)

    medium = "Let's draw something together. Pick a color you like."
    long_question = "Do you want to tell me what happened in class today and how it felt?"
    assert admitted(CALM, medium) and admitted(CALM, long_question)
    assert not admitted(UPSET, medium)  # a directive to an upset user
    assert admitted(UPSET, "Want to draw?")
    assert not admitted(ESCALATED, "Want to draw?")  # no questions when escalated
    assert admitted(ESCALATED, "I'm here.") and admitted(ESCALATED, "[silence]")


def test_the_demand_thresholds_are_the_recorded_human_quantiles() -> None:
    by_name = {o.name: o for o in demand_overlays()}
    assert by_name["upset_length"].bounds.max == 11.0  # human median word count
    assert by_name["escalated_length"].bounds.max == 6.0  # human 25th percentile
