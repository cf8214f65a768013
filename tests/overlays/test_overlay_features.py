"""Feature extractors on hand-made examples, the registry, and offline operation."""

from __future__ import annotations

import os
import subprocess
import sys
import zlib
from collections.abc import Sequence

import numpy as np
import pytest

from governor.core import DecisionKind, Step, Trajectory
from governor.errors import ConfigError
from governor.overlays.features import (
    FEATURES,
    Resources,
    ToneWeights,
    Turn,
    as_dialogue,
    coherence,
    get_feature,
    measure,
    measure_all,
)
from governor.overlays.features.brevity import char_count, word_count
from governor.overlays.features.coherence import information_gain, renyi_entropy
from governor.overlays.features.degenerate import markup_count
from governor.overlays.features.specificity import counts
from governor.overlays.features.text import MAX_WORD_CHARS, normalised
from governor.overlays.features.tone import combine, fit_tone_weights, tone_terms
from governor.overlays.features.trajectory import exceedances, slope


def user(text: str) -> tuple[Turn, ...]:
    return (Turn("user", text),)


def value(name: str, context: Sequence[Turn], text: str, res: Resources | None = None) -> float:
    return measure(name, context, text, res or Resources()).value


def toy_embed(texts: Sequence[str]) -> np.ndarray:
    """Bag of hashed words in 64 dimensions: a deterministic stand-in for an embedding model."""
    out = np.zeros((len(texts), 64))
    for i, text in enumerate(texts):
        for word in text.lower().replace(".", " ").replace("!", " ").split():
            out[i, zlib.crc32(word.encode()) % 64] += 1.0
        out[i, 0] += 1e-3
    return out


LLM_TIPS = (
    "Great question! Here are some tips: 1) Sleep in and recharge. 2) Try a new hiking trail."
    " 3) Catch up with friends over brunch. Let me know if you'd like more suggestions!"
)


def test_registry_metadata_is_complete() -> None:
    expected = {
        "word_count", "token_count", "tone", "specificity", "proper_nouns", "numbers",
        "descriptive_words", "rare_word_rate", "coherence", "assistance", "advice", "suggestions",
        "user_request", "questions", "topic_shift", "user_affect", "user_escalation",
        "emotional_loop", "word_count_drift", "specificity_drift", "assistance_drift",
        "tone_drift",
    }  # fmt: skip
    assert expected <= set(FEATURES)
    for name, f in FEATURES.items():
        assert f.name == name and f.description and f.unit
        assert f.low <= f.high and f.range == (f.low, f.high)
        assert f.scope in ("turn", "trajectory")
    assert FEATURES["topic_shift"].weak and not FEATURES["word_count"].weak
    assert FEATURES["emotional_loop"].scope == "trajectory"
    assert FEATURES["word_count_drift"].scope == "trajectory"
    with pytest.raises(ConfigError, match=r"known features: .*word_count"):
        get_feature("verbosity")


def test_measure_reports_estimates_and_proxies() -> None:
    text = "Oh nice, I love walks when it is sunny."
    estimate = measure("token_count", (), text)
    assert (estimate.method, estimate.weak) == ("word estimate", True)
    assert estimate.value == round(9 * 4 / 3)
    counted = measure("token_count", (), text, Resources(tokenizer=list))
    assert (counted.method, counted.weak, counted.value) == ("tokenizer", False, len(text))
    assert measure("coherence", user("walks"), text).method == "lexical overlap"
    embedded = measure("coherence", user("walks"), text, Resources(embed=toy_embed))
    assert (embedded.method, embedded.weak) == ("embedding information gain", False)
    assert measure("topic_shift", user("walks"), text).weak


def test_brevity_counts_words() -> None:
    assert value("word_count", (), "Oh nice, I love walks.") == 5
    assert value("word_count", (), "I'd say it's fine") == 4
    assert value("word_count", (), "") == 0


