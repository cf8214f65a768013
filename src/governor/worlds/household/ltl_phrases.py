"""The household's phrase table for the offline grounder (:data:`HOUSEHOLD_PHRASES`, carried by
its :class:`~governor.ltl.domain.Domain`): an action grounded to the state it leaves (``open X``
-> ``is_open(X)``, ``close X`` -> ``!is_open(X)``, ``pick up``/``grab X`` -> ``is_grabbed(X)``,
``put X in Y`` -> ``is_in(X, Y)``, ``put X on Y`` -> ``is_on(X, Y) | is_in(X, Y)``, ``turn on X``
-> ``is_switchedon(X)``), and a described state (``the fridge is open``, ``the salmon is in the
fridge``, ``the kitchen is visited``). Each reads a bounded window.

Imports the runtime's English translator (scanner, lexicon, cue words, phrase-table type) and LTL
operators; nothing else of the household.
"""

from __future__ import annotations

from governor.ltl.english import lexicon as lx
from governor.ltl.english.grounding.scanner import Scanner
from governor.ltl.english.grounding.world_phrases import WorldPhrases
from governor.ltl.english.phrases.symbols import CUE_WORDS
from governor.ltl.operators import Not
from governor.ltl.syntax import Formula

ACTION_PREDICATES = (
    (lx.PICK | lx.GRAB, "is_grabbed("),
    (lx.OPEN | lx.CLOSE, "is_open("),
    (lx.SWITCH, "is_switchedon("),
    (lx.PUT, "is_"),
)


"""The predicate each kind of action needs (a domain without it reads the words otherwise)."""


def action(scan: Scanner, i: int) -> tuple[int, Formula] | None:
    """An action phrase at ``i``: open, close, grab, pick up, switch on/off, put."""
    w, nxt = scan.at(i), scan.at(i + 1)
    needs = [p for words, p in ACTION_PREDICATES if w in words]
    if needs and not any(p.startswith(needs[0]) for p in scan.domain.known):
        # a domain without this kind of action: "take the lift" names a place, "pick a
        # route" no object; "pick up the chicken" still names a missing proposition
        after = i + 1 + (nxt in ("up", "on", "off"))
        target, _ = scan.obj(after)
        if (target and scan.domain.location(target)) or (w in lx.PICK and nxt != "up"):
            return None
        while scan.at(after) in lx.DETERMINERS:
            after += 1
        if target is None and scan.at(after) in CUE_WORDS:
            return None  # "this holds every time": no object named
    if w in lx.PICK and nxt == "up":
        x, j = scan.need(i + 2, i)
        return j, scan.prop("is_grabbed", x)
    if w in lx.PICK and scan.content(i + 1):
        x, j = scan.need(i + 1, i)
        return (j + 1, scan.prop("is_grabbed", x)) if scan.at(j) == "up" else None
    if w in lx.SWITCH and nxt in ("on", "off"):
        x, j = scan.need(i + 2, i)
        f = scan.prop("is_switchedon", x)
        return j, f if nxt == "on" else Not(f)
    if w in lx.SWITCH and scan.content(i + 1):
        x, j = scan.need(i + 1, i)
        if scan.at(j) not in ("on", "off"):
            return None
        f = scan.prop("is_switchedon", x)
        return j + 1, f if scan.at(j) == "on" else Not(f)
    if w in lx.GRAB | lx.OPEN | lx.CLOSE | lx.PUT and scan.content(i + 1):
        x, j = scan.need(i + 1, i)
        if w in lx.GRAB:
            return j, scan.prop("is_grabbed", x)
        if w in lx.OPEN | lx.CLOSE:
            f = scan.prop("is_open", x)
            return j + (scan.at(j) == "up"), f if w in lx.OPEN else Not(f)
        prep = scan.at(j)
        if prep not in lx.IN | lx.ON:
            return None
        y, k = scan.need(j + 1, i)
        return k, scan.prop("is_in", x, y) if prep in lx.IN else scan.onto(x, y)
    return None


_RELATIVE = frozenset({"preceding", "following", "before", "after", "behind", "than", "of"})
"""Words after which a pronoun is their object, not the subject of a state."""


def state(scan: Scanner, i: int) -> tuple[int, Formula, str] | None:
    """A described state at ``i``: ``the fridge is open``, ``salmon is in the fridge``."""
    if scan.at(i) in lx.PRONOUNS and scan.at(i - 1) in _RELATIVE:
        return None  # "before the one preceding it has been visited": "it" is not the subject
    x, j = scan.obj(i)
    if x is None or scan.at(j) not in ("is", "are", "was", "has"):
        return None
    if scan.at(j) == "has" and scan.at(j + 1) != "been":
        return None  # "after it has visited the gym": active, the agent's visit
    k = j + 1 + (scan.at(j + 1) == "been")
    neg = scan.at(k) == "not"
    k += neg
    w = scan.at(k)
    f: Formula
    if w in ("visited", "entered", "reached") and not neg:
        return k + 1, scan.place(x), "you have {}"
    if w in ("open", "opened", "closed", "shut"):
        f = scan.prop("is_open", x)
        f = f if w in ("open", "opened") else Not(f)
    elif w in lx.IN and scan.content(k + 1):
        y, end = scan.need(k + 1, i)
        return end, _sign(scan.prop("is_in", x, y), neg), "{} holds"
    elif w in lx.ON and scan.content(k + 1):
        y, end = scan.need(k + 1, i)
        return end, _sign(scan.onto(x, y), neg), "{} holds"
    elif w in ("on", "off"):
        f = scan.prop("is_switchedon", x)
        f = f if w == "on" else Not(f)
    elif w in ("held", "grabbed"):
        f = scan.prop("is_grabbed", x)
    else:
        return None
    return k + 1, _sign(f, neg), "{} holds"


def _sign(f: Formula, neg: bool) -> Formula:
    return Not(f) if neg else f


HOUSEHOLD_PHRASES = WorldPhrases("household", action, state)
"""The household's actions and described states, for its translation domain."""
