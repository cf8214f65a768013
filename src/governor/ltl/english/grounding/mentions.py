"""Mentions of a domain's bare propositions by their words: ``person_seen`` in "a person is
seen" or "you see a person", ``door_open`` in "the door is open" or "open the door", ``alarm`` in
"the alarm sounds".

A proposition's name is split at ``_`` into words. It is mentioned by its words in order, with
determiners and copulas between them ("the battery is low"; "not" among them negates it), or
with its last word first as a verb ("see a person", "press the button"). A word matches its
inflections (``sees``, ``saw`` for ``seen``; ``opens`` for ``open``). A one-word proposition may
be followed by what it does ("the alarm sounds", "goes off", "is on"), which is part of the
mention. Matching reads a bounded window at one position: linear in the sentence.

World-free: imports the LTL syntax and parser only.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from governor.ltl.operators import Not
from governor.ltl.parser import atom
from governor.ltl.syntax import Formula

_SKIP = (
    "the a an any some is are was were be been being gets get becomes become has have had must"
    " should will would can may to always still also stays remains keep keeps turns turn turned"
    " goes went need needs too very"
)
SKIP = frozenset(_SKIP.split())
"""Words allowed between a proposition's words."""
MAX_SKIP = 3
DOES = (
    ("goes", "off"), ("go", "off"), ("went", "off"), ("is", "on"), ("turns", "on"),
    ("is", "active"), ("is", "raised"), ("is", "triggered"), ("is", "detected"), ("is", "true"),
    ("sounds",), ("sound",), ("sounding",), ("rings",), ("ringing",), ("fires",), ("beeps",),
    ("happens",), ("happened",), ("occurs",), ("holds",), ("activates",), ("starts",),
    ("flashes",), ("blinks",), ("is", "heard"), ("is", "seen"), ("is", "on"), ("ring",), ("rang",),
    ("blows",), ("blow",), ("beep",),
)  # fmt: skip
"""What a one-word proposition may be said to do (longest first within a first word)."""
IRREGULAR = {
    "seen": "see sees saw seeing spot spots spotted notice notices noticed observe observes",
    "heard": "hear hears hearing",
    "found": "find finds finding",
    "done": "do does did",
    "low": "lower",
    "on": "switched turned",
    "off": "switched turned",
}


def forms(word: str) -> frozenset[str]:
    """The inflections of ``word`` a mention may use."""
    out = {word, word + "s", word + "es", word + "ed", word + "d", word + "ing"}
    if word.endswith("ed") and len(word) > 4:
        stem = word[:-2]
        out |= {stem, stem + "s", stem + "ing", word[:-1], word[:-1] + "s"}
        if len(stem) > 2 and stem[-1] == stem[-2]:
            out |= {stem[:-1], stem[:-1] + "s"}
    if word.endswith("s") and len(word) > 3:
        out.add(word[:-1])
    if word.endswith("ing") and len(word) > 6:  # "snowing": "it snows"; "greeting": "greet"
        stem = word[:-3][:-1] if word[-4] == word[-5] else word[:-3]
        out |= {stem, stem + "s", stem + "ed", stem + "es"}
    out |= set(IRREGULAR.get(word, "").split())
    return frozenset(out)


class PropMatcher:
    """Finds mentions of the bare propositions ``names`` in a token list."""

    def __init__(self, names: Iterable[str]) -> None:
        self.props: list[tuple[str, tuple[frozenset[str], ...]]] = []
        for name in sorted(set(names), key=lambda n: -len(n.split("_"))):
            parts = [w for w in name.split("_") if w]
            if parts:
                self.props.append((name, tuple(forms(w) for w in parts)))

    def match(self, toks: Sequence[str], i: int) -> tuple[int, Formula] | None:
        """``(end, formula)`` of a mention starting at ``i`` (after determiners); "without" a
        mention negates it ("a step without a gate signal")."""
        if i < len(toks) and toks[i] == "without":
            found = self._match(toks, i + 1)
            if found is not None:
                f = found[1]
                return found[0], f.arg if isinstance(f, Not) else Not(f)
        return self._match(toks, i)

    def pronoun(self, toks: Sequence[str], i: int, last: str | None) -> tuple[int, Formula] | None:
        """ "it is not green" / "it does not ring" after a mention of ``light_green`` /
        ``alarm``: the negation of the proposition named last, when a word of it (or what it
        does) follows the negation; "it sounds" (what it does, no negation) is the proposition."""
        if last is None or toks[i : i + 1] != ["it"]:
            return None
        words = next(w for name, w in self.props if name == last)
        if tuple(toks[i + 1 : i + 3]) not in NEGATORS:
            end = _does(toks, i + 1)
            return (end, atom(last)) if end > i + 1 and len(words) == 1 else None
        j = i + 3
        end = _does(toks, j)
        if end == j and j < len(toks) and any(toks[j] in accepted for accepted in words):
            end = j + 1
        return (end, Not(atom(last))) if end > j else None

    def _match(self, toks: Sequence[str], i: int) -> tuple[int, Formula] | None:
        for name, words in self.props:
            found = _in_order(toks, i, words)
            if found is None and len(words) > 1:
                found = _verb_first(toks, i, words)
            if found is None and len(words) == 2:  # "the battery is low" for low_battery
                found = _in_order(toks, i, words[::-1])
            if found is None:
                continue
            end, neg = found
            if len(words) == 1:
                negated = _does_not(toks, end)
                end, neg = (negated, not neg) if negated is not None else (_does(toks, end), neg)
            f = atom(name)
            return end, Not(f) if neg else f
        return None


def _in_order(
    toks: Sequence[str], i: int, words: tuple[frozenset[str], ...]
) -> tuple[int, bool] | None:
    while i < len(toks) and toks[i] in ("the", "a", "an"):
        i += 1
    neg, j = False, i
    for k, accepted in enumerate(words):
        skipped = 0
        while k and j < len(toks) and toks[j] not in accepted and skipped < MAX_SKIP:
            if toks[j] == "not":
                neg = True
            elif toks[j] not in SKIP:
                return None
            j += 1
            skipped += 1
        if j >= len(toks) or toks[j] not in accepted:
            return None
        j += 1
    return j, neg


def _verb_first(
    toks: Sequence[str], i: int, words: tuple[frozenset[str], ...]
) -> tuple[int, bool] | None:
    if i >= len(toks) or toks[i] not in words[-1]:
        return None
    found = _in_order(toks, i + 1, words[:-1])
    return None if found is None else (found[0], False)


NEGATORS = (("does", "not"), ("do", "not"), ("did", "not"), ("is", "not"))
"""What makes a one-word proposition's doing negative ("the alarm does not sound")."""


def _does_not(toks: Sequence[str], j: int) -> int | None:
    """The end of "does not sound" / "is not on" after a one-word proposition, or None."""
    if tuple(toks[j : j + 2]) not in NEGATORS:
        return None
    if toks[j] == "is":  # "is not on" is "is on" negated
        end = _does(["is", *toks[j + 2 : j + 4]], 0)
        return j + 1 + end if end > 1 else None
    end = _does(toks, j + 2)
    return end if end > j + 2 else None


def _does(toks: Sequence[str], j: int) -> int:
    for phrase in DOES:
        if tuple(toks[j : j + len(phrase)]) == phrase:
            return j + len(phrase)
    return j