def test_tone_orders_sentiment_and_follows_the_formula() -> None:
    good = value("tone", (), "That sounds lovely, I'm so happy for you!")
    flat = value("tone", (), "I went to the store.")
    bad = value("tone", (), "That is awful. I hate it, it is the worst.")
    assert good > 0.5 and abs(flat) < 0.1 and bad < -0.5
    weights = ToneWeights(whole=0.4, sentences=(0.2, 0.6))
    text = "I love this. It is terrible though. Fine."
    h, first, rest = tone_terms(text, 2)
    assert combine(text, weights) == pytest.approx(0.4 * h + 0.2 * first + 0.6 * rest)
    assert -1.0 <= combine("great great great! wonderful!", ToneWeights(2.0, (2.0,))) <= 1.0


def test_tone_weights_are_recovered_by_least_squares() -> None:
    texts = [
        "I love it.", "This is bad. But fine.", "Great day! Awful night. Okay then.",
        "Nothing much.", "So sad. So happy.", "Wonderful news, thanks!", "I hate waiting.",
        "It was fine. Really good actually. Not bad.",
    ]  # fmt: skip
    truth = ToneWeights(0.3, (0.5, 0.2))
    targets = [combine(t, truth) for t in texts]
    fitted = fit_tone_weights(texts, targets)
    assert fitted.whole == pytest.approx(0.3, abs=1e-3)
    assert fitted.sentences == pytest.approx((0.5, 0.2), abs=1e-3)
    with pytest.raises(ConfigError):
        fit_tone_weights(["a"], [0.0, 1.0])


def test_specificity_counts_names_numbers_and_details() -> None:
    museum = (
        "The Louvre in Paris houses 35,000 artworks, including Leonardo da Vinci's Mona Lisa,"
        " painted between 1503 and 1519."
    )
    names, numbers, _, _ = counts(museum)
    assert names >= 3 and numbers >= 3
    assert counts("Great, me too.")[0] == 0  # a common word opening a sentence is not a name
    assert counts("yeah me too") == (0, 0, 0, 0.0)
    assert counts("It was a beautiful, quiet, sunny afternoon.")[2] >= 3
    assert value("rare_word_rate", (), "the cat sat on the mat") == 0.0
    assert value("rare_word_rate", (), "serendipitous quixotic perspicacity") > 0.6
    generic = value("specificity", (), "Yeah, it was really nice.")
    specific = value("specificity", (), museum)
    assert 0.0 <= generic < specific <= 1.0


def test_assistance_lexicon_and_embedding() -> None:
    assert value("assistance", (), "Ha, same here. It was fun.") == 0.0
    one = value("assistance", (), "Let me know if you want to talk more.")
    many = value("assistance", (), LLM_TIPS)
    assert one == 0.5 and many > 0.9
    listed = value("assistance", (), "Options:\n- the park\n- the beach\n- the museum")
    assert listed == 0.5
    res = Resources(embed=toy_embed)
    assert value("assistance", (), "I'd be happy to help you with that.", res) == pytest.approx(1)
    assert value("assistance", (), "ha ha yes", res) < 0.5


def test_advice_only_counts_when_nobody_asked() -> None:
    text = "You should try going to bed earlier. Make sure you drink water. Cute dog!"
    assert value("advice", user("I've been tired lately."), text) == 2
    assert value("advice", user("Any tips for sleeping better?"), text) == 0
    assert value("suggestions", user("Any tips for sleeping better?"), text) == 2
    assert value("user_request", user("Could you recommend a book?"), "") == 1
    assert value("user_request", user("I read a book."), "") == 0
    assert value("advice", (), "I would love to go there someday.") == 0


def test_questions_counts_question_marks() -> None:
    assert value("questions", (), "Where did you go?? Who with? Fun.") == 2
    assert value("questions", (), "Nice.") == 0


