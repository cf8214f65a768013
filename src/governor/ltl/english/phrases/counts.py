"""The phrase tables of counts and step bounds for the cue normaliser (:mod:`governor.ltl.english.grammar.normaliser`):
the phrases before a number ("at most", "no fewer than") and after it ("or more", "at the very
most"), the words of a counted visit ("times", "visits", "entries"), of a step ("steps",
"moves") and the leads of a step bound ("within", "you have n steps").

Imports the time units only.
"""

from __future__ import annotations

from governor.ltl.english.phrases.time_units import STEP_WORDS

COUNT_BEFORE = {
    "LE": "at most|no more than|not more than|up to|a maximum of|maximum of|at the most|max"
    "|at the very most",
    "GE": "at least|no fewer than|no less than|not less than|a minimum of|minimum of|a minimum"
    "|at the very least",
    "EQ": "exactly|precisely|just|exactly only",
    "GT": "more than|over",
    "LT": "fewer than|less than|under",
}
COUNT_AFTER = {
    "LE": "at most|at the most|or less|or fewer|max|maximum|tops|at the very most|at the outside",
    "GE": "or more|at least|at minimum|minimum|at the very least",
    "EQ": "exactly|precisely|and no more and no less",
}
TIMES = ("times", "time", "visits", "visit", "entries", "entry", "trips", "trip", "stops", "stop")
STEPS = STEP_WORDS
WITHIN = [
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
        "no more than",
        "not more than",
        "up to",
        "a maximum of",
        "you have",
        "have",
    )
]


def _phrases(table: dict[str, str]) -> list[tuple[tuple[str, ...], str]]:
    out = [(tuple(p.split()), k) for k, v in table.items() for p in v.split("|")]
    return sorted(out, key=lambda x: -len(x[0]))


BEFORE_N, AFTER_N = _phrases(COUNT_BEFORE), _phrases(COUNT_AFTER)
