"""The clause grammar: the cue symbols of a lifted sentence (:mod:`governor.ltl.cues`) to a
:class:`~governor.ltl.readings.Parse` of one pattern family, or a conjunction of clauses.

The symbols are first cleaned: modifiers anywhere in the sentence become flags (``NEXT``,
``WITHIN_n``, ``REPEAT``, ``ORDER``, ``FROMNOW``, ``STRICT``, ``SAME``), a ``PERF`` or ``BE``
before a placeholder marks it (a past-tense event, a state the agent is in), and separators are
merged ("and then" is ``THEN``). The rest is matched against a few clause templates, tried in
order: iff, wait, counts, patrolling, avoidance, past avoidance ("don't b until/before a", "only b
after a"), future avoidance ("after a, never b"), reactions ("whenever a, b" read by their flags
as instant, delayed, prompt or bounded), and lists of places (visit, sequenced, ordered or
strictly ordered by their separators and flags). A sentence no template reads is split at a
clause boundary (". ", "but", ", and" before a new clause) and read as a conjunction.

Imports the readings and the cue symbols only.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace

from governor.ltl import readings as rd
from governor.ltl.readings import Parse, Reading

MAX_SPLITS = 8
"""Most clause boundaries tried when a sentence is read as a conjunction."""
_P = re.compile(r"P\d+")
_FLAGS = {"NEXT", "REPEAT", "ORDER", "FROMNOW", "STRICT", "SAME", "FIRST", "ALWAYS", "NOW", "ANY"}
_DROP = {"MUST", "CAN", "PERF", "BE", "AGAIN", "STOP"}
_MERGE = [
    (r"\b(?:COMMA |AND )+THEN\b", "THEN"), (r"\bTHEN (?:COMMA|AND)\b", "THEN"),
    (r"\bTHEN(?: THEN)+\b", "THEN"), (r"\bCOMMA AND\b", "AND"), (r"\bCOMMA OR\b", "OR"),
    (r"\bBUT\b", "COMMA"), (r"\bCOMMA(?: COMMA)+\b", "COMMA"), (r"\bFOLLOWED THEN\b", "FOLLOWED"),
    (r"\bTHEN FOLLOWED\b", "FOLLOWED"), (r"\bAND NOT\b", "COMMA NOT"), (r" AFTER$", ""),
    (r" BEFORE$", ""), (r"\bONLY THEN\b", "BEFORE"), (r"\bCOMMA BEFORE\b", "BEFORE"), (r"COMMA ((?:ONLY )?(?:EQ|N)_1)\b", r"\1"),
]  # fmt: skip
_COUNT = re.compile(r"(LE|GE|EQ|GT|LT|N)_(\d+)")


@dataclass(frozen=True)
class Clause:
    """A cleaned clause: its template string and what the cleaning noted."""

    text: str
    flags: frozenset[str]
    within: int | None
    perf: frozenset[str]
    stative: frozenset[str]
    again: frozenset[str]
    places: frozenset[str]
    iff_text: str
    props: frozenset[str] = frozenset()


def clean(symbols: list[str], places: Iterable[str], props: Iterable[str] = ()) -> Clause:
    """The template string of a clause, with its flags; ``places`` and ``props`` are the
    placeholders of places and of bare propositions (states, not actions)."""
    flags: set[str] = set()
    perf, stative, again = set(), set(), set()
    within = None
    kept: list[str] = []
    for i, sym in enumerate(symbols):
        prev = symbols[i - 1] if i else ""
        if _P.fullmatch(sym):
            if prev == "PERF" or (prev == "NOT" and i > 1 and symbols[i - 2] == "PERF"):
                perf.add(sym)
            if prev == "BE":
                stative.add(sym)
            if prev == "AGAIN" or (i + 1 < len(symbols) and symbols[i + 1] == "AGAIN"):
                again.add(sym)
        if sym.startswith("WITHIN_"):
            within = int(sym.split("_")[1])
            continue
        if sym in ("MUST", "CAN") and sym not in flags:
            flags.add(sym)
        if sym in ("AGAIN", "THEN"):
            flags.add("LATER" if sym == "THEN" else sym)
        if sym in _FLAGS:
            flags.add(sym)
        if sym in _FLAGS - {"NEXT"} or sym in _DROP:
            continue
        kept.append(sym)
    text = " ".join(kept)
    for pattern, repl in _MERGE:
        text = re.sub(pattern, repl, text)
    text = re.sub(r"^(?:COMMA|AND|THEN) |(?: COMMA| THEN| AND)+$", "", text).strip()
    iff_text = text
    text = re.sub(r" ?\bNEXT\b", "", text).strip()
    text = re.sub(r"^(?:COMMA|AND|THEN) ", "", text)
    ps = frozenset(places)
    return Clause(text, frozenset(flags), within, frozenset(perf), frozenset(stative),
                  frozenset(again), ps, iff_text, frozenset(props))  # fmt: skip


Rule = Callable[[re.Match[str], Clause], Parse | None]
_RULES: list[tuple[re.Pattern[str], Rule]] = []
P, L = r"P\d+", r"P\d+(?: (?:COMMA|AND|OR) P\d+)*"


def rule(*templates: str) -> Callable[[Rule], Rule]:
    def add(fn: Rule) -> Rule:
        for t in templates:
            _RULES.append((re.compile(t.replace("{P}", P).replace("{L}", L)), fn))
        return fn

    return add


def _r(family: str, args: Iterable[str], n: int | None = None, *notes: str) -> Reading:
    return Reading(family, tuple(args), n, (*rd.family_notes(family), *notes))


def _names(text: str) -> list[str]:
    return _P.findall(text)


def _one(r: Reading, *alts: Reading) -> Parse:
    return Parse(r, tuple(alts))


@rule(
    r"^(?P<x>{P})(?P<xn> NEXT)?(?: COMMA)? IFF (?P<y>{P})(?P<yn> NEXT)?$",
    r"^IFF (?P<y>{P})(?P<yn> NEXT)? (?:COMMA )?(?P<x>{P})(?P<xn> NEXT)?$",
)
def _iff(m: re.Match[str], c: Clause) -> Parse | None:
    x, y = m["x"], m["y"]
    if m["xn"] and not m["yn"]:
        return _one(_r("bound_delay", (y, x)))
    if m["yn"] and not m["xn"]:
        return _one(_r("bound_delay", (x, y)))
    return None if m["xn"] else _one(_r("bound_react", (y, x)))


@rule(
    r"^STAY (?P<a>{P}) UNTIL (?P<b>{P})$",
    r"^NOT LEAVE (?P<a>{P}) (?:UNTIL|BEFORE) (?P<b>{P})$",
    r"^UNTIL (?P<b>{P}) (?:COMMA )?(?:STAY|NOT LEAVE) (?P<a>{P})$",
    r"^(?P<s>{P}) UNTIL (?P<b>{P})$",
)
def _wait(m: re.Match[str], c: Clause) -> Parse | None:
    groups = m.groupdict()
    a = groups.get("a") or groups.get("s") or ""
    if groups.get("s") and a not in c.stative:
        return None
    return _one(_r("wait", (a, m["b"])))


@rule(
    r"^(?P<neg>NOT )?(?:ONLY )?(?P<a>{P})(?: ONLY)?(?: NOT)? (?P<c>(?:LE|GE|EQ|GT|LT|N)_\d+)$",
    r"^(?P<neg>NOT )?(?:ONLY )?(?P<c>(?:LE|GE|EQ|GT|LT|N)_\d+) (?P<a>{P})$",
)
def _counted(m: re.Match[str], c: Clause) -> Parse | None:
    kind, n = _COUNT.fullmatch(m["c"]).groups()  # type: ignore[union-attr]
    n_, a = int(n), m["a"]
    neg = bool(m["neg"]) or " NOT " in f" {m.group(0)} "
    only = "ONLY" in m.group(0)
    if neg:
        table = {"GT": ("upper_rest_avoid", n_), "N": ("upper_rest_avoid", n_ - 1)}
        table |= {"GE": ("upper_rest_avoid", n_ - 1)}
    else:
        table = {"LE": ("upper_rest_avoid", n_), "GE": ("lower_rest_avoid", n_)}
        table |= {"EQ": ("exact_rest_avoid", n_), "LT": ("upper_rest_avoid", n_ - 1)}
        table |= {"GT": ("lower_rest_avoid", n_ + 1)}
        table |= {"N": ("upper_rest_avoid" if only else "exact_rest_avoid", n_)}
    if kind not in table or table[kind][1] < (0 if "upper" in table[kind][0] else 1):
        return None
    family, count = table[kind]
    if family == "exact_rest_avoid" and count == 0:
        family = "upper_rest_avoid"
    if kind == "N" and not neg and not only:  # "visit the lab twice": exact or at least?
        exact = _r(family, (a,), count, rd.COUNT_EXACT)
        return _one(exact, _r("lower_rest_avoid", (a,), count, rd.COUNT_LEAST))
    return _one(_r(family, (a,), count))


@rule(r"^(?:IF|AFTER|WHENEVER) (?P<a>{P}) (?:COMMA )?NOT (?P<b>{P})$")
def _once_only(m: re.Match[str], c: Clause) -> Parse | None:
    if m["a"] != m["b"]:
        return None
    return _one(_r("upper_rest_avoid", (m["a"],), 1))


@rule(r"^(?P<l>{L})$", r"^(?P<l>{L}) COMMA$")
def _plain_list(m: re.Match[str], c: Clause) -> Parse | None:
    names = list(dict.fromkeys(_names(m["l"])))
    if "REPEAT" in c.flags:
        return _one(_r("patrolling", names))
    if " OR " in m["l"] or {"ORDER", "FIRST"} & c.flags or len(names) < len(_names(m["l"])):
        return _ordered(names, c) if len(names) > 1 and "OR" not in m["l"] else None
    return _one(_r("visit", names))


@rule(r"^NOT (?P<l>{L})$", r"^(?P<l>{L}) NOT$")
def _avoid(m: re.Match[str], c: Clause) -> Parse | None:
    if "REPEAT" in c.flags and "NOT" not in m.group(0):
        return None
    return _one(_r("global_avoid", dict.fromkeys(_names(m["l"]))))


def _past(b: str, a: str, c: Clause, *extra: Reading) -> Parse:
    default = _r("past_avoid", (b, a))
    return _one(default, *extra, _r("precedence", (a, b)))


@rule(
    r"^NOT (?P<b>{P}) (?:UNTIL|BEFORE) (?P<a>{P})$",
    r"^NOT (?P<b>{P}) (?:COMMA )?(?:IF|WHENEVER|AFTER) NOT (?P<a>{P})$",
    r"^(?P<b>{P}) NOT (?:UNTIL|BEFORE) (?P<a>{P})$",
    r"^(?:UNTIL|BEFORE) (?P<a>{P}) (?:COMMA )?NOT (?P<b>{P})$",
    r"^(?:ONLY )?(?P<b>{P}) (?:COMMA )?ONLY (?:AFTER|IF|WHENEVER|UNTIL|BEFORE) (?P<a>{P})$",
    r"^ONLY (?P<b>{P}) (?:AFTER|IF|WHENEVER) (?P<a>{P})$",
    r"^ONLY (?:AFTER|IF|WHENEVER) (?P<a>{P}) (?:COMMA )?(?:THEN )?(?P<b>{P})$",
    r"^BEFORE (?P<b>{P}) (?:COMMA )?(?P<a>{P})$",
    r"^IF NOT (?P<a>{P}) (?:COMMA )?NOT (?P<b>{P})$",
)
def _past_avoid(m: re.Match[str], c: Clause) -> Parse | None:
    return _past(m["b"], m["a"], c)


@rule(r"^(?P<a>{P}) BEFORE (?P<b>{P})$")
def _before(m: re.Match[str], c: Clause) -> Parse | None:
    a, b = m["a"], m["b"]
    if "ORDER" in c.flags:
        return _ordered([a, b], c)
    avoid = _r("past_avoid", (b, a), None, rd.BEFORE_AVOID)
    return _one(avoid, _r("ordered_visit", (a, b), None, rd.BEFORE_ORDER), _r("precedence", (a, b)))


@rule(r"^(?P<b>{P}) AFTER (?P<a>{P})$")
def _permitted_after(m: re.Match[str], c: Clause) -> Parse | None:
    if "CAN" not in c.flags or "MUST" in c.flags:
        return None
    return _past(m["b"], m["a"], c)


_COND = r"(?P<cw>IF|WHENEVER|AFTER|WHILE)"


@rule(
    rf"^{_COND} (?P<a>{{P}}) (?:COMMA )?(?:THEN )?NOT (?P<b>{{P}})$",
    rf"^{_COND} (?P<a>{{P}}) (?:COMMA )?(?:THEN )?(?P<b>{{P}}) NOT$",
    rf"^NOT (?P<b>{{P}}) (?:COMMA )?(?:THEN )?{_COND} (?P<a>{{P}})$",
    r"^(?P<a>{P}) (?:COMMA )?(?P<cw>MEANS|THEN|AND|COMMA)(?: THEN)? NOT (?P<b>{P})$",
)
def _future_avoid(m: re.Match[str], c: Clause) -> Parse | None:
    a, b, cw = m["a"], m["b"], m["cw"]
    if a == b:
        return None
    event = cw in ("AFTER", "MEANS", "THEN", "AND", "COMMA") or a in c.perf
    if cw == "WHILE" or not (event or "FROMNOW" in c.flags or a in c.places):
        return _one(Reading("instant_react", (a, b), None, (rd.SAME_STEP,), (b,)))
    return _one(_r("future_avoid", (a, b)))


@rule(
    rf"^{_COND} (?P<a>{{P}}) (?:COMMA )?(?:THEN )?(?P<b>{{P}})$",
    rf"^(?P<b>{{P}}) (?:COMMA )?(?:THEN )?{_COND} (?P<a>{{P}})$",
    r"^(?P<a>{P}) (?P<cw>MEANS|FOLLOWED) (?P<b>{P})$",
    r"^(?P<a>{P}) (?:COMMA |AND )?(?P<cw>THEN) (?P<b>{P})$",
)
def _react(m: re.Match[str], c: Clause) -> Parse | None:
    a, b, cw = m["a"], m["b"], m["cw"]
    if cw == "THEN" and not ("NEXT" in c.flags or c.within or "CAN" in c.flags):
        return None
    if c.within is not None:
        return _one(_r("bounded_react", (a, b), c.within))
    if "NEXT" in c.flags:
        return _one(_r("prompt_react", (a, b)))
    stative = b in c.stative or b in c.props
    if (
        cw == "WHILE"
        or "SAME" in c.flags
        or (stative and cw != "FOLLOWED" and "LATER" not in c.flags)
    ):
        return _one(_r("instant_react", (a, b)))
    react = _r("delay_react", (a, b))
    if cw == "AFTER" and a in c.places and b in c.places and "ALWAYS" not in c.flags:
        return _one(
            react.with_notes(rd.AFTER_REACT), _r("sequenced_visit", (a, b), None, rd.AFTER_SEQ)
        )
    return _one(react)


def _ordered(names: list[str], c: Clause) -> Parse | None:
    if len(names) < 2:
        return None
    if "STRICT" in c.flags:
        return _one(_r("strictly_ordered_visit", names))
    if "ORDER" in c.flags:
        strict = _r("ordered_visit", names, None, rd.ORDER_STRICT)
        return _one(strict, _r("sequenced_visit", names, None, rd.ORDER_LOOSE))
    return _one(_r("sequenced_visit", names))


@rule(
    r"^(?P<l>{P}(?: (?:(?:ONLY )?[A-Z]+_1 )?(?:COMMA|AND|THEN|BEFORE) {P})+)(?: (?:ONLY )?[A-Z]+_1)?$"
)
def _sequence(m: re.Match[str], c: Clause) -> Parse | None:
    text = m["l"]
    names = _names(text)
    once = re.search(r"\b(?:EQ|N)_1\b", m.group(0)) is not None
    c2 = replace(c, flags=c.flags | ({"STRICT"} if once else set()))
    if "BEFORE" in text and "THEN" not in text:
        if len(names) < 3 and "ORDER" not in c.flags:
            return None
        return _one(_r("strictly_ordered_visit" if once else "ordered_visit", names))
    if "THEN" not in text and not {"ORDER", "FIRST", "STRICT"} & c2.flags:
        return None
    return _ordered(names, c2)


def read_clause(c: Clause) -> Parse | None:
    """The first template reading of a cleaned clause."""
    for regex, fn in _RULES:
        m = regex.fullmatch(c.iff_text if fn is _iff else c.text)
        if m is not None and (found := fn(m, c)) is not None:
            return found
    return None


def read(
    symbols: list[str], places: Iterable[str], props: Iterable[str] = ()
) -> list[Parse] | None:
    """The clauses of a sentence: one parse, or a conjunction of as few clauses as can be read
    (cut at clause boundaries, at most :data:`MAX_SPLITS` of them); None when nothing reads it."""
    places, props = frozenset(places), frozenset(props)
    while symbols and symbols[-1] in ("STOP", "COMMA"):
        symbols = symbols[:-1]
    cuts = [i for i, s in enumerate(symbols) if s in ("STOP", "BUT", "COMMA", "AND")]
    bounds = [-1, *cuts[:MAX_SPLITS], len(symbols)]
    best: list[list[Parse] | None] = [[]] + [None] * (len(bounds) - 1)
    for j in range(1, len(bounds)):
        for i in range(j):
            done = best[i]
            segment = symbols[bounds[i] + 1 : bounds[j]]
            if done is None or not segment:
                continue
            found = read_clause(clean(segment, places, props))
            if found is not None:
                if best[j] is None or len(done) + 1 < len(best[j] or []):
                    best[j] = [*done, found]
                break
    return best[-1] or None
