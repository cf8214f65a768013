"""Short navigation commands read by a named convention: conventions as data.

People give a robot short commands ("go through the blue room to the green room", "avoid the
red room until you reach landmark 2", "go to landmark 3 without leaving the second floor").
What such a command means is partly a convention of whoever wrote the intended formulas: is
"go to A avoiding B" ``F(A & !B)`` (not B on arriving) or ``!B U A`` (not B on the way)? The
table :data:`COMMANDS` holds, per convention, the command shapes and the formula each one means,
each with its name; the reading names the shape and the convention.

Convention :data:`DRONE` ("drone_commands") is that of the drone-planning commands of Gopalan et
al. (RSS 2018): a route or order is the ordered visit ``F(a & F b)``; "avoid b" said with a goal
is ``F(goal & !b)``, unless "until" is said or the command permits b once the goal is reached
(then ``!b U goal``); "stay on b" / "without leaving b" with a goal is ``F goal & G b``.

Precision first: a command is read only when every word is consumed: by a placeholder, a cue of
the shape, or a declared filler (:data:`FILLERS`: determiners, motion verbs, "make sure to"...);
otherwise no reading is offered and the error names the words no shape could place. Timing and
counting words are no fillers, so a command that says one is never read without it. An avoidance
set off by a comma after the goal ("get to A, while avoiding B") is not read: on the way or on
arriving is not told (:func:`set_off_avoid`).

Linear: the words are mapped to symbols in one pass; each shape is one regular expression over
the symbols, matched whole.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from governor.errors import SpecError
from governor.ltl import operators as op
from governor.ltl import syntax as s
from governor.ltl.english.grammar.readings import DRONE_COMMANDS

DRONE = DRONE_COMMANDS
"""The drone-planning set's conventions (Gopalan et al., RSS 2018)."""

_MOTION = (
    "go", "goes", "going", "gone", "went", "navigate", "navigating", "head", "heading", "move",
    "moving", "proceed", "proceeding", "travel", "travelling", "traveling", "fly", "flying",
    "get", "getting", "got", "continue", "continuing", "reach", "reaching", "reached", "visit",
    "visiting", "enter", "entering", "advance", "come", "make your way", "find your way",
    "make way", "make it", "pass", "passing", "passed", "touch", "touching", "stepping",
)  # fmt: skip
SYMBOLS: dict[tuple[str, ...], str] = {}
for _w in _MOTION:
    SYMBOLS[tuple(_w.split())] = "GO"
for _phrase, _sym in {
    "the": "", "a": "", "an": "", "please": "", "directly": "", "straight": "", "just": "",
    "to": "TO", "towards": "TO", "toward": "TO", "into": "TO", "in to": "TO", "over to": "TO",
    "down to": "TO", "up to": "TO", "down": "", "up": "", "make sure to": "", "make sure you": "", "ensure you": "", "ensure": "", "ensure that you": "",
    "be sure to": "", "on your way to": "TO", "on the way to": "TO", "to get to": "TO",
    "then": "THEN", "and then": "THEN", "after that": "THEN", "afterwards": "THEN",
    "through": "THROUGH", "via": "THROUGH", "by way of": "THROUGH", "pass through": "THROUGH",
    "by": "BY", "first": "FIRST", "before": "BEFORE", "before you": "BEFORE",
    "before you have": "BEFORE", "after": "AFTER", "from": "FROM",
    "and": "AND", "but": "BUT", "while": "WHILE", "always": "ALWAYS", "avoid": "AVOID",
    "avoiding": "AVOID", "stay away from": "AVOID", "keep away from": "AVOID",
    "staying away from": "AVOID", "without": "WITHOUT", "do not": "NOT", "dont": "NOT",
    "do nt": "NOT", "never": "NOT", "not": "NOT", "do not ever": "NOT", "do nt ever": "NOT",
    "dont ever": "NOT", "until": "UNTIL", "until after": "UNTIL",
    "until you": "UNTIL", "until you have": "UNTIL", "until you ve": "UNTIL",
    "until after you": "UNTIL", "until after you have": "UNTIL", "until after you ve": "UNTIL",
    "until you have been to": "UNTIL", "stay in": "STAY", "stay on": "STAY", "stay within": "STAY",
    "staying in": "STAY", "staying on": "STAY", "staying within": "STAY", "remain on": "STAY",
    "remain in": "STAY", "remain within": "STAY", "remaining on": "STAY", "remaining in": "STAY",
    "remaining within": "STAY", "only navigating within": "STAY", "only stepping in": "STAY",
    "leave": "LEAVE", "leaving": "LEAVE", "ever leaving": "LEAVE", "stepping outside of": "LEAVE",
    "navigate away from": "LEAVE", "move outside of": "LEAVE", "moving outside of": "LEAVE",
    "go outside of": "LEAVE", "only moving in": "STAY", "only moving within": "STAY",
}.items():  # fmt: skip
    SYMBOLS[tuple(_phrase.split())] = _sym
