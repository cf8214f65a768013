"""Sentiment is read within bounds: VADER's time grows with the square of a text's length, and a
client writes the user's turns, a model the reply. Past the bounds a text reads as its head."""

from __future__ import annotations

from governor.overlays.features.text import COMPOUND_MAX_CHARS, compound, sentence_tuple
from governor.overlays.features.tone import TONE_MAX_SENTENCES, tone_terms


def test_a_long_text_reads_as_its_head_cut_at_a_space() -> None:
    happy = "What a wonderful lovely happy day. " * 20  # 700 characters
    angry = "I hate this awful terrible horrible mess. " * 200
    text = happy + angry
    head = text[:COMPOUND_MAX_CHARS]
    head = head[: head.rfind(" ")]
    assert compound(text) == compound(head)
    assert compound(text) > 0.5  # the angry tail, past the bound, is not read
    short = happy.strip()
    assert len(short) < COMPOUND_MAX_CHARS and compound(short) == compound(short + " ")


def test_tone_averages_at_most_its_first_sentences() -> None:
    sentences = ["What a lovely day."] * TONE_MAX_SENTENCES + ["This is awful and I hate it."] * 40
    text = " ".join(sentences)
    assert len(sentence_tuple(text)) == TONE_MAX_SENTENCES + 40
    bounded = tone_terms(text, 2)
    first = tone_terms(" ".join(sentences[:TONE_MAX_SENTENCES]), 2)
    assert list(bounded[1:]) == list(first[1:])  # the sentences' part: the first 64 only
