"""Event grounding: an event phrase read as the domain's proposition whose name it says in other
words ("the battery runs low" -> ``low_battery``, "an order comes in" -> ``order_received``,
"the timer goes off" -> ``timer_done``, "wear your mask" -> ``mask_on``, "the door is closed"
-> ``!door_open``).

Each word of a proposition's name (of two words or more) must be said, by its stem or by a
phrase of its event family (:mod:`governor.ltl.english.grounding.event_words`), in the name's order, reversed
(two words: "the battery runs low"), or with the last word first as a verb ("sound the horn";
the last two of three, a verb and its particle: "hand over the package").
Between the words may stand auxiliaries, "becoming" verbs, "not" (negating), a relative "that
is", "eventually", and after the subject a short phrase that modifies it ("the patient in room 7
calls"). "it" stands for the subject of a proposition named before ("whenever the alarm sounds,
it must eventually be reset" -> ``alarm_reset``). Each proposition that fits is scored (a word
said by its own stem 2, by its family 1); the best one must score more than any other:
otherwise the phrase is ambiguous and grounding fails with both names, never a guess. Matching
reads a bounded window at one position: linear in the sentence.

World-free: imports the event vocabulary, the cue words, the LTL syntax and the parser.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from governor.errors import SpecError
from governor.ltl.english.grounding import event_words as ew
from governor.ltl.english.phrases.symbols import CUE_WORDS
from governor.ltl.operators import Not
from governor.ltl.parser import atom
from governor.ltl.syntax import Formula

MAX_SKIP = 3
"""Words allowed between two words of a name (a modifying phrase counts as one skip)."""
MAX_MODIFIER = 3
"""Words of a phrase modifying the subject ("in room 7")."""
PRONOUNS = frozenset({"it", "they"})
WINDOW = 12
"""Words read from one position (the matcher is linear in the sentence)."""


@dataclass(frozen=True)
class _Word:
    """One word of a proposition's name and the stem phrases that say it (or its opposite)."""

    stem: str
    same: frozenset[tuple[str, ...]]
    opposite: frozenset[tuple[str, ...]]
    noun: bool

    def at(self, stems: Sequence[str], j: int) -> tuple[int, bool, int] | None:
        """``(end, negated, score)`` of the longest phrase saying this word at ``j``."""
        best: tuple[int, bool, int] | None = None
        for phrases, neg in ((self.same, False), (self.opposite, True)):
            for p in phrases:
                if tuple(stems[j : j + len(p)]) == p and (best is None or j + len(p) > best[0]):
                    best = (j + len(p), neg, 2 if p == (self.stem,) else 1)
        if best is None and j < len(stems) and ew.part_of(self.stem, stems[j], self.noun):
            best = (j + 1, False, 1)  # "temp" for "temperature", "bell" for "doorbell"
        return best


def _words(name: str) -> tuple[_Word, ...]:
    """A name's words; its nouns are those of no event family, not inflected as a verb (a last
    word in ``-s`` is a verb: ``bus_arrives``), or else those of no family."""
    parts = [w for w in name.split("_") if w]
    last = len(parts) - 1
    plain = [
        not ew.families_of(w) - ew.NOUN_FAMILIES
        and not w.endswith(("ed", "ing"))
        and not (w.endswith("en") and ew.stem(w) != w)  # "broken", not "chicken"
        and not (k == last and w.endswith("s"))
        for k, w in enumerate(parts)
    ]
    if not any(plain):
        plain = [not ew.families_of(w) for w in parts]
    sounder = any(w in ew.SOUNDERS or w[:-1] in ew.SOUNDERS for w in parts)  # "alarms" too
    out = []
    for w, noun in zip(parts, plain, strict=True):
        same, opposite = ew.sayings(w, sounder)
        out.append(_Word(ew.stem(w), same, opposite, noun))
    return tuple(out)


@dataclass(frozen=True)
class EventMention:
    """A proposition said by an event phrase: where the phrase ends, and its formula."""

    end: int
    formula: Formula
    name: str


class EventMatcher:
    """Finds event phrases that say one of the propositions ``names`` (of two words or more)."""

    def __init__(self, names: Iterable[str]) -> None:
        self.props = [(n, _words(n)) for n in sorted(set(names)) if len(n.split("_")) > 1]
        self.nouns = {n: frozenset(w.stem for w in ws if w.noun) for n, ws in self.props}

    def match(
        self, toks: Sequence[str], i: int, referents: Sequence[str] = ()
    ) -> EventMention | None:
        """The proposition said at ``i`` ("it" is the subject of the first of ``referents`` that
        fits); raises :class:`SpecError` when two propositions fit equally well."""
        raw = list(toks[i : i + WINDOW])
        stems = [ew.stem(t) for t in raw]
        refs = [r for r in referents if r in self.nouns] if PRONOUNS & set(raw) else []
        ordered = i == 0 or toks[i - 1] in ew.ORDER_OPENERS  # an order to the agent may open here
        for ref in [*refs, ""]:
            it = self.nouns.get(ref, frozenset())
            found = [
                (s, e, n, neg)
                for n, ws in self.props
                for s, e, neg in _fits(raw, stems, ws, it, ordered)
            ]
            if found:
                return self._best(found, toks, i)
        return None

    def _best(
        self, found: list[tuple[int, int, str, bool]], toks: Sequence[str], i: int
    ) -> EventMention:
        found.sort(key=lambda f: (-f[0], -f[1]))
        score, end, name, neg = found[0]
        rival = next((f for f in found[1:] if f[2] != name and f[0] == score), None)
        if rival is not None:
            phrase = " ".join(toks[i : i + max(end, rival[1])])
            raise SpecError(
                f"cannot ground {phrase!r}: expected one proposition, found two that fit"
                f" equally well ({name}, {rival[2]})"
            )
        f = atom(name)
        return EventMention(i + end, Not(f) if neg else f, name)


