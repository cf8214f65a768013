"""The time units of the cue normaliser (:mod:`governor.ltl.english.grammar.normaliser`): a step may be called a move, a
turn, a tick or a cycle, and every cue phrase said of a step is said of each of them ("on the
very next turn", "one move after", "within four turns", "at no other tick"). A time unit's noun
that no phrase reads ("two turns later", "on the third move", "a few seconds after"), a span
said next ("on the next round"), a vague time ("shortly", "soon") and a time of day ("at night")
are kept as ``TIME``, which no clause reads: the sentence fails rather than lose a time.

Imports nothing of the project.
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["STEP_WORDS", "UNIT_NOUNS", "next_phrases", "unit_variants", "unread_unit"]


def _set(text: str) -> frozenset[str]:
    return frozenset(text.split())


UNITS: dict[str, str] = {
    "step": "steps",
    "move": "moves",
    "turn": "turns",
    "tick": "ticks",
    "cycle": "cycles",
    "time step": "time steps",
    "time instant": "time instants",
    "instant": "instants",
    "timestep": "timesteps",
}
"""Each word of a step (singular -> plural): the time of one transition of the run."""
STEP_WORDS = tuple(w for pair in UNITS.items() for w in pair)
"""The step words after a number ("within 3 turns", "in 2 moves or fewer")."""
UNIT_NOUNS = frozenset(
    {w for w in STEP_WORDS if " " not in w}
    | {"moment", "moments", "instant", "instants", "seconds", "minute", "minutes", "hour", "hours"}
    | {"iteration", "iterations", "frames", "beats"}
)
"""Nouns of a time: left unread, they fail the sentence (see :func:`unread_unit`)."""
_DETERMINERS = _set(
    "the a an one each every any no next following very that this same previous preceding"
    " other subsequent your its their our his her single later earlier current first second"
    " third last few several many some all more fewer consecutive successive another"
)
"""Words after which a step word is a noun ("the next turn"), not a verb ("turn on")."""
_ANY = frozenset({"a", "an", "any", "each", "every", "some", "given"})
"""Determiners of a step in general ("at a step", "every step that ..."): no shift in time."""
_NUMBER_WORDS = _set("two three four five six seven eight nine ten eleven twelve")
_NEXT = ("next", "very next", "following", "very following", "subsequent", "immediately next",
         "immediately following", "immediately subsequent")  # fmt: skip
_POSSESSIVE = ("the", "your", "its", "their", "our", "his", "her")
_AT = ("", "at ", "on ", "in ", "during ", "for ")
_AFTER = ("after", "right after", "just after", "immediately after", "directly after",
          "straight after", "following", "immediately following", "right following",
          "directly following")  # fmt: skip


def next_phrases() -> dict[tuple[str, ...], tuple[str, ...]]:
    """ "on the very next turn", "during your following move": the next step (``NEXT``); "on the
    move right after" a condition: ``NEXT AFTER``; "at the turn just before", "the previous
    move": a past step (``PREV``); "at that very same turn": ``SAME``; "by the next move": then
    or at the next step (``WITHIN_1``); "the step after next": no pattern's time (``TIME``)."""
    out: dict[tuple[str, ...], tuple[str, ...]] = {}
    for unit in UNITS:
        for at in _AT:
            for det in _POSSESSIVE:
                for nxt in _NEXT:
                    out[tuple(f"{at}{det} {nxt} {unit}".split())] = ("NEXT",)
                    out[tuple(f"{at}{det} {nxt} {unit} but one".split())] = ("TIME",)
            for later in ("after next", "after the next", "after the next one", "but one"):
                out[tuple(f"{at}the {unit} {later}".split())] = (
                    "TIME",
                )  # two steps on: no pattern
            if at:
                for after in _AFTER:
                    out[tuple(f"{at}the {unit} {after}".split())] = ("NEXT", "AFTER")
        out[("at", "one", unit)] = ()  # "a at one step and b at the next": any step
        for by in ("by the next", "by the very next", "no later than the next", "by the following"):
            out[tuple(f"{by} {unit}".split())] = ("WITHIN_1",)  # then or at the next step
        for one in ("one", "a", "a single", "exactly one", "precisely one"):
            out[tuple(f"{one} {unit} later".split())] = ("NEXT",)
            out[tuple(f"{one} {unit} afterwards".split())] = ("NEXT",)
    for before in ("at the step before", "the step before", "one step earlier", "a step earlier",
                   "one step before"):  # fmt: skip
        out[tuple(before.split())] = ("PREV",)  # a past step: only the converse rules read it
    for unit in UNITS:
        for at in _AT:
            for before in ("right before", "just before", "immediately before", "directly before"):
                out[tuple(f"{at}the {unit} {before}".split())] = ("PREV",)
            for det in _POSSESSIVE:
                for prev in ("previous", "preceding", "very previous", "prior"):
                    out[tuple(f"{at}{det} {prev} {unit}".split())] = ("PREV",)
        for same in (
            "at that very same",
            "at the very same",
            "in that very same",
            "on that very same",
        ):
            out[tuple(f"{same} {unit}".split())] = ("SAME",)
    return out


