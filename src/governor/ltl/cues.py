"""The normaliser of the clause grammar: a lifted sentence's tokens to a string of cue symbols.

Cue phrases (longest first, at most :data:`LONGEST` words) become symbols: ``NOT`` ("never",
"avoid", "stay out of", "off limits"), ``IF`` ("if", "when", "as soon as", a clause-opening
"once"), ``WHENEVER`` ("every time"), ``AFTER``, ``BEFORE``, ``UNTIL`` ("unless"), ``THEN``
("then", "after that", "later", "finally"), ``NEXT`` ("immediately", "at the next step"),
``ORDER`` ("in this order"), ``REPEAT`` ("keep", "patrol", "again and again"), ``IFF`` ("if and
only if"), ``STAY``, ``LEAVE``, ``ONLY``, ``PERF`` ("have"), ... Counts become ``LE_2`` (at most
2), ``GE_2``, ``EQ_2``, ``GT_2``, ``LT_2``, ``N_2`` (a bare "twice") and ``WITHIN_3`` ("within 3
steps"); number words are read as numbers. Placeholders (``P1``) stay; every other word is
dropped. One left-to-right pass: linear in the sentence.

Imports nothing of the project.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

NUMBERS = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "single": 1, "twice": 2, "thrice": 3,
}  # fmt: skip
_CUES = {
    "NOT": "not|never|cannot|no|avoid|avoiding|stay away from|keep away from|keep out of|stay out"
    " of|keep clear of|steer clear of|off limits|away from|forbidden|prohibited|banned|out of bounds|refrain"
    " from|without|no longer|nobody|nowhere|under no circumstances|at no point",
    "MUST": "must|have to|has to|need to|needs to|should|required to|make sure|ensure|be sure to"
    "|do not forget to|do not forget|never forget to|remember to|always remember to|got to|shall",
    "CAN": "can|may|are allowed to|is allowed|allowed to|permitted to|free to",
    "ALWAYS": "always|at all times|at any time|at any point|ever|all the time|throughout",
    "WHENEVER": "whenever|every time|each time|any time|anytime|every single time",
    "IF": "if|when|in case|as soon as|the moment|upon|on reaching|on entering|on arriving at",
    "WHILE": "while|whilst|as long as|during",
    "IFF": "if and only if|iff|exactly when|precisely when|just when|when and only when|exactly"
    " at the steps when|exactly at the times when",
    "AFTER": "after|having|following|since",
    "BEFORE": "before|prior to|ahead of|earlier than",
    "UNTIL": "until|till|unless|up until|up to the point when",
    "THEN": "then|and then|after that|after which|afterwards|afterward|later|later on|next|"
    "subsequently|finally|lastly|at the end|eventually|at some point|sooner or later|in the future"
    "|thereafter|and finally|continue to|proceed to|move on to|end at|finish at|end in|finish in"
    "|end up at|end up in|at last|in the end",
    "FOLLOWED": "followed by|be followed by|is followed by",
    "NEXT": "immediately|right away|straight away|at once|instantly|without delay|promptly|at the"
    " next step|at the very next step|on the next step|in the next step|the next step|next step|"
    "the very next step|the step after|the following step|at the following step|one step later",
    "NEXTAFTER": "right after|immediately after|directly after|just after|straight after|"
    "immediately following|right following",
    "ORDER": "in this order|in that order|in order|in the given order|in the order given|in the"
    " order listed|in the listed order|in sequence|in that sequence|in this sequence|one after"
    " the other|one after another|in the stated order|in the same order|sequentially|in the order"
    " shown|in the order stated|in the order named|in the order i listed|in the order i gave",
    "ANY": "in any order|in whatever order|in no particular order|any order|all of|each of|both|"
    "every one of|all|each|every|either order",
    "REPEAT": "keep|keep on|patrol|patrolling|repeatedly|again and again|over and over|over and "
    "over again|forever|infinitely often|endlessly|continually|continuously|indefinitely|"
    "regularly|periodically|in a loop|on a loop|loop|cycle|cycle through|circulate|time and again"
    "|never stop|round and round|round after round|perpetually",
    "STAY": "stay|remain|wait|stay put|linger|hold position|keep waiting",
    "LEAVE": "leave|exit|depart|depart from|move out of|get out of|go out of|step out of",
    "AGAIN": "again|a second time|come back|go back|return|revisit|re enter|reenter",
    "ONLY": "only|just",
    "AND": "and|as well as|plus|along with|together with|nor",
    "OR": "or",
    "MEANS": "means|implies|requires|obliges you to|means that|forces you to",
    "PERF": "have|has|had|already",
    "SAME": "at the same time|simultaneously|concurrently|at that same step|in the same step|at "
    "the same step|as well",
    "NOW": "now|currently|right now|at that step|at the current step|in the current step|at this"
    " step|at that moment|that same moment",
    "FROMNOW": "ever again|anymore|any more|any longer|from then on|from that point on|from that"
    " moment on|from now on|for good|for the rest of the time|thereafter",
    "FIRST": "first|first of all|to begin|to begin with|to start|start at|start by|begin at|"
    "begin by|start in|start from|begin in|initially|start with|begin with",
    "STRICT": "exactly once each|only once each|once each|each only once|each exactly once|each"
    " once|without returning|never returning|no revisits|without going back|without revisiting"
    " any|not twice|strictly|never revisiting|without revisiting|not revisiting|never going back|"
    "without ever going back|no going back",
}
SYMBOLS: dict[tuple[str, ...], tuple[str, ...]] = {}
for _sym, _text in _CUES.items():
    for _phrase in _text.split("|"):
        SYMBOLS[tuple(_phrase.split())] = (_sym,)
SYMBOLS[("never", "stop")] = ("REPEAT",)
SYMBOLS[("do", "not", "stop")] = ("REPEAT",)
SYMBOLS[("do", "not", "forget")] = ("MUST",)
SYMBOLS[("not", "only")] = ()
for _filler in (
    "no more and no less",
    "no more no less",
    "not more and not less",
    "no less and no more",
):
    SYMBOLS[tuple(_filler.split())] = ()
for _each in ("of every", "of each", "of any", "after every", "after each", "after any"):
    SYMBOLS[tuple(_each.split())] = ("WHENEVER",)
SYMBOLS[(",",)] = ("COMMA",)
SYMBOLS[(".",)] = ("STOP",)
SYMBOLS[("but",)] = ("BUT",)
SYMBOLS[("be",)] = ("BE",)
SYMBOLS[("again",)] = ("AGAIN",)
LONGEST = max(len(k) for k in SYMBOLS)

_COUNT_BEFORE = {
    "LE": "at most|no more than|not more than|up to|a maximum of|maximum of|at the most|max",
    "GE": "at least|no fewer than|no less than|not less than|a minimum of|minimum of|a minimum",
    "EQ": "exactly|precisely|just|exactly only",
    "GT": "more than|over",
    "LT": "fewer than|less than|under",
}
_COUNT_AFTER = {
    "LE": "at most|at the most|or less|or fewer|max|maximum|tops",
    "GE": "or more|at least|at minimum|minimum",
}
_TIMES = ("times", "time", "visits", "visit")
_STEPS = ("steps", "step", "moves", "move", "time steps", "timesteps", "ticks")
_WITHIN = [
    tuple(x.split())
    for x in (
        "within",
        "in at most",
        "in no more than",
        "at most",
        "no later than",
        "in under",
        "in less than",
        "in fewer than",
        "within at most",
    )
]
_PLACEHOLDER = re.compile(r"P\d+")


def _phrases(table: dict[str, str]) -> list[tuple[tuple[str, ...], str]]:
    out = [(tuple(p.split()), k) for k, v in table.items() for p in v.split("|")]
    return sorted(out, key=lambda x: -len(x[0]))


BEFORE_N, AFTER_N = _phrases(_COUNT_BEFORE), _phrases(_COUNT_AFTER)
CUE_WORDS = (
    frozenset(
        w
        for table in (_CUES, _COUNT_BEFORE, _COUNT_AFTER)
        for v in table.values()
        for phrase in v.split("|")
        for w in phrase.split()
    )
    | frozenset(NUMBERS)
    | frozenset({"times", "once", "steps", "step", "same", "time"})
)
"""Every word of a cue phrase: a word that names no place."""


def number(toks: Sequence[str], i: int) -> tuple[int, int] | None:
    """``(n, index after)`` of a number at ``i``: digits, a number word, once/twice/thrice,
    "a single time", "one time"."""
    w = toks[i] if i < len(toks) else ""
    if w == "a" and i + 1 < len(toks) and toks[i + 1] == "single":
        return 1, i + 2
    if w.isdigit() and len(w) <= 3:
        return int(w), i + 1
    if w in NUMBERS:
        return NUMBERS[w], i + 1
    return (1, i + 1) if w == "once" else None


def _starts(toks: Sequence[str], i: int, phrase: tuple[str, ...]) -> bool:
    return tuple(toks[i : i + len(phrase)]) == phrase


def _within(toks: Sequence[str], i: int) -> tuple[str, int] | None:
    """A step bound at ``i``: "within 3 steps" -> ``("WITHIN_3", end)``."""
    for lead in _WITHIN:
        if not _starts(toks, i, lead):
            continue
        j = i + len(lead)
        j += 2 if toks[j : j + 2] == ["the", "next"] else 0
        found = number(toks, j)
        if found is None:
            continue
        for step in _STEPS:
            if _starts(toks, found[1], tuple(step.split())):
                return f"WITHIN_{found[0]}", found[1] + len(step.split())
    return None


def _count(toks: Sequence[str], i: int) -> tuple[str, int] | None:
    """A count or step bound at ``i``: ``("LE_2", end)``, ``("WITHIN_3", end)``."""
    within = _within(toks, i)
    if within is not None:
        return within
    kind = None
    for phrase, k in BEFORE_N:
        if _starts(toks, i, phrase) and number(toks, i + len(phrase)):
            kind, i = k, i + len(phrase)
            break
    found = number(toks, i)
    if found is None:
        return None
    n, j = found
    has_times = toks[i] in ("once", "twice", "thrice")
    for t in _TIMES:
        if toks[j : j + 1] == [t]:
            j, has_times = j + 1, True
            break
    if kind is None:
        for phrase, k in AFTER_N:
            if _starts(toks, j, phrase):
                kind, j = k, j + len(phrase)
                break
    if kind is None and not has_times:
        return None
    return f"{kind or 'N'}_{n}", j


def _once_is_if(toks: Sequence[str], i: int) -> bool:
    """Whether "once" at ``i`` opens a clause ("once you have seen it") rather than counting."""
    prev = toks[i - 1] if i else ""
    nxt = toks[i + 1] if i + 1 < len(toks) else ""
    opens = prev in ("", ",", ".", "and", "but", "then", "that")
    subject = nxt in ("you", "we", "it", "the", "a", "an", "they", "i")
    return subject or (opens and nxt not in ("", ",", ".", "and", "then", "before", "in"))


def symbols(toks: Sequence[str]) -> list[str]:
    """The cue symbols of lifted tokens (placeholders kept, other words dropped)."""
    toks = list(toks)
    out: list[str] = []
    i = 0
    while i < len(toks):
        w = toks[i]
        if _PLACEHOLDER.fullmatch(w):
            out.append(w)
            i += 1
            continue
        if w == "once" and _once_is_if(toks, i):
            out.append("IF")
            i += 1
            continue
        counted = _count(toks, i)
        if counted is not None:
            out.append(counted[0])
            i = counted[1]
            continue
        for n in range(min(LONGEST, len(toks) - i), 0, -1):
            found = SYMBOLS.get(tuple(toks[i : i + n]))
            if found is not None:
                if found == ("NEXTAFTER",):
                    found = ("NEXT", "AFTER")
                out.extend(found)
                i += n
                break
        else:
            i += 1
    return out
