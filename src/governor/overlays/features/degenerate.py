"""Degenerate text: what a broken or base model emits and people in small talk never write.

Six features, each 0 for ordinary human replies (calibrated on the human corpora like the rest):

- ``repeated_ngrams``: the share of the reply's word 3-grams that repeat an earlier one
  ("I love it I love it I love it"), or 1 when a sentence of :data:`SAID_TWICE` words or more
  is said twice ("Somehow, you're going to have a long time." twice: one person's turn in
  92,300 does it, singing "She loves you, yeah, yeah, yeah");
- ``repeated_symbols``: how often one symbol repeats in a row, spaces between ignored ("↦ ↦ ↦"
  and "査査査" are 2): ordinary punctuation (``...``, ``!!!``) and the letters and digits of
  alphabetic scripts ("sooo") are not symbols here, people write them, unless a punctuation
  mark runs past :data:`PUNCT_RUN` in a row ("$$$$$...", 80 of them; people's longest run in the
  corpora is 9 dots), which counts the repeats beyond it; Han and kana characters
  are (a character repeated in a row is rare in their writing); each invisible character
  (zero-width space, bidi control) adds one;
- ``non_words``: the share of the reply's words that are no word of the conversation's language
  (``wordfreq`` has never seen them): numbers ("5.04", "1990s", "4th") and capitalised words
  inside a sentence (names) are not counted, but a word that runs letters into digits or
  changes case inside ("14ArgumentParser") is, and the share is taken over at least :data:`MIN_WORDS` words, so that one
  odd word in a short reply ("Hmmph.") is not a degenerate reply;
- ``mixed_scripts``: the share of the reply's words written in a script other than its dominant
  one, a word that mixes scripts ("süreç查model") counting as outside (Han, kana and Hangul are one
  family: Japanese mixes them);
- ``markup``: HTML/XML tags, code fences, Markdown headings, emphasis, links, list items,
  blockquotes, tables and inline code (read after :func:`.text.normalised`: entities decoded,
  NFKC, invisible characters removed, so ``＜b＞``, ``<​b>`` and ``&lt;b&gt;`` are tags), a transcript's
  speaker tag opening a line ("A: ...", "User: ..."), code identifiers glued into words
  ("audienciasetInput": a lower-case run of four letters or more, then a capital, which names
  such as "iPhone", "eBay" or "PowerPoint" do not have) and file names with a code or data
  extension glued to a word ("the big cities.yaml");
- ``echo``: the share of the reply's words inside a word 4-gram of the user's last turn (a
  verbatim echo of the question is 1);
- ``stray_tail``: 1 when the reply's end is broken (a stray word after its last sentence, a word
  glued to it, a sentence cut off), else 0; :mod:`.endings` says what counts.

The conversation's language is the one of :data:`LANGUAGES` whose word frequencies sum highest
over the user's words (English when the user has not spoken, on a tie, or at once when 80% of the
words are common English words, Zipf frequency 3 or more).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from typing import Any

from governor.overlays.features.base import DEFAULT_RESOURCES, Resources, register
from governor.overlays.features.dialogue import Dialogue, last
from governor.overlays.features.endings import recurring_tail, stray_tail_of
from governor.overlays.features.text import (
    lower_words,
    memo,
    normalised,
    sentence_tuple,
    word_tuple,
    zipf,
)

LANGUAGES = ("en", "fr", "de", "es", "it", "pt", "nl")
MIN_WORDS = 8  # non_words divides by at least this many words
LANGUAGE_TURNS = 3  # the user's turns that decide the conversation's language
SURE, COMMON = 0.8, 3.0  # the first language, without trying others, if this share is common
NGRAM = 3  # repeated_ngrams: word 3-grams
SAID_TWICE = 5  # repeated_ngrams: a sentence this long said twice is a repetition
ECHO_NGRAM = 4  # echo: word 4-grams shared with the user's turn
PUNCT_RUN = 10  # repeated_symbols: a punctuation mark repeated more than this in a row counts
ZWJ = "\u200d"  # the zero-width joiner inside emoji sequences is not counted as invisible
_ORDINARY = frozenset(".,;:!?'\"-()*~…/&%$#@+=_")  # punctuation people repeat ("...", "!!!")
_CJK_FAMILY = ("CJK", "HIRAGANA", "KATAKANA", "HANGUL", "IDEOGRAPHIC")
_MARKUP = re.compile(
    r"</?[A-Za-z][\w:-]*(?:\s[^<>]{0,200})?/?>"  # <div>, </p>, <br/>, <a href="...">
    r"|```|~~~"  # code fences
    r"|^\s{0,3}#{1,6}\s|^\s{0,3}(?:-{3,}|\*{3,}|_{3,}|={3,})\s*$"  # headings, rules
    r"|\*\*[^*\n]{1,200}\*\*|__[^_\n]{1,200}__"  # bold
    r"|\[[^\]\n]{1,200}\]\([^)\s]{1,500}\)"  # links
    r"|^\s{0,3}(?:[A-Z]|User|Assistant|Human|Person|Speaker ?\d{1,2})\s?:\s"  # speaker tags
    r"|\b[a-z]{4,}[A-Z]\w*"  # code identifiers: setInput, audienciasetInput
    r"|\b\w+\.(?:ya?ml|json|py|js|ts|txt|md|html?|xml|csv|cfg|ini|toml|sh)\b"  # cities.yaml
    r"|^\s{0,3}(?:[-*+•]|\d{1,3}[.)])\s+\S"  # list items
    r"|^\s{0,3}>\s?\S"  # blockquotes
    r"|^\s*\|.*\|\s*$|^\s*\|?\s*:?-{3,}:?\s*\|"  # table rows and rules
    r"|`[^`\n]{1,200}`",  # inline code
    re.MULTILINE,
)
_NUMBER = re.compile(r"[\d.,:/-]+(?:st|nd|rd|th|s|am|pm|k)?", re.IGNORECASE)
_RUN = re.compile(r"(.)\1+", re.DOTALL)  # a character repeated in a row
_ASCII_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1b\x7f]")  # the ASCII controls that are not space
_NON_ASCII = re.compile(r"[^\x00-\x7f]")


@memo(65536, per_word=True)
def script(ch: str) -> str:
    """The script family of a letter ("LATIN", "CYRILLIC", "CJK", ...); "" for anything else."""
    if not ch.isalpha():
        return ""
    name = unicodedata.name(ch, "")
    family = name.split(" ")[0] if name else "UNKNOWN"
    return "CJK" if family in _CJK_FAMILY else family


def _ngrams(tokens: Sequence[str], n: int) -> list[tuple[str, ...]]:
    return [tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1)]


@memo()
def repeated_share(text: str, n: int = NGRAM) -> float:
    """Share of the word n-grams of ``text`` that repeat an earlier one (0 without n-grams), or
    1 when a sentence of :data:`SAID_TWICE` words or more is said twice."""
    said: set[tuple[str, ...]] = set()
    for sentence in sentence_tuple(text):
        key = lower_words(sentence)
        if len(key) >= SAID_TWICE and key in said:
            return 1.0
        said.add(key)
    grams = _ngrams(lower_words(text), n)
    return (len(grams) - len(set(grams))) / len(grams) if grams else 0.0


def _is_symbol(ch: str) -> bool:
    return not (ch.isspace() or ch in _ORDINARY or (ch.isalnum() and script(ch) != "CJK"))


@memo(65536, per_word=True)
def _invisible(ch: str) -> bool:
    """A format, private-use, unassigned or control character (zero-width space, bidi marks)."""
    category = unicodedata.category(ch)
    return ch != ZWJ and category in ("Cc", "Cf", "Co", "Cn", "Cs")


@memo()
def symbol_repeats(text: str) -> int:
    """Repeats of one symbol in a row, spaces ignored ("↦ ↦ ↦" is 2, a lone one 0), or of one
    punctuation mark beyond :data:`PUNCT_RUN`, plus the number of invisible characters
    (zero-width, bidi, control)."""
    said = "".join(text.split())  # spaces ignored: a run goes on across them
    best = 0
    for found in _RUN.finditer(said):  # each run of one character, two or more long
        ch, repeats = found.group(1), found.end() - found.start() - 1
        if _is_symbol(ch):
            best = max(best, repeats)
        elif ch in _ORDINARY and repeats > PUNCT_RUN:
            best = max(best, repeats - PUNCT_RUN)
    invisible = len(_ASCII_CONTROL.findall(said))
    if not said.isascii():
        invisible += sum(_invisible(ch) for ch in _NON_ASCII.findall(said))
    return best + invisible


def language(context: Dialogue) -> str:
    """The conversation's language from the user's last :data:`LANGUAGE_TURNS` turns."""
    return _language(tuple([t.text for t in context if t.role == "user"][-LANGUAGE_TURNS:]))


@memo()
def _language(said: tuple[str, ...]) -> str:
    found = sum(_english(t)[0] for t in said)
    if not found or sum(_english(t)[1] for t in said) >= SURE * found:  # the usual case
        return LANGUAGES[0]
    score = [sum(_scores(t)[i] for t in said) for i in range(len(LANGUAGES))]
    return LANGUAGES[max(range(len(LANGUAGES)), key=lambda i: (score[i], i == 0))]


@memo(8192)
def _english(text: str) -> tuple[int, int]:
    """(words, common English words) of a text."""
    found = [w for w in word_tuple(text) if w.isalpha()]
    return len(found), sum(zipf(w, LANGUAGES[0]) >= COMMON for w in found)


@memo(8192)
def _scores(text: str) -> tuple[float, ...]:
    """The sum of the word frequencies of a text in each of :data:`LANGUAGES`."""
    found = [w for w in word_tuple(text) if w.isalpha()][:200]
    return tuple(sum(zipf(w, lang) for w in found) for lang in LANGUAGES)


@memo(8192)
def non_word_share(text: str, lang: str = "en") -> float:
    """Share of words unknown in ``lang`` (names and numbers skipped; at least MIN_WORDS)."""
    unknown, counted = 0, 0
    for sentence in sentence_tuple(text):
        for i, w in enumerate(word_tuple(sentence)):
            if _NUMBER.fullmatch(w) or (i > 0 and w[:1].isupper() and w[1:].islower()):
                continue
            counted += 1
            unknown += zipf(w, lang) <= 0
    return unknown / max(counted, MIN_WORDS)


@memo()
def foreign_script_share(text: str) -> float:
    """Share of words outside the dominant script, mixed-script words counting as outside."""
    if text.isascii():  # every letter is Latin: one script
        return 0.0
    scripts = [frozenset(s for s in map(script, w) if s) for w in text.split()]
    scripts = [s for s in scripts if s]
    if not scripts:
        return 0.0
    counts: dict[str, int] = {}
    for s in scripts:
        if len(s) == 1:
            (only,) = s
            counts[only] = counts.get(only, 0) + 1
    dominant = max(counts, key=lambda k: counts[k]) if counts else ""
    return sum(s != {dominant} for s in scripts) / len(scripts)


@memo()
def markup_count(text: str) -> int:
    """HTML/XML tags, code fences and Markdown marks (headings, bold, links, list items,
    blockquotes, tables, inline code) in ``text``, read normalised (:func:`.text.normalised`), so
    that fullwidth brackets, a zero-width character inside a tag or an HTML entity do not hide
    one."""
    return len(_MARKUP.findall(normalised(text)))


@memo()
def echo_share(candidate: str, previous: str, n: int = ECHO_NGRAM) -> float:
    """Share of the candidate's words inside a word n-gram that also occurs in ``previous``."""
    mine = lower_words(candidate)
    theirs = _ngram_set(previous, n)
    if len(mine) < n or not theirs:
        return 0.0
    covered = [False] * len(mine)
    for i, gram in enumerate(_ngrams(mine, n)):
        if gram in theirs:
            covered[i : i + n] = [True] * n
    return sum(covered) / len(mine)