def unit_variants(
    symbols: Mapping[tuple[str, ...], tuple[str, ...]],
) -> dict[tuple[str, ...], tuple[str, ...]]:
    """Each cue phrase said of a step, said of every other unit ("at no other step" -> "at no
    other turn"), where no phrase of that wording is there already."""
    out: dict[tuple[str, ...], tuple[str, ...]] = {}
    for phrase, syms in symbols.items():
        at = [i for i, w in enumerate(phrase) if w in ("step", "steps")]
        if len(at) != 1 or (at[0] and phrase[at[0] - 1] == "time"):
            continue
        i = at[0]
        if not (i and phrase[i - 1] in _DETERMINERS | _NUMBER_WORDS):
            continue  # "step out of": a verb
        plural = phrase[i] == "steps"
        for single, many in UNITS.items():
            if single == "step":
                continue
            key = (*phrase[:i], *(many if plural else single).split(), *phrase[i + 1 :])
            if key not in symbols:
                out[key] = syms
    return out


_SPANS = _set(
    "round rounds lap laps day night shift morning evening week opportunity chance occasion break"
    " pause interval period phase"
)
"""Spans and occasions that are no step: "on the next round", "at the first opportunity"."""
_DAYTIMES = _set(
    "night noon midnight morning mornings evening evenings afternoon afternoons dawn dusk"
    " weekend weekends weekday weekdays daytime nighttime sunrise sunset lunchtime bedtime"
)
"""Times of the day or the week: no step says one ("never at night", "not before noon")."""
_AT_TIME = _set("at in on before after until till by past around")
_VAGUE = _set("soon shortly quickly asap fast swiftly speedily rapidly briefly")
"""Times no step bound says: "go there shortly after" is neither "eventually" nor a bound."""


def unread_unit(toks: list[str], i: int) -> bool:
    """Whether ``toks[i]`` is a time unit's noun (after a determiner or a number) that no cue
    phrase read ("on the third move", "two turns later", "a few seconds after"), a span said
    next ("on the next round", "at the first opportunity"), a vague time ("shortly after") or a
    time of day ("never at night")."""
    prev = toks[i - 1] if i else ""
    if toks[i] in _VAGUE:
        return True
    if toks[i] in _DAYTIMES:  # "at night", "in the morning"; not "the night robot", "this evening"
        return prev in _AT_TIME or (prev == "the" and i > 1 and toks[i - 2] in _AT_TIME)
    if toks[i] in _SPANS:
        return prev in ("next", "following", "subsequent", "first", "earliest")
    if toks[i] not in UNIT_NOUNS:
        return False
    if prev in _ANY:  # "the alarm sounds at a step if ...": any step, no shift in time
        closes = (toks[i + 1] if i + 1 < len(toks) else ".") in (".", ",")
        return prev in ("each", "every") and closes  # "go there every turn.": how often, unsaid
    return prev in _DETERMINERS or prev in _NUMBER_WORDS or prev.isdigit()
