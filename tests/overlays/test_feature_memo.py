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