def _fits(
    raw: list[str], stems: list[str], words: tuple[_Word, ...], it: frozenset[str],
    ordered: bool = False,
) -> Iterable[tuple[int, int, bool]]:  # fmt: skip
    """``(score, end, negated)`` of each way ``words`` are said from the window's start."""
    start = 1 if raw[:1] == ["no"] else 0  # "no coin is inserted": the event negated
    while start < len(raw) and raw[start] in ew.DETERMINERS:
        start += 1
    if start and _modifier(raw, stems, start, words[0]):
        start += 1  # "the trash bin is full": a noun modifying the subject (after a determiner)
    orders = [words]
    if len(words) == 2:
        orders.append(words[::-1])
    if ordered and len(words) > 1 and words[0].stem in ew.AGENTS:
        orders.append(words[1:])  # "..., stop at the next step" for robot_stopped
    for order in orders:
        got = _in_order(raw, stems, start, order, it)
        if got is None:
            continue
        own = got[0] >= 2 * len(order) and ew.timed_after(raw[got[1] :])
        if len(order) < len(words) and not own:
            continue  # the agent unsaid: its event in its own words, then a time or nothing
        yield got[0], got[1], got[2] != (start > 0 and raw[0] == "no")
    for k in range(1, min(2, len(words) - 1) + 1):  # "sound the horn", "hand over the parcel"
        head = _in_order(raw, stems, 0, words[-k:], frozenset())
        if head is None:
            continue
        j = head[1]
        while j < len(raw) and raw[j] in ew.DETERMINERS:
            j += 1
        j += _modifier(raw, stems, j, words[0])  # "pick up the raw chicken"
        got = _in_order(raw, stems, j, words[:-k], it)
        if got is not None:
            yield got[0] + head[0], got[1], got[2] != head[2]


def _modifier(raw: list[str], stems: list[str], j: int, first: _Word) -> bool:
    """Whether ``raw[j]`` is a word modifying the noun ``first`` said right after it."""
    if j >= len(raw):
        return False  # the sentence ends here: no word to modify anything
    plain = raw[j] not in ew.SKIP and raw[j] not in PRONOUNS and raw[j] not in CUE_WORDS
    return (
        plain and first.noun and first.at(stems, j) is None and first.at(stems, j + 1) is not None
    )


def _in_order(
    raw: list[str], stems: list[str], j: int, words: tuple[_Word, ...], it: frozenset[str]
) -> tuple[int, int, bool] | None:
    neg, score, k = False, 0, 0
    while k < len(words):
        if k:
            head = ("noun" if words[0].noun else "any") if k == 1 else ""  # "the GPS signal"
            j, neg = _skip(raw, stems, j, words[k], neg, modifier=k == 1, head=head)
            if j < 0:
                return None
        if j < len(raw) and raw[j] in PRONOUNS and words[k].stem in it:
            j, score = j + 1, score + 2
            while k + 1 < len(words) and words[k + 1].stem in it:
                k += 1
            k += 1
            continue
        said = words[k].at(stems, j)
        if said is None:
            return None
        j, neg, score, k = said[0], neg != said[1], score + said[2], k + 1
    if j < len(raw) and raw[j] in ew.PARTICLES:
        j += 1
    used_it = any(w in PRONOUNS for w in raw[:j])
    if used_it and all(w in PRONOUNS or w in ew.SKIP for w in raw[:j]):
        return None  # "it" alone says nothing of the event
    return (score, j, neg) if not it or used_it else None


def _noun_modifier(raw: list[str], stems: list[str], j: int, word: _Word) -> bool:
    """Whether ``raw[j]`` modifies the noun ``word`` said right after it."""
    if j >= len(raw):
        return False
    plain = raw[j] not in CUE_WORDS and raw[j] not in PRONOUNS and raw[j] not in ew.STOPS
    return plain and word.noun and word.at(stems, j + 1) is not None


def _skip(
    raw: list[str], stems: list[str], j: int, word: _Word, neg: bool, modifier: bool,
    head: str = "",
) -> tuple[int, bool]:  # fmt: skip
    """The index after the words allowed before ``word`` (-1 when others stand there); after a
    name's first word, the ``head`` noun the name leaves out may stand ("the GPS signal is lost"
    for ``gps_lost``), unless it names a device of its own ("the hatch sensor")."""
    skipped = 0
    while j < len(raw) and word.at(stems, j) is None and raw[j] not in PRONOUNS:
        w = raw[j]
        if skipped >= MAX_SKIP:
            return -1, neg
        if w in ("not", "never"):  # "the light is never on": said negated
            neg = not neg
        elif modifier and w in ew.PREPOSITIONS and skipped == 0:
            end = j + 1
            while end < len(raw) and end - j <= MAX_MODIFIER and word.at(stems, end) is None:
                if raw[end] in ew.STOPS:
                    return -1, neg
                end += 1
            j = end - 1
        elif _noun_modifier(raw, stems, j, word):
            pass  # "the milking stall" for cow_in_stall: a noun modifying the word's noun
        elif head and skipped == 0 and w not in CUE_WORDS and w not in ew.SKIP | ew.STOPS:
            if head == "noun" and w in ew.DEVICES:
                return -1, neg  # "the hatch sensor" is another thing than the hatch
            pass  # "stop button", "the GPS signal": the name said its modifier only
        elif w not in ew.SKIP and w not in ew.CARRIED:
            return -1, neg
        j += 1
        skipped += 1
    return j, neg
