"""The human reference: quantiles, places, seeded draws, the YAML form, and why a draw, not a median."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import wasserstein_distance

from governor.errors import SpecError
from governor.overlays import DEFAULT_OVERLAYS, HumanReference, fit_reference, load_resources
from governor.overlays.reference import LEVELS, reference_from


def uniform_reference() -> HumanReference:
    return fit_reference({"x": np.linspace(0.0, 10.0, 1001)}, {"x": "direct"})


def test_places_follow_the_human_quantiles() -> None:
    ref = uniform_reference()
    assert ref.rank("x", 5.0) == pytest.approx(0.5)
    assert ref.rank("x", 2.5) == pytest.approx(0.25)
    assert ref.rank("x", -3.0) == 0.0 and ref.rank("x", 30.0) == 1.0
    ties = fit_reference({"t": [0.0] * 60 + list(np.linspace(0.1, 1.0, 40))}, {"t": "direct"})
    assert ties.rank("t", 0.0) == pytest.approx(0.3, abs=0.02)  # the middle of its 60% share
    assert ties.method("t") == "direct" and ties.features == ("t",)


def test_draws_are_seeded_uniform_places() -> None:
    ref = fit_reference({"a": [1.0, 2.0], "b": [3.0, 4.0]}, {"a": "direct", "b": "direct"})
    first = ref.draw(0, "dialogue one")
    assert first == ref.draw(0, "dialogue one") and set(first) == {"a", "b"}
    assert first != ref.draw(0, "dialogue two") and first != ref.draw(1, "dialogue one")
    draws = np.array([ref.draw(0, str(i))["a"] for i in range(2000)])
    assert draws.min() >= 0.0 and draws.max() <= 1.0 and abs(draws.mean() - 0.5) < 0.03
    assert ref.distance({"a": 1.0, "b": 4.0}, {"a": 0.0, "b": 1.0}) == pytest.approx(0.0)


def test_the_yaml_form_round_trips_and_bad_sections_name_the_problem() -> None:
    ref = uniform_reference()
    again = reference_from(ref.to_dict(), "here")
    assert again.features == ref.features and again.levels == LEVELS
    assert again.rank("x", 7.5) == pytest.approx(ref.rank("x", 7.5), abs=1e-3)
    with pytest.raises(SpecError, match="here: features: human_reference"):
        reference_from({"levels": LEVELS}, "here")
    bad = ref.to_dict()
    bad["features"]["x"]["quantiles"] = list(reversed(bad["features"]["x"]["quantiles"]))
    with pytest.raises(SpecError, match="non-decreasing"):
        reference_from(bad, "here")


def pick(ref: HumanReference, base: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """Per row of candidates, the one whose place is nearest the row's target place."""
    places = np.vectorize(lambda v: ref.rank("x", v))(base)
    return base[np.arange(len(base)), np.abs(places - targets[:, None]).argmin(axis=1)]


def test_matching_a_draw_moves_toward_the_human_distribution_and_keeps_its_spread() -> None:
    """Candidates from a distribution shifted by one human spread, humans N(0, 1)."""
    rng = np.random.default_rng(0)
    human = rng.normal(0.0, 1.0, 5000)
    ref = fit_reference({"x": human}, {"x": "direct"})
    base = rng.normal(1.0, 1.0, (3000, 3))
    drawn = pick(ref, base, rng.random(len(base)))
    median = pick(ref, base, np.full(len(base), 0.5))
    assert wasserstein_distance(drawn, human) < 0.65 * wasserstein_distance(base[:, 0], human)
    assert np.std(median) < 0.6 < 0.8 < np.std(drawn) < 1.0  # narrower than human, less so
    many = pick(ref, rng.normal(1.0, 1.0, (1000, 40)), rng.random(1000))
    assert wasserstein_distance(many, human) < 0.15  # many candidates: the human distribution


def test_the_shipped_overlays_carry_the_reference_of_the_four_criteria() -> None:
    ref = load_resources(DEFAULT_OVERLAYS).reference
    assert ref is not None
    assert ref.features == ("word_count", "tone", "specificity", "coherence")
    assert ref.method("coherence") == "lexical overlap" and ref.method("word_count") == "direct"
    assert 0.3 < ref.rank("word_count", 11.0) < 0.7  # the human median is about 11 words
