"""Text analysis shared by the features: words, sentences, tags, word rarity, sentiment.

Everything here works offline from data shipped inside the packages: TextBlob's pattern tagger
(its lexicon files, no NLTK data), ``wordfreq``'s frequency lists and VADER's lexicon (its
compound score computed by :mod:`.sentiment`). The models
load lazily on first use and results are memoised per text (bounded caches of pure functions,
:func:`memo`): a text longer than :data:`MEMO_CHARS` characters is analysed afresh on each call
rather than kept, so that no hostile text pins memory, and each cache holds a bounded number of
texts, least recently used dropped first (a per-word cache keeps words of at most
:data:`MEMO_WORD_CHARS` characters). A text's words, lower-cased words and sentences
(:func:`word_tuple`, :func:`lower_words`, :func:`sentence_tuple`) are computed once and shared by
every feature that reads them, and the features keep their own per-text values the same way. The
caches are safe to share between threads (each value is immutable; two threads may compute the
same one, never a different one); :func:`clear_caches` empties them.
"""

from __future__ import annotations

import html
import re
import threading
import unicodedata
import warnings
from collections.abc import Callable
from functools import lru_cache, wraps
from typing import Any, ParamSpec, TypeVar

from governor.overlays.features.sentiment import vader_compound

# Han ideographs, kana and their marks: written without spaces, so each character counts as a word
# (Chinese words average 1.5 characters; one per character is the usual counting convention).
CJK = "\u3005-\u3007\u3040-\u30fa\u30fc-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_LETTERS = rf"[^\W_{CJK}]+"  # letters and digits of any script but the ones above
_WORD = re.compile(rf"[{CJK}]|{_LETTERS}(?:['’][^\W\d_{CJK}]+)*")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\s*\n+\s*")
_CACHE = 8192

MEMO_CHARS = 4096
"""The longest text (all its string arguments together) whose analyses are kept in a cache."""
MEMO_ENTRIES = 1024
"""How many texts (argument tuples) each per-text cache of a feature keeps."""
MEMO_WORD_CHARS = 64
"""The longest word (or character sequence) whose per-word values are kept in a cache."""

P = ParamSpec("P")
R = TypeVar("R")
_MEMOS: list[Any] = []  # per-text caches
_WORD_MEMOS: list[Any] = []  # per-word caches (word frequencies, scripts)


def _chars(args: tuple[Any, ...]) -> int:
    """The characters of the strings in ``args``, in tuples among them too (1 for anything
    else in a tuple)."""
    total = 0
    for a in args:
        if type(a) is str or isinstance(a, str):
            total += len(a)
        elif isinstance(a, tuple):
            total += sum(len(x) if isinstance(x, str) else 1 for x in a)
    return total


