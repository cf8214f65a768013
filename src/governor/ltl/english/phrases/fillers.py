"""The filler phrases of the cue normaliser (:mod:`governor.ltl.english.grammar.normaliser`): phrases that restate
what a sentence already says ("no more and no less" after an exact count, "without exception"
after a reaction) or frame the whole run ("for as long as the mission runs", "during the run").
Each becomes no symbol, where it holds (:func:`filler_holds`): a filler before "than" opens a
count ("but not more than three times"), and "..., then or" / "immediately or" close a time only
before a later time ("immediately or within 3 steps"), not before "never". "But no more" after a
lower bound makes the count exact ("at least twice, but no more": exactly twice).

Imports nothing of the project.
"""

from __future__ import annotations

FILLERS: tuple[str, ...] = (
    "not necessarily right away",
    "not necessarily immediately",
    "not necessarily at once",
    "no more and no less",
    "no more no less",
    "not more and not less",
    "no less and no more",
    "no more and no fewer",
    "no fewer and no more",
    "not fewer , not more",
    "not more , not fewer",
    "not fewer and not more",
    "not more and not fewer",
    "no more , no fewer",
    "no fewer , no more",
    "if at all",
    "not more , not less",
    "not less , not more",
    "no more , no less",
    "no less , no more",
    "not more not less",
    "but not more",
    "but no more",
    "and no more",
    "and not more",
    "but never more",
    "and never more",
    "for as long as the mission runs",
    "as long as the mission runs",
    "for as long as the mission lasts",
    "as long as the mission lasts",
    "during the mission",
    "throughout the mission",
    "for the whole mission",
    "for the entire mission",
    "neither more nor less",
    "neither more nor fewer",
    "neither fewer nor more",
    "neither less nor more",
    "without exception",
    "with no exception",
    "with no exceptions",
    "no exceptions",
    "for as long as you run",
    "as long as you run",
    "for as long as you operate",
    "as long as you operate",
    "during the run",
    "during your run",
    "over the course of the run",
    "over the course of the mission",
    "in the course of the mission",
    "by the end of the mission",
    "by the end of the run",
    "before the mission ends",
    "before the run ends",
    "before the end of the mission",
    "before the end of the run",
    "until the end of the mission",
    "until the mission ends",
    "until the end of the run",
    "to the end of the mission",
    "not before and not after",
    "not before , not after",
    "not before or after",
    "no earlier and no later",
    "no sooner and no later",
    "before the day is over",
    "before the day is out",
    "before the day is done",
    "before the day ends",
    "by the end of the day",
    "before the end of the day",
    "by the end of the tour",
    "before the tour ends",
    "by the end of your shift",
    "before your shift ends",
    "before the shift ends",
    "during the tour",
    "during your tour",
    "during the trip",
    "during your trip",
    "during the shift",
    "during your shift",
    "during the day",
    "no later",  # "at the next tick, no later": the deadline said again ("no later than" is not)
    "and no later",
    "not a step later",
    "and not a step later",
)
"""Phrases dropped by the normaliser (a comma is written " , ")."""


_LATER = frozenset({"within", "in", "at", "on", "by", "later", "afterwards", "soon", "some", "no"})
"""Words that open the later time after "immediately or" ("immediately or within 3 steps")."""


def filler_holds(phrase: tuple[str, ...] | list[str], following: list[str]) -> bool:
    """Whether the filler ``phrase`` says nothing before the word ``following`` (see above)."""
    if following == ["than"]:
        return False
    return phrase[-1] != "or" or (following[:1] or [""])[0] in _LATER


def no_more(phrase: tuple[str, ...] | list[str]) -> bool:
    """Whether the filler ``phrase`` denies a greater count ("but no more", "and never more")."""
    return len(phrase) == 3 and phrase[0] in ("but", "and") and phrase[2] == "more"
