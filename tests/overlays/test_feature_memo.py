"""The per-text caches of the features: bounded in size and in key length, shared by threads."""

from __future__ import annotations

import threading
from collections.abc import Callable

from governor.overlays.features.text import (
    MEMO_CHARS,
    MEMO_WORD_CHARS,
    clear_caches,
    memo,
    word_tuple,
    zipf,
)


def counting(
    maxsize: int, *, per_word: bool = False
) -> tuple[list[str], Callable[..., tuple[str, ...]]]:
    calls: list[str] = []

    @memo(maxsize, per_word=per_word)
    def analyse(text: str, lang: str = "en") -> tuple[str, ...]:
        calls.append(text)
        return tuple(text.split())

    return calls, analyse


def test_a_text_is_analysed_once_until_it_is_the_least_recently_used() -> None:
    calls, analyse = counting(2)
    assert analyse("a b") == ("a", "b") and analyse("a b") == ("a", "b")
    assert calls == ["a b"]
    analyse("c")
    analyse("a b")
    analyse("d")  # drops "c", the least recently used
    analyse("c")
    assert calls == ["a b", "c", "d", "c"]


def test_a_text_too_long_to_keep_is_analysed_afresh_each_time() -> None:
    calls, analyse = counting(8)
    long = "x " * (MEMO_CHARS // 2 + 1)
    assert analyse(long) == analyse(long)
    assert len(calls) == 2
    both = ("y" * (MEMO_CHARS // 2), "z" * (MEMO_CHARS // 2 + 1))  # too long together
    analyse(*both)
    analyse(*both)
    assert len(calls) == 4
    analyse("short", lang="fr")  # keywords: not kept either
    analyse("short", lang="fr")
    assert len(calls) == 6


def test_a_word_cache_keeps_short_words_only() -> None:
    calls, analyse = counting(8, per_word=True)
    analyse("word")
    analyse("word")
    long = "w" * (MEMO_WORD_CHARS + 1)
    analyse(long)
    analyse(long)
    assert calls == ["word", long, long]
    assert zipf("w" * 5000) == 0.0 and zipf("hello") > 3


def test_clear_caches_forgets_every_text() -> None:
    text = "Memoised words, once."
    first = word_tuple(text)
    assert word_tuple(text) is first  # the cached tuple itself
    clear_caches()
    again = word_tuple(text)
    assert again == first and again is not first


def test_threads_share_a_cache_and_get_the_same_values() -> None:
    calls, analyse = counting(64)
    texts = [f"text {i % 16} of many" for i in range(400)]
    results: list[list[tuple[str, ...]]] = [[] for _ in range(4)]

    def run(k: int) -> None:
        results[k] = [analyse(t) for t in texts]

    threads = [threading.Thread(target=run, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    expected = [tuple(t.split()) for t in texts]
    assert all(r == expected for r in results)
    assert 16 <= len(calls) <= 64  # each text computed once, or a few times when threads race


TAGGED = (
    "Oh nice, that sounds like a lovely weekend! What did you enjoy most about it?",
    "I use and/or &slash; a&b/c &amp; x/y/z &slash;/ // / & &&slash;slash; word/NN other/VB",
    "Mr. Smith went to Washington D.C. in 1999... Really?! e.g. etc. i.e. U.S. 3.5 $100 50%",
    "He said \"hi\" and 'bye' — “quoted” ‘single’ don't can't won't I'll",
    "Line one\n\nLine two\r\nthree\n\n\nfour\tfive\x0bsix\u2028seven\x85eight",
    ":) :-( ;) <3 (!) wow!!! http://x.com/a/b?c=d&e=f",
    "ÉCOLE naïve café 中文 日本語 한국어 Zxqvian flimbering quickly",
    "&slash;",
    "/",
    "&",
)


def test_tags_are_what_textblob_tag_returns() -> None:
    import textblob.en

    from governor.overlays.features.text import tags

    clear_caches()
    for text in TAGGED:
        assert tags(text) == tuple((w, t) for w, t in textblob.en.tag(text)), text


def test_no_tag_of_the_tagger_holds_a_separator_of_its_tagged_string() -> None:
    # tags() reads tokens and tags without the "word/TAG word/TAG" string textblob.en.tag
    # builds and splits again: equal only while no tag holds "/", "&", a space or a line break
    from governor.overlays.features.text import _tagger

    # (a word the lexicon lacks gets a default tag or a Penn tag of a suffix rule, e.g. VBN)
    parser = _tagger().parser
    found = set(parser.lexicon.values()) | set(parser.default)
    assert len(found) > 30
    assert not [t for t in found if any(c in t for c in "/& \n")]


SENTIMENTS = (
    "Oh nice, that sounds like a lovely weekend! What did you enjoy most about it?",
    "I do NOT like this at all, it is GREAT but awful!!! Really??",
    "It was kind of good, sort of bad, not bad at all, never so happy, without doubt great.",
    "No good, no love or hate, at least not terrible, very least ok, least happy.",
    "That's the bomb, yeah right, to die for, the shit; kiss of death, bus stop, bad ass.",
    "I can't say it isn't nice. He won't. She wouldn't hate it. Hardly fine, barely okay.",
    "I love it 😀❤️ so much 😢 — café naïve  日本語 :) :( <3",
    "but but but good bad but nice",
    "EXTREMELY HAPPY and extremely happy and Extremely SAD",
    "?!?!",
    "   ",
    "",
)


def test_the_compound_score_is_what_vader_polarity_scores_returns() -> None:
    from governor.overlays.features.sentiment import vader_compound
    from governor.overlays.features.text import _vader

    analyzer = _vader()
    assert not [e for e in analyzer.emojis if e.isascii()]  # an ASCII text has no emoji
    words = [w for t in SENTIMENTS for w in t.split()]
    texts = [*SENTIMENTS, *(" ".join(words[i : i + 7]) for i in range(len(words)))]
    for text in texts:
        expected = analyzer.polarity_scores(text)["compound"]
        assert repr(vader_compound(analyzer, text)) == repr(expected), text