LONGEST = max(len(k) for k in SYMBOLS)

_PERMIT_WORDS = frozenset(
    [
        "if",
        "once",
        "when",
        "only",
        "and",
        "then",
        "now",
        "you",
        "have",
        "ve",
        "reached",
        "got",
        "get",
        "to",
        "can",
        "may",
        "could",
        "are",
        "free",
        "or",
        "stay",
        "put",
        "there",
        "be",
        "done",
        "just",
        "stop",
        "proceed",
        "continue",
        "remain",
        "go",
        "head",
        "move",
        "navigate",
        "on",
        "at",
        "in",
        "the",
        "travel",
    ]
)
"""The words a closing permission may say besides the two places: "..., if you have reached A
you may go on to B or stay put" permits B once the goal A is reached: the command is read as
``!b U goal``."""


def seq(a: s.Formula, b: s.Formula) -> s.Formula:
    """The ordered visit: ``F(a & F b)``."""
    return op.Eventually(op.And((a, op.Eventually(b))))


def avoid_at(goal: s.Formula, bad: s.Formula) -> s.Formula:
    """``F(goal & !bad)``: the goal reached at a step that is not ``bad``."""
    return op.Eventually(op.And((goal, op.Not(bad))))


def avoid_until(bad: s.Formula, goal: s.Formula) -> s.Formula:
    """``!bad U goal``: ``bad`` avoided until the goal is reached."""
    return op.Until(op.Not(bad), goal)


def stay_on(goal: s.Formula, area: s.Formula) -> s.Formula:
    """``F goal & G area``: the goal reached without ever leaving the area."""
    return op.And((op.Eventually(goal), op.Always(area)))


Build = Callable[[s.Formula, s.Formula], s.Formula]


@dataclass(frozen=True)
class Shape:
    """A command shape: its name, the regular expression over symbols (with groups ``x`` and
    ``y``, the placeholders), the formula it builds of them and what the reading says."""

    name: str
    pattern: str
    build: Build
    order: tuple[str, str]
    note: str