@memo()
def _ngram_set(text: str, n: int) -> frozenset[tuple[str, ...]]:
    return frozenset(_ngrams(lower_words(text), n))


def _register(
    name: str, unit: str, description: str, high: float = 1.0, grows: bool = False
) -> Any:
    return register(name, range=(0.0, high), unit=unit, description=description, grows=grows)


@_register("repeated_ngrams", "share", "share of word 3-grams repeating an earlier one")
def repeated_ngrams(
    context: Dialogue, candidate: str, *, res: Resources = DEFAULT_RESOURCES
) -> float:
    return repeated_share(candidate)


@_register(
    "repeated_symbols",
    "repeats",
    "repeats of one symbol in a row, plus invisible characters",
    float("inf"),
)
def repeated_symbols(
    context: Dialogue, candidate: str, *, res: Resources = DEFAULT_RESOURCES
) -> float:
    return float(symbol_repeats(candidate))


@_register("non_words", "share", "share of words unknown in the conversation's language")
def non_words(context: Dialogue, candidate: str, *, res: Resources = DEFAULT_RESOURCES) -> float:
    return non_word_share(candidate, language(context))


@_register("mixed_scripts", "share", "share of words outside the reply's dominant script")
def mixed_scripts(
    context: Dialogue, candidate: str, *, res: Resources = DEFAULT_RESOURCES
) -> float:
    return foreign_script_share(candidate)


@_register(
    "markup", "marks", "HTML/XML tags, code fences and Markdown marks", float("inf"), grows=True
)
def markup(context: Dialogue, candidate: str, *, res: Resources = DEFAULT_RESOURCES) -> float:
    return float(markup_count(candidate))


@_register("echo", "share", "share of the reply's words in a 4-gram of the user's last turn")
def echo(context: Dialogue, candidate: str, *, res: Resources = DEFAULT_RESOURCES) -> float:
    previous = last(context, "user")
    return 0.0 if previous is None else echo_share(candidate, previous)


@_register(
    "stray_tail",
    "flag",
    "a broken end: a stray word after the last sentence, or cut off mid-sentence",
)
def stray_tail(context: Dialogue, candidate: str, *, res: Resources = DEFAULT_RESOURCES) -> float:
    own = [t.text for t in context if t.role == "assistant"]
    return max(stray_tail_of(candidate, language(context)), recurring_tail(candidate, own))