def test_coherence_and_topic_shift_proxies() -> None:
    ctx = user("I watched a great football game last night.")
    on = value("coherence", ctx, "Football games are the best at night.")
    off = value("coherence", ctx, "My cat likes tuna.")
    assert on > off == 0.0
    assert value("coherence", (), "anything") == 1.0
    assert value("topic_shift", ctx, "My cat likes tuna.") == 1.0
    assert value("topic_shift", ctx, "Which football game?") < 1.0


def test_renyi_entropy_and_information_gain() -> None:
    eye = np.eye(8)
    assert renyi_entropy(eye[:1]) == pytest.approx(0.0)
    assert renyi_entropy(eye) > renyi_entropy(eye[:2]) > 0.0  # more directions, more entropy
    assert renyi_entropy(3 * eye[:2]) == pytest.approx(renyi_entropy(eye[:2]))  # directions only
    gain, most = information_gain(eye[:2], eye[:2])
    assert gain == pytest.approx(0.0) and most > 0.0
    gain, most = information_gain(eye[:1], eye[1:2])
    assert gain == pytest.approx(most)  # orthogonal sets gain the most
    near = np.array([[1.0, 0.1, 0, 0, 0, 0, 0, 0]])
    assert information_gain(eye[:1], near)[0] < information_gain(eye[:1], eye[1:2])[0]
    res = Resources(embed=toy_embed)
    ctx = user("football game tonight")
    same = value("coherence", ctx, "football game tonight", res)
    other = value("coherence", ctx, "cats eat tuna", res)
    assert same == pytest.approx(1.0) and other < 0.2


class ToyTokens:
    """An embedding function that also gives token vectors (as the local encoder does)."""

    def __init__(self) -> None:
        self.tokenized: list[str] = []

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        return toy_embed(texts)

    def tokens(self, text: str) -> np.ndarray:
        self.tokenized.append(text)
        return toy_embed(text.split())


def test_coherence_uses_token_embeddings_when_offered() -> None:
    embed = ToyTokens()
    res = Resources(embed=embed)
    ctx = user("football game tonight")
    on = value("coherence", ctx, "great game tonight", res)
    off = value("coherence", ctx, "cats eat tuna", res)
    assert embed.tokenized == [ctx[0].text, "great game tonight", "cats eat tuna"]  # each once
    assert 0.0 <= off < on < 1.0


def test_coherence_is_memoised_per_pair_until_forgotten() -> None:
    embed = ToyTokens()
    res = Resources(embed=embed)
    ctx = user("football game tonight")
    first = value("coherence", ctx, "great game tonight", res)
    assert value("coherence", ctx, "great game tonight", res) == first
    assert len(embed.tokenized) == 2
    coherence.forget()
    assert value("coherence", ctx, "great game tonight", res) == first
    assert len(embed.tokenized) == 4  # computed again from the embedding


def test_user_affect_escalation_and_emotional_loop() -> None:
    ctx = (
        Turn("user", "I'm great, thanks!"),
        Turn("assistant", "Glad to hear."),
        Turn("user", "Work was okay I guess."),
        Turn("assistant", "Just okay?"),
        Turn("user", "Honestly it was awful and I feel terrible."),
    )
    assert value("user_affect", ctx, "x") < -0.3
    assert value("user_escalation", ctx, "x") > 0.5
    assert value("emotional_loop", ctx, "x") == 2
    assert value("emotional_loop", ctx[:1], "x") == 0
    assert value("user_affect", (), "x") == 0.0


def test_drift_is_a_least_squares_slope() -> None:
    assert slope([1, 2, 3]) == pytest.approx(1.0)
    assert slope([5, 5]) == 0.0
    assert exceedances([1, 5, 7], 4) == 2
    words = ["one two", "one two three four", "one two three four five six"]
    ctx: tuple[Turn, ...] = ()
    for w in words:
        ctx += (Turn("user", "hm"), Turn("assistant", w))
    candidate = " ".join(["word"] * 8)
    assert value("word_count_drift", (*ctx, Turn("user", "hm")), candidate) == pytest.approx(2)
    assert value("word_count_drift", user("hm"), candidate) == 0.0