def memo(
    maxsize: int = MEMO_ENTRIES, *, per_word: bool = False
) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Decorator: memoise a pure function of texts (positional, hashable arguments) in an LRU
    cache of ``maxsize`` entries, computing afresh, without keeping, when its string arguments
    hold more than :data:`MEMO_CHARS` characters together. A ``per_word`` function takes a word
    first (its other arguments short: a language code) and keeps words of at most
    :data:`MEMO_WORD_CHARS` characters. The function must return an immutable value (it is
    shared by every caller). :func:`clear_caches` empties it (a ``per_word`` cache only when
    asked)."""

    def wrap(fn: Callable[P, R]) -> Callable[P, R]:
        cached = lru_cache(maxsize=maxsize)(fn)

        @wraps(fn)
        def call(*args: P.args, **kwargs: P.kwargs) -> R:
            if not kwargs:
                if len(args) == 1 and type(args[0]) is str:  # the usual call: one text
                    if len(args[0]) <= MEMO_CHARS:
                        return cached(*args)
                elif _chars(args) <= MEMO_CHARS:
                    return cached(*args)
            return fn(*args, **kwargs)

        @wraps(fn)
        def call_word(*args: P.args, **kwargs: P.kwargs) -> R:
            if kwargs or not args:
                return fn(*args, **kwargs)
            word = args[0]
            if type(word) is str and len(word) <= MEMO_WORD_CHARS:
                return cached(*args)
            return fn(*args, **kwargs)

        (_WORD_MEMOS if per_word else _MEMOS).append(cached)
        return call_word if per_word else call

    return wrap


def clear_caches(*, per_word: bool = False) -> None:
    """Empty every per-text cache of the features, and with ``per_word`` the per-word ones
    (word frequencies, scripts) too; the models stay loaded."""
    for cached in (*_MEMOS, *_WORD_MEMOS) if per_word else _MEMOS:
        cached.cache_clear()


_STOPWORDS = """a about above after again all am an and any are as at be because been being but by can
    could did do does doing don't for from had has have having he her here hers him his how i i'd
    i'll i'm i've if in into is it it's its just me more most my no nor not of off on once only or
    other our ours out over own same she should so some such than that that's the their them then
    there these they this those through to too under until up very was we were what when where
    which while who whom why will with would you you'd you're your yours yeah yes oh um uh well
    like really know think get got go going one lot much also okay ok sure thing things"""
STOPWORDS = frozenset(_STOPWORDS.split())


@memo(_CACHE)
def normalised(text: str) -> str:
    """``text`` as the markup and length features read it, so that a look-alike cannot evade
    them: HTML entities decoded (``&lt;b&gt;`` is ``<b>``; twice, for ``&amp;lt;``), NFKC applied
    (fullwidth ``＜ｂ＞`` is ``<b>``), and invisible characters (format and control characters
    other than line breaks and tabs: zero-width spaces, joiners, bidi marks) removed."""
    text = html.unescape(html.unescape(text)) if "&" in text else text
    text = unicodedata.normalize("NFKC", text)
    if text.isascii() and text.isprintable():
        return text
    return "".join(ch for ch in text if ch in "\n\t" or unicodedata.category(ch) not in _INVISIBLE)


_INVISIBLE = ("Cf", "Cc")


MAX_WORD_CHARS = 24
"""The longest run of characters counted as one word by :func:`length_in_words`: a longer
unbroken token (a 5,000-character string, a run of emoji) counts one word per this many."""


@memo()
def length_in_words(text: str) -> int:
    """How long ``text`` is, in words: each whitespace-separated token counts its words, and at
    least one word per :data:`MAX_WORD_CHARS` characters (a token of symbols only, such as an
    emoji, counts one; of punctuation only, none unless it is longer)."""
    total = len(_WORD.findall(text))
    for m in _LONG_TOKEN.finditer(text):
        token = m.group()
        total += max(0, -(-len(token) // MAX_WORD_CHARS) - len(_WORD.findall(token)))
    for m in _SYMBOL_TOKEN.finditer(text):
        token = m.group()
        total += not _WORD.search(token) and not _punctuation(token)
    return total


_LONG_TOKEN = re.compile(rf"\S{{{MAX_WORD_CHARS + 1},}}")
_SYMBOL_TOKEN = re.compile(rf"(?<!\S)[^\w\s]\S{{0,{MAX_WORD_CHARS - 1}}}(?!\S)")


def _punctuation(token: str) -> bool:
    return all(unicodedata.category(ch)[0] == "P" for ch in token)


def words(text: str) -> list[str]:
    """Word tokens: runs of letters and digits of any script, with apostrophe contractions kept
    whole; a Han ideograph or kana character is a word on its own (see :data:`CJK`)."""
    return _WORD.findall(text)


def sentences(text: str) -> list[str]:
    """Sentences split at ``.``, ``!``, ``?`` followed by space, and at line breaks."""
    return [s for s in (p.strip() for p in _SENTENCE_END.split(text)) if s]


@memo()
def word_tuple(text: str) -> tuple[str, ...]:
    """:func:`words`, memoised (a tuple, shared by the features that read the same text)."""
    return tuple(_WORD.findall(text))


@memo()
def lower_words(text: str) -> tuple[str, ...]:
    """:func:`words` in lower case, memoised."""
    return tuple(w.lower() for w in word_tuple(text))


@memo()
def sentence_tuple(text: str) -> tuple[str, ...]:
    """:func:`sentences`, memoised."""
    return tuple(s for s in (p.strip() for p in _SENTENCE_END.split(text)) if s)


def stem(word: str) -> str:
    """A crude stem: lower case without a plural or verb suffix (for lexical overlap only)."""
    w = word.lower().replace("’", "'")
    for suffix in ("'s", "ing", "ed", "es", "s"):
        if w.endswith(suffix) and len(w) - len(suffix) >= 3:
            return w[: -len(suffix)]
    return w


@memo(_CACHE)
def content_stems(text: str) -> frozenset[str]:
    """Stems of the words that are not stop words (lexical proxies use these)."""
    return frozenset(stem(w) for w in word_tuple(text) if w.lower() not in STOPWORDS and len(w) > 1)


_TAGGER_LOAD = threading.Lock()


@lru_cache(maxsize=1)
def _tagger() -> Any:
    # TextBlob's pattern lexicon reader leaves its files to the garbage collector; the
    # ResourceWarnings that follow on load are the library's, so they are silenced here only.
    # One load at a time: the filter is process-wide, and a second load's block ending first (a
    # check abandoned at its deadline goes on in its thread) would end the silence under it.
    with _TAGGER_LOAD, warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        import textblob.en as tb_en

        tb_en.tag("Load the Zxqvian lexicon in Ouagadougou, flimbering quickly.")
    return tb_en


@memo(_CACHE)
def tags(text: str) -> tuple[tuple[str, str], ...]:
    """Penn Treebank part-of-speech tags from TextBlob's pattern tagger (no NLTK data): what
    ``textblob.en.tag`` returns, read from its tokenizer and tagger directly rather than from
    the slash-formatted string that ``tag`` builds and splits again (the same sentences, tokens
    and tags: no token holds a space or a line break, no tag a ``/`` or an ``&``; a word keeps
    what that round trip makes of it, ``&slash;`` read as ``/``)."""
    if not text.strip():
        return ()
    parser = _tagger().parser
    return tuple(
        (word if "&" not in word else word.replace("/", "&slash;").replace("&slash;", "/"), tag)
        for sentence in parser.find_tokens(text)
        for word, tag in parser.find_tags(sentence.split(" "))
    )


@lru_cache(maxsize=1)
def _zipf() -> Any:
    from wordfreq import zipf_frequency

    return zipf_frequency


@memo(65536, per_word=True)
def zipf(word: str, lang: str = "en") -> float:
    """Zipf frequency of a word in ``lang`` (log10 per billion words; 0 if unseen)."""
    return float(_zipf()(word.lower(), lang))


@lru_cache(maxsize=1)
def _vader() -> Any:
    from vaderSentiment.vaderSentiment import SentimentIntensityAnalyzer

    return SentimentIntensityAnalyzer()


COMPOUND_MAX_CHARS = 1000
"""The most characters of a text VADER reads (its time grows with the square of a text's length:
1 ms for 500 characters, 120 ms for 8,000); a longer text is read up to its last space before
this bound. Every human turn of the calibration sets is shorter, so their values are unchanged."""


def compound(text: str) -> float:
    """VADER's compound sentiment of a text (its first :data:`COMPOUND_MAX_CHARS` characters),
    in [-1, 1]."""
    if len(text) > COMPOUND_MAX_CHARS:
        head = text[:COMPOUND_MAX_CHARS]
        cut = max(head.rfind(" "), head.rfind("\n"))
        text = head[:cut] if cut > 0 else head
    return _compound(text)


@memo(_CACHE)
def _compound(text: str) -> float:
    return float(vader_compound(_vader(), text)) if text.strip() else 0.0


def warm_up() -> None:
    """Load the tagger, the frequency lists and VADER now rather than on first use."""
    tags("Warm up the tagger in Paris.")
    zipf("warm")
    compound("warm up")
