"""VADER's compound sentiment score, computed as ``vaderSentiment`` 3.3 computes it.

:func:`vader_compound` is ``SentimentIntensityAnalyzer.polarity_scores(text)["compound"]``, step
for step (the same words, lexicon, boosters, negations, idioms, "but" and punctuation emphasis,
the same arithmetic in the same order, so the same float), less what the compound score does not
need: the words are lower-cased once per text rather than again for each lexicon word and each
of its three preceding words, an ASCII text skips the emoji scan (no emoji is ASCII), and the
positive, negative and neutral shares are not computed. The analyser (its lexicon and emoji
table) is the library's; ``tests/overlays/test_feature_memo.py`` checks the two agree.
"""

from __future__ import annotations

from typing import Any

from vaderSentiment.vaderSentiment import (
    BOOSTER_DICT,
    C_INCR,
    N_SCALAR,
    NEGATE,
    SPECIAL_CASES,
    SentimentIntensityAnalyzer,
    SentiText,
    normalize,
    scalar_inc_dec,
)


def vader_compound(analyzer: SentimentIntensityAnalyzer, text: str) -> float:
    """``analyzer.polarity_scores(text)["compound"]``: in [-1, 1], rounded to 4 places."""
    if not text.isascii():
        text = _emoji_described(analyzer.emojis, text)
    text = text.strip()
    senti = SentiText(text)
    words: list[str] = senti.words_and_emoticons
    lower = [w.lower() for w in words]
    lexicon: dict[str, float] = analyzer.lexicon
    last = len(words) - 1
    sentiments: list[Any] = []
    for i, word in enumerate(lower):
        # a booster, "kind" of "kind of" and a word the lexicon lacks have no valence of their own
        booster = word in BOOSTER_DICT or (i < last and word == "kind" and lower[i + 1] == "of")
        if booster or word not in lexicon:
            sentiments.append(0)
        else:
            sentiments.append(_valence(lexicon, words, lower, senti.is_cap_diff, i))
    if "but" in lower:
        sentiments = SentimentIntensityAnalyzer._but_check(words, sentiments)
    if not sentiments:
        return 0.0
    total = float(sum(sentiments))
    emphasis = analyzer._punctuation_emphasis(text)
    if total > 0:
        total += emphasis
    elif total < 0:
        total -= emphasis
    return round(normalize(total), 4)


def _emoji_described(emojis: dict[str, str], text: str) -> str:
    """Each emoji of ``text`` replaced by its description, spaced from the word before it."""
    out = ""
    prev_space = True
    for ch in text:
        if ch in emojis:
            if not prev_space:
                out += " "
            out += emojis[ch]
            prev_space = False
        else:
            out += ch
            prev_space = ch == " "
    return out


def _valence(
    lexicon: dict[str, float], words: list[str], lower: list[str], is_cap_diff: bool, i: int
) -> float:
    """The valence of the lexicon word ``words[i]`` in its context (``sentiment_valence``)."""
    word, n = lower[i], len(words)
    valence = lexicon[word]
    if word == "no" and i != n - 1 and lower[i + 1] in lexicon:
        valence = 0.0
    if (
        (i > 0 and lower[i - 1] == "no")
        or (i > 1 and lower[i - 2] == "no")
        or (i > 2 and lower[i - 3] == "no" and lower[i - 1] in ["or", "nor"])
    ):
        valence = lexicon[word] * N_SCALAR
    if words[i].isupper() and is_cap_diff:
        if valence > 0:
            valence += C_INCR
        else:
            valence -= C_INCR
    for start_i in range(0, 3):
        if i > start_i and lower[i - (start_i + 1)] not in lexicon:
            s = scalar_inc_dec(words[i - (start_i + 1)], valence, is_cap_diff)
            if start_i == 1 and s != 0:
                s = s * 0.95
            if start_i == 2 and s != 0:
                s = s * 0.9
            valence = valence + s
            valence = _negation_check(valence, lower, start_i, i)
            if start_i == 2:
                valence = _special_idioms_check(valence, lower, i)
    return _least_check(valence, lexicon, lower, i)


def _negated(word: str) -> bool:
    """``negated([word])``: a negation word, or a word with "n't"."""
    word = word.lower()
    return word in NEGATE or "n't" in word


def _negation_check(valence: float, lower: list[str], start_i: int, i: int) -> float:
    if start_i == 0 and _negated(lower[i - 1]):
        valence = valence * N_SCALAR
    if start_i == 1:
        if lower[i - 2] == "never" and (lower[i - 1] == "so" or lower[i - 1] == "this"):
            valence = valence * 1.25
        elif lower[i - 2] == "without" and lower[i - 1] == "doubt":
            pass
        elif _negated(lower[i - 2]):
            valence = valence * N_SCALAR
    if start_i == 2:
        if (lower[i - 3] == "never" and (lower[i - 2] == "so" or lower[i - 2] == "this")) or (
            lower[i - 1] == "so" or lower[i - 1] == "this"
        ):
            valence = valence * 1.25
        elif lower[i - 3] == "without" and (lower[i - 2] == "doubt" or lower[i - 1] == "doubt"):
            pass
        elif _negated(lower[i - 3]):
            valence = valence * N_SCALAR
    return valence


def _special_idioms_check(valence: float, lower: list[str], i: int) -> float:
    onezero = f"{lower[i - 1]} {lower[i]}"
    twoonezero = f"{lower[i - 2]} {lower[i - 1]} {lower[i]}"
    twoone = f"{lower[i - 2]} {lower[i - 1]}"
    threetwoone = f"{lower[i - 3]} {lower[i - 2]} {lower[i - 1]}"
    threetwo = f"{lower[i - 3]} {lower[i - 2]}"
    for seq in (onezero, twoonezero, twoone, threetwoone, threetwo):
        if seq in SPECIAL_CASES:
            valence = SPECIAL_CASES[seq]
            break
    if len(lower) - 1 > i:
        zeroone = f"{lower[i]} {lower[i + 1]}"
        if zeroone in SPECIAL_CASES:
            valence = SPECIAL_CASES[zeroone]
    if len(lower) - 1 > i + 1:
        zeroonetwo = f"{lower[i]} {lower[i + 1]} {lower[i + 2]}"
        if zeroonetwo in SPECIAL_CASES:
            valence = SPECIAL_CASES[zeroonetwo]
    for n_gram in (threetwoone, threetwo, twoone):
        if n_gram in BOOSTER_DICT:
            valence = valence + BOOSTER_DICT[n_gram]
    return valence


def _least_check(valence: float, lexicon: dict[str, float], lower: list[str], i: int) -> float:
    if i > 1 and lower[i - 1] not in lexicon and lower[i - 1] == "least":
        if lower[i - 2] != "at" and lower[i - 2] != "very":
            valence = valence * N_SCALAR
    elif i > 0 and lower[i - 1] not in lexicon and lower[i - 1] == "least":
        valence = valence * N_SCALAR
    return valence
