"""Misspelled domain words, corrected and declared before grounding.

People misspell the names of places ("the secnod floor"). A word is corrected when it is not a
word of the domain, not a word the translator reads, and within edit distance 1 (a word of five
letters or more) or 2 (eight letters or more) of exactly one word of the domain's names and
aliases, sharing its first letter. An ordinal in digits with its own ending is its word ("2nd" is
"second"; "2st" is left as it is).

A number word run together with an ordinal's ending that is not its own ("twond", "onest",
"threerd": :func:`fused_ordinals`) is not corrected: it is no misspelling of one word but two
words run together, and which ordinal it stands for is a guess (on people-written drone commands
the intended floor of each such word is spread evenly over the three floors), so the translator
fails the sentence and names the word.

A number word after a domain word whose names take a number is that number ("landmark one" for
``landmark_1``). A place may be named by its distinctive word (a word of exactly one name of two
or more words) with another head noun ("the green area", "the green one": ``green_room``) or
none ("the blue", when "blue" is no word the translator reads). Each correction is named
(``secnod -> second``, ``green area -> green room``) so that the reading says it; a word near two
domain words is left as it is (the sentence then fails on it). Linear in the words, each compared
with the domain's words (bounded: :data:`MAX_VOCABULARY`).

World-free: imports the LTL domain, the translator's lexicon and its cue phrases only.
"""

from __future__ import annotations

import functools
import itertools
import re

from governor.ltl.domain import Domain
from governor.ltl.english import lexicon as lx
from governor.ltl.english.grounding.event_words import OPPOSITE
from governor.ltl.english.phrases.symbols import SYMBOLS

ORDINALS = {
    "one": "first", "two": "second", "three": "third", "four": "fourth", "five": "fifth",
    "six": "sixth", "seven": "seventh", "eight": "eighth", "nine": "ninth", "ten": "tenth",
}  # fmt: skip
MAX_VOCABULARY = 2000
"""Most domain words compared with each unknown word."""
AUXILIARIES = frozenset(
    [
        "do",
        "does",
        "did",
        "is",
        "are",
        "was",
        "were",
        "ca",
        "can",
        "wo",
        "should",
        "must",
        "could",
        "would",
    ]
)
"""Words a detached "n't" negates ("do n't go": "do not go")."""
ENDS = frozenset({"to", "and", "then", "or", "but", "before", "after", "until", "first", "while"})
"""Words after which a place's distinctive word said alone ends its phrase ("the blue and ...")."""
STATES = frozenset(OPPOSITE)
"""State words that end names (``door_open``): no head nouns."""
HEADS = frozenset({"area", "one", "zone", "region", "part", "section", "place", "spot", "space"})
"""Head nouns a place's distinctive word may take instead of its own."""
NUMBERS = {"one": "1", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6",
           "seven": "7", "eight": "8", "nine": "9"}  # fmt: skip
WORDS = {v: k for k, v in NUMBERS.items()}
DIGIT_SUFFIX = {"1": "st", "2": "nd", "3": "rd"}
"""A digit's own ordinal ending ("th" for the others): "2nd" is read "second", "2st" is not."""
_DIGIT_ORDINAL = re.compile(r"([1-9])(st|nd|rd|th)")
_SUFFIXED = re.compile(r"(one|two|three|four|five|six|seven|eight|nine|ten)(st|nd|rd|th)")


def fused_ordinals(sentence: str) -> list[str]:
    """The words of ``sentence`` that run a number word together with an ordinal ending not its
    own ("twond" for two/2nd, "onest", "threerd"; "fourth" is a word): never corrected."""
    out = []
    for word in sentence.split():
        core = word.lower().strip(".,;:!?()'\"")
        m = _SUFFIXED.fullmatch(core)
        if m and core != ORDINALS[m[1]]:
            out.append(core)
    return list(dict.fromkeys(out))


def vocabulary(domain: Domain) -> set[str]:
    """The words of the domain's proposition names, objects and aliases (lower case)."""
    out: set[str] = set()
    for words in _names(domain):
        out |= {w for w in words if w.isalpha() and len(w) > 1}
    for key in domain.aliases:
        out |= {w for w in re.split(r"[\W_]+", key.lower()) if w.isalpha() and len(w) > 1}
    return set(sorted(out)[:MAX_VOCABULARY])


def within(a: str, b: str, limit: int) -> bool:
    """Whether the edit distance of ``a`` and ``b`` (insert, delete, substitute, swap two
    neighbours) is at most ``limit``; banded, so linear in the words' length."""
    if abs(len(a) - len(b)) > limit:
        return False
    prev2: list[int] | None = None
    prev = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        cur = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = a[i - 1] != b[j - 1]
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
            if (
                prev2 is not None
                and i > 1
                and j > 1
                and a[i - 1] == b[j - 2]
                and a[i - 2] == b[j - 1]
            ):
                cur[j] = min(cur[j], prev2[j - 2] + 1)
        prev2, prev = prev, cur
        if min(cur) > limit:
            return False
    return prev[-1] <= limit


def _stem(word: str) -> str:
    """``word`` without one inflection ("escapes", "escaped": "escap"): no correction between
    two forms of one word (the grounders read inflections)."""
    for end in ("ing", "ed", "es", "s", "d", "e"):
        if word.endswith(end) and len(word) > len(end) + 2:
            return word[: -len(end)]
    return word