def test_context_can_be_a_trajectory() -> None:
    step = Step("hi there", "hello!", "how are you?", DecisionKind.EXECUTE)
    traj = Trajectory("how are you?", steps=(step,))
    assert as_dialogue(traj) == (
        Turn("user", "hi there"),
        Turn("assistant", "hello!"),
        Turn("user", "how are you?"),
    )
    turns = (Turn("user", "yo"),)
    assert as_dialogue(Trajectory(turns)) == turns
    assert measure("user_affect", traj, "fine").value == value("user_affect", turns, "x")
    with pytest.raises(ConfigError):
        as_dialogue(["not a turn"])


def test_measure_all_values_lie_in_their_ranges() -> None:
    ctx = (Turn("user", "Hi! How was your weekend?"), Turn("assistant", "Lovely, thanks."))
    for m in measure_all((*ctx, Turn("user", "Nice.")), LLM_TIPS).values():
        f = FEATURES[m.feature]
        assert f.low <= m.value <= f.high, m


OFFLINE = """
import socket
def refuse(*args, **kwargs):
    raise OSError("network access attempted")
socket.socket.connect = refuse
socket.create_connection = refuse
from governor.overlays import load_overlays, measure_all, Turn
ctx = (Turn("user", "The weather is lovely in Paris today."),)
values = measure_all(ctx, "Great question! Here are 3 tips: visit the Louvre. Let me know!")
assert values["proper_nouns"].value >= 1 and values["assistance"].value > 0
assert any(not o.evaluate(ctx, "x " * 200).admissible for o in load_overlays())
import nltk
assert not any(os.path.isdir(p) for p in nltk.data.path), nltk.data.path
print("offline ok")
"""


def test_features_work_offline_without_nltk_data(tmp_path: object) -> None:
    env = {**os.environ, "HOME": str(tmp_path), "NLTK_DATA": str(tmp_path) + "/none"}
    run = subprocess.run(
        [sys.executable, "-W", "error", "-c", "import os\n" + OFFLINE],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert "offline ok" in run.stdout


# --------------------------------------------------------------------------- evasion


@pytest.mark.parametrize(
    "text",
    [
        "a \uff1cb\uff1ebold\uff1c/b\uff1e word",  # fullwidth brackets
        "a <\u200bb>bold</b> word",  # a zero-width space inside the tag
        "a &lt;b&gt;bold&lt;/b&gt; word",  # entities
        "a &amp;lt;b&amp;gt;bold word",  # entities twice
        "items:\n- one\n- two",
        "steps:\n1. one\n2) two",
        "| a | b |\n|---|---|",
        "run `ls` now",
        "> quoted words",
    ],
)
def test_disguised_markup_and_markdown_structure_count_as_markup(text: str) -> None:
    assert markup_count(text) >= 1


@pytest.mark.parametrize(
    "text", ["I have 3 cats - and a dog.", "Nice :) see you at 5.", "ok & thanks", "A-1 shipped"]
)
def test_ordinary_text_is_not_markup(text: str) -> None:
    assert markup_count(text) == 0


def test_length_counts_long_tokens_and_emoji_and_characters() -> None:
    assert word_count((), "Hello there, how are you - fine!") == 6.0
    assert word_count((), "a" * 5000) == -(-5000 // MAX_WORD_CHARS)
    assert word_count((), "\U0001f600" * 3000) == -(-3000 // MAX_WORD_CHARS)
    assert word_count((), " ".join(["\U0001f600"] * 100)) == 100.0
    assert word_count((), "w\u200bo\u200br\u200bd") == 1.0  # invisible characters removed
    assert char_count((), "ab c\u200b") == 3.0
    assert normalised("\uff21&amp;\u200bB") == "A&B"