_A = r"(?:ALWAYS )?"
_X, _Y = r"(?P<x>P\d+)", r"(?P<y>P\d+)"
_SEQ = "route: the ordered visit F(a & F b)"
_AT = "avoid with a goal: not b on reaching the goal, F(goal & !b) (the drone set's convention)"
_UNTIL = "avoid until: !b U goal"
_PERMITTED = "avoid, then permitted once the goal is reached: !b U goal"
_VISIT = "a place named alone is visited: F a"
_STAY = "stay with a goal: F goal & G area"
DRONE_SHAPES: tuple[Shape, ...] = (
    Shape("route", rf"{_A}(?:FIRST )?{_X} (?:FIRST )?(?:AND )?(?:THEN|BEFORE|ANDGO) (?:THEN )?{_Y}", seq, ("x", "y"), _SEQ),
    Shape("route", rf"{_A}THROUGH {_X} (?:FIRST )?(?:TO|AND|ANDGO|THEN|AND THEN) {_Y}", seq, ("x", "y"), _SEQ),
    Shape("route", rf"{_A}FROM {_X} (?:TO )?{_Y}", seq, ("x", "y"), _SEQ),
    Shape("route", rf"{_A}{_Y} (?:BY )?(?:FIRST )?(?:THROUGH|FROM) {_X}(?: FIRST)?", seq, ("x", "y"), _SEQ),
    Shape("route", rf"{_A}{_Y} (?:AFTER|BUT FIRST|BY FIRST|BY) (?:THROUGH )?{_X}", seq, ("x", "y"), _SEQ),
    Shape("route", rf"{_A}{_Y} BUT (?:THROUGH )?{_X} FIRST", seq, ("x", "y"), _SEQ),
    Shape("avoid_at", rf"{_A}{_X} (?:(?:BUT |AND |BY )?(?:WHILE )?{_A}(?:AVOID|WITHOUT|NOT)|BUT NOT) {_Y}", avoid_at, ("x", "y"), _AT),
    Shape("avoid_at", rf"(?:WHILE )?{_A}AVOID {_X} (?:AND |ANDGO |WHILE )?{_Y}", avoid_at, ("y", "x"), _AT),
    Shape("avoid_until", rf"{_A}(?:AVOID|NOT) {_X} (?:UNTIL|BEFORE|TO) (?:THROUGH )?{_Y}", avoid_until, ("x", "y"), _UNTIL),
    Shape("avoid_until", rf"{_A}{_Y} (?:BUT |WITHOUT )?NOT (?:FIRST )?(?:THROUGH )?{_X}(?: FIRST)?", avoid_until, ("x", "y"), _UNTIL),
    Shape("avoid_until", rf"{_A}{_Y} WITHOUT THROUGH {_X}", avoid_until, ("x", "y"), _UNTIL),
    Shape("stay", rf"{_X} (?:AND |WHILE |BUT |BY )?(?:STAY|WITHOUT LEAVE|NOT LEAVE) {_Y}", stay_on, ("x", "y"), _STAY),
    Shape("stay", rf"(?:STAY|WITHOUT LEAVE|NOT LEAVE|WHILE STAY) {_X} (?:AND |ANDGO |WHILE |TO )?{_Y}", stay_on, ("y", "x"), _STAY),
)  # fmt: skip
"""The drone set's command shapes, tried in order; the first that matches whole is read."""
COMMANDS: dict[str, tuple[Shape, ...]] = {DRONE: DRONE_SHAPES}
"""Convention -> its command shapes."""


@dataclass(frozen=True)
class Command:
    """A command read: the lifted formula (over placeholder atoms), its shape and its notes."""

    formula: s.Formula
    family: str
    notes: tuple[str, ...]


def command_symbols(tokens: Sequence[str]) -> tuple[list[str], list[str]]:
    """The symbols of lifted tokens (placeholders kept, fillers dropped) and the words no
    symbol reads (each kept as ``?word`` among the symbols)."""
    toks = [t for t in tokens if t not in (",", ".", "be", "have", "again", "must")]
    out: list[str] = []
    unread: list[str] = []
    i = 0
    while i < len(toks):
        if re.fullmatch(r"P\d+", toks[i]):
            out.append(toks[i])
            i += 1
            continue
        for n in range(min(LONGEST, len(toks) - i), 0, -1):
            sym = SYMBOLS.get(tuple(toks[i : i + n]))
            if sym is not None:
                if sym:
                    out.append(sym)
                i += n
                break
        else:
            out.append(f"?{toks[i]}")
            unread.append(toks[i])
            i += 1
    return _tidy(out), unread


def _tidy(syms: list[str]) -> list[str]:
    """``AND GO`` is ``ANDGO`` (a second goal); other motion words and a ``TO`` not between two
    placeholders' clauses (``P1 TO P2``) say nothing more."""
    out: list[str] = []
    for k, x in enumerate(syms):
        if x == "GO" and out[-1:] == ["AND"]:
            out[-1] = "ANDGO"
        elif x == "GO" or (
            x == "TO"
            and (
                syms[k - 1 : k] == ["GO"]
                or syms[k + 1 : k + 2] == ["GO"]
                or not re.fullmatch(r"P\d+", out[-1] if out else "")
            )
        ):
            continue
        else:
            out.append(x)
    while out[-2:] == ["AND", "?stop"]:
        out = out[:-2]
    return out