def _limit(word: str) -> int:
    return 2 if len(word) >= 8 else 1 if len(word) >= 5 else 0


def _names(domain: Domain) -> list[list[str]]:
    """The words of each name: a proposition's own, or its objects' (``agent_at(red_room)``)."""
    out = []
    for p in domain.propositions:
        inner = p[p.index("(") + 1 : -1] if "(" in p else p
        out.append([w for w in re.split(r"[\W_]+", inner.lower()) if w])
    return out


def distinctive(domain: Domain) -> dict[str, list[str]]:
    """Modifier -> the words of the one name it belongs to, for names that end in a head noun
    (:func:`heads`: "green" of ``green_room`` where ``red_room`` is a name too)."""
    seen: dict[str, list[list[str]]] = {}
    for words in _names(domain):
        for w in set(words):
            seen.setdefault(w, []).append(words)
    nouns = heads(domain)
    return {
        w: ns[0] for w, ns in seen.items()
        if len(ns) == 1 and len(ns[0]) > 1 and w.isalpha() and ns[0][-1] in nouns and w != ns[0][-1]
    }  # fmt: skip


def heads(domain: Domain) -> set[str]:
    """The head nouns of the domain's names: a last word of four letters or more that ends two
    names or more (``floor`` of ``first_floor`` and ``second_floor``), no state word."""
    ends: dict[str, int] = {}
    for words in _names(domain):
        if len(words) > 1:
            ends[words[-1]] = ends.get(words[-1], 0) + 1
    return {w for w, n in ends.items() if n > 1 and len(w) >= 4 and w.isalpha() and w not in STATES}


def numbered(domain: Domain) -> set[str]:
    """Words followed by a number in some name (``landmark`` of ``landmark_1``)."""
    out = set()
    for words in _names(domain):
        out |= {a for a, b in itertools.pairwise(words) if b.isdigit()}
    return out


def correct(sentence: str, domain: Domain) -> tuple[str, tuple[str, ...]]:
    """``sentence`` with its misspelled domain words corrected, numbers after numbered names
    as digits and places named by their distinctive word said in full; the corrections named."""
    text, fixes = _spelled(sentence, domain)
    text, more = _headed(text, domain)
    return text, fixes + more


def _headed(sentence: str, domain: Domain) -> tuple[str, tuple[str, ...]]:
    own, known, counted = distinctive(domain), known_words(), numbered(domain)
    words = sentence.split(" ")
    cores = [w.lower().strip(".,;:!?()'\"") for w in words]
    out: list[str] = []
    fixes: list[str] = []
    i = 0
    while i < len(words):
        w, core = words[i], cores[i]
        nxt = cores[i + 1] if i + 1 < len(words) else ""
        name = own.get(core)
        if i and cores[i - 1] in counted and core in NUMBERS:
            out.append(w.lower().replace(core, NUMBERS[core], 1))
            i += 1
            continue
        if name is None or core in known or nxt in name:
            out.append(w)
            i += 1
            continue
        if i > 0 and cores[i - 1] in name:  # "room red": the name's words, out of order
            out.append(w)
            i += 1
            continue
        said = " ".join(name)
        if nxt in HEADS and words[i + 1].lower().strip(".,;:!?()'\"") == nxt:
            tail = words[i + 1].lower()[len(nxt) :]
            fixes.append(f"{core} {nxt} -> {said}")
            out.append(said + tail)
            i += 2
            continue
        if i and cores[i - 1] in lx.DETERMINERS and (not nxt.isalpha() or nxt in ENDS):
            fixes.append(f"the {core} -> {said}")
            out.append(w.lower().replace(core, said, 1))
        else:
            out.append(w)
        i += 1
    return " ".join(out), tuple(fixes)


def _spelled(sentence: str, domain: Domain) -> tuple[str, tuple[str, ...]]:
    vocab, known = vocabulary(domain), known_words()
    out, fixes = [], []
    prev = ""
    for word in sentence.split(" "):
        low = word.lower()
        if low in ("nt", "n't") and prev in AUXILIARIES:  # "do n't", "do nt": not
            out.append("not")
            prev = "not"
            continue
        prev = low
        core = low.strip(".,;:!?()'\"")
        fix = None
        digits = _DIGIT_ORDINAL.fullmatch(core)
        if digits and DIGIT_SUFFIX.get(digits[1], "th") == digits[2]:
            fix = ORDINALS[WORDS[digits[1]]]
        elif core.isalpha() and core not in vocab and core not in known and _limit(core):
            near = [v for v in vocab if v[0] == core[0] and within(core, v, _limit(core))]
            if len(near) == 1 and _stem(core) != _stem(near[0]):
                fix = near[0]
        if fix is None:
            out.append(word)
            continue
        fixes.append(f"{core} -> {fix}")
        out.append(low.replace(core, fix, 1))
    return " ".join(out), tuple(fixes)


@functools.cache
def known_words() -> frozenset[str]:
    """The words the lexicon and the cue phrases read (never corrected to a domain word)."""
    words: set[str] = {w for key in SYMBOLS for w in key}
    for name in dir(lx):
        value = getattr(lx, name)
        if isinstance(value, (set, frozenset, dict)):
            words |= {w for w in value if isinstance(w, str)}
    return frozenset(words)