def _permission(tokens: list[str]) -> tuple[list[str], list[str]]:
    """The command's tokens without a closing permission, and the places the permission names
    (none when there is none). A permission opens with "if", "once", "when", "only if", "and
    if", "then you" or "and then stay" and says "can", "may", "could", "free" or "or"."""
    words = [t for t in tokens if t not in (",", ".")]
    for k, w in enumerate(words):
        opens = w in ("if", "once", "when") or words[k : k + 2] in (
            ["then", "you"], ["and", "then"], ["then", "stay"], ["then", "P1"], ["then", "P2"],
        )  # fmt: skip
        if not opens:
            continue
        tail = words[k:]
        if not {"can", "may", "could", "free", "or"} & set(tail):
            continue
        if all(re.fullmatch(r"P\d+", t) or t in _PERMIT_WORDS for t in tail):
            body = words[:k]
            while body and body[-1] in ("and", "but", "only"):
                body = body[:-1]
            return body, [t for t in tail if re.fullmatch(r"P\d+", t)]
    return tokens, []


def set_off_avoid(tokens: Sequence[str]) -> bool:
    """Whether an avoidance is set off by a comma after the goal ("get to A, while avoiding
    B"): a condition on the whole way or on arriving, which the drone set's commands write both
    ways; not read."""
    toks = list(tokens)
    return any(
        toks[k : k + 2] == [",", "while"] and toks[k + 2 : k + 3] in (["avoiding"], ["avoid"])
        for k in range(len(toks))
    )


def read_command(tokens: Sequence[str], convention: str) -> Command:
    """The command's reading under ``convention``; a SpecError names the words no shape placed."""
    shapes = COMMANDS.get(convention)
    if shapes is None:
        raise SpecError(f"no command shapes for the convention {convention!r}")
    if set_off_avoid(tokens):
        raise SpecError(
            "', while avoiding' set off by a comma: avoided on the way there (!b U goal) or on"
            " arriving (F(goal & !b)) is not told; say 'go to A avoiding B' or 'avoid B until A'"
        )
    body, permitted = _permission(list(tokens))
    syms, unread = command_symbols(body)
    text = " ".join(syms)
    one = re.fullmatch(rf"{_A}{_X}", text)
    if one is not None:
        goal = s.Atom(one["x"])
        others = sorted({p for p in permitted if p != one["x"]})
        if not permitted:
            return Command(op.Eventually(goal), "visit", (_VISIT, DRONE_NOTE))
        if len(others) == 1:  # "go to A; once there you may go to B": B was not allowed before
            return Command(
                avoid_until(s.Atom(others[0]), goal), "avoid_until", (_PERMITTED, DRONE_NOTE)
            )
    for shape in shapes:
        m = re.fullmatch(shape.pattern, text)
        if m is None or m["x"] == m["y"]:
            continue
        a, b = (s.Atom(m[k]) for k in shape.order)
        if permitted:  # a permission once the goal is reached: avoid until then
            if shape.name not in ("avoid_at", "avoid_until") or not set(permitted) <= {
                m["x"],
                m["y"],
            }:
                continue
            f = avoid_until(b, a) if shape.name == "avoid_at" else shape.build(a, b)
            return Command(f, "avoid_until", (_PERMITTED, DRONE_NOTE))
        return Command(shape.build(a, b), shape.name, (shape.note, DRONE_NOTE))
    if unread:
        raise SpecError(f"could not place the words: {', '.join(dict.fromkeys(unread))}")
    raise SpecError(f"no command shape of {convention} reads {text!r}")


DRONE_NOTE = "conventions of the drone-planning commands (drone_commands)"
