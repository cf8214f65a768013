"""Sentence passes of the clause grammar on the shape of a sentence, run before the others
(:func:`shape`): asides, facts said as reasons, consequences, a rule said each way, a rule
continued in the next sentence; and timing said twice (:func:`restated`, after the anaphora).

- *asides*: a parenthesis that only names places ("(the one behind the cellar)") is read by no
  clause; "(and the cellar)" adds a place; a dashed aside that says nothing, between a subject
  and its predicate, is dropped.
- *facts*: a clause that only states a fact about places ("the vault is being cleaned", "rooms
  212 and 214 are isolation rooms": ``FACT`` of :mod:`governor.ltl.english.grammar.facts`; "room 13 has a
  patient in isolation": a place that has something) gives the reason
  for the rule that follows; it is removed when the rest of the sentence names each of its
  places ("..., so keep out of it") and is the list a later "them" names ("the forge and the
  mill are dangerous; never go to them"); a fact alone ("the vault is closed.") fails rather
  than be read as a visit. After a proposition the mark is dropped ("the bell is ringing").
- *consequences*: a clause after ", so" that follows a condition and names only what was named
  before restates the rule: dropped.
- *both ways*: "a now means b at the next step, and b at the next step means a now" is "a now
  if and only if b at the next step" (the bound delay); a converse said alone ("b at the next
  step means a now") is read by no rule (``PREV``); "b one step after a, and only one step
  after a" and "..., and b always means a one step before" say "and only then"; "b at the next
  step precisely when a; when not a, not b at the next step" says the contrast twice; "then,
  some time later, B" and "..., and some time after (being there), B" are "then B"; "A first. B after that." is "then B".
- *continued*: "if a, B becomes off limits. Never enter it after that." is one future
  avoidance; "never B after that" after a condition it does not continue fails.

Imports the clause cut of the list references only.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from governor.ltl.english.grammar.sentence.lists import clauses_of

__all__ = ["asides", "both_ways", "consequences", "continued", "facts", "restated", "shape"]

_P = re.compile(r"P\d+")
_FACT_CLAUSE = frozenset({"FACT", "AND", "OR", "BE"})


def facts(syms: list[str], places: Iterable[str]) -> list[str]:
    """``syms`` without the clauses that only state a fact about places named again later; the
    ``FACT`` mark removed everywhere else (a fact about a proposition is its predicate)."""
    places = frozenset(places)
    out: list[str] = []
    for start, end in clauses_of(syms, ("STOP", "COMMA")):
        part = syms[start:end]
        sep = [syms[end]] if end < len(syms) else []
        named = {s for s in part if _P.fullmatch(s)}
        has = len(part) == 2 and part[1] == "PERF"  # "room 13 has a patient in isolation"
        fact = ("FACT" in part or has) and all(
            s in _FACT_CLAUSE | {"PERF"} or s in named for s in part
        )
        if fact and named and named <= places and named <= set(syms[end:]):
            continue
        them = "ANY" in syms[end:]  # "A and B are dangerous; never go to them": the list
        kept = fact and named and named <= places and not them  # "the vault is closed."
        out += [*(s for s in part if s != "FACT" or kept), *sep]
    return out


_BOTH_WAYS = (
    (
        re.compile(
            r"\b(BE )?(P\d+) NOW MEANS (BE )?(P\d+) NEXT COMMA AND (?:BE )?\4 NEXT MEANS (?:BE )?\2 NOW\b"
        ),
        r"\1\2 NOW IFF \3\4 NEXT",
    ),
    (re.compile(r"\bNEXT MEANS (BE )?(P\d+) NOW\b"), r"NEXT MEANS \1\2 NOW PREV"),
    (re.compile(r"\b(?:THEN|AND) COMMA (?:EVENTUALLY|THEN) COMMA (?=P\d+)"), "THEN "),
    (
        re.compile(r"\b(COMMA|AND) (?:COMMA )?EVENTUALLY AFTER (?:REF )?(?:COMMA )?(?=P\d+)"),
        r"\1 THEN ",
    ),
    (re.compile(r"\b(STOP|COMMA) (P\d+) THEN(?= STOP|$)"), r"\1 THEN \2"),
    (
        re.compile(
            r"\b(P\d+) NEXT IFF (P\d+)( NOW)? (?:STOP|COMMA) (?:AND )?(?:IF|WHENEVER) NOT \2 (?:NOW )?COMMA NOT \1 NEXT\b"
        ),
        r"\1 NEXT IFF \2\3",
    ),
    (
        re.compile(r"\b(P\d+) NEXT AFTER (P\d+) COMMA AND \1 (?:ALWAYS )?MEANS \2 PREV\b"),
        r"\1 NEXT AFTER \2 COMMA AND ONLY THEN",
    ),
    (
        re.compile(
            r"\b(NEXT )?(AFTER|WHENEVER|IF|WHILE) (P\d+) COMMA AND ONLY \1?\2 \3(?= STOP|$)"
        ),
        r"\1\2 \3 COMMA AND ONLY THEN",
    ),
)


def both_ways(syms: list[str]) -> list[str]:
    """``syms`` with a rule said each way read once (see the module docstring)."""
    text = " ".join(syms)
    for pattern, repl in _BOTH_WAYS:
        text = pattern.sub(repl, text)
    return text.split()


_RESTATED = (
    (re.compile(r"\bNEXT (?:THEN|AFTER)(?= COMMA| STOP|$)"), "NEXT"),
    (re.compile(r"\bNEXT COMMA NEXT\b"), "NEXT"),
    (re.compile(r"\b(P\d+) THEN COMMA NEXT(?= COMMA| STOP|$)"), r"\1 NEXT"),
    (re.compile(r"\b(P\d+) (?:COMMA )?AND (?:BE )?\1 (?=WITHIN_\d+)"), r"\1 "),
    (re.compile(r"\b(P\d+) COMMA LEAVE (?:\1 )?(?=COMMA (?:AND )?THEN P\d+)"), r"\1 "),
    (re.compile(r"\bNOT COMMA ALWAYS COMMA (?=P\d+)"), "NOT ALWAYS "),
    (re.compile(r"\bCOMMA COMMA\b"), "COMMA"),
    (re.compile(r"\b(ONLY THEN P\d+) (?:COMMA )?ORDER(?= STOP|$)"), r"\1"),
    (re.compile(r"\b(?:N|EQ)_(\d+) (?:(?:STOP|COMMA) )*EQ_\1\b"), r"EQ_\1"),
    (re.compile(r"\b(?:N|EQ)_1 COMMA (?:AND )?(?:BUT )?NOT AGAIN(?= STOP|$)"), "EQ_1"),
)


def restated(syms: list[str]) -> list[str]:
    """Timing said twice said once: "immediately afterwards, at the following step" / "right
    after, at the next step" is ``NEXT``; "head to A and be there within 6 steps" is ``A
    WITHIN_6``; "go to A, leave it, and then go to B" is "A, then B" (one place at a time); "do
    not, at any point, enter A" is "do not at any point enter A"; an aside dropped between two
    commas leaves one; "four times: not three, not five, exactly four" and "one single time,
    never a second time" are exact counts said twice; "and only then B, never the other way
    round" says the order once."""
    text = " ".join(syms)
    for pattern, repl in _RESTATED:
        text = pattern.sub(repl, text)
    return text.split()


def consequences(syms: list[str]) -> list[str]:
    """A clause after ", so" that follows a condition and names only places or propositions
    named before restates what the rule obliges ("each time a sample arrives, it must end up in
    the freezer, so go to the freezer"): dropped; elsewhere ``SO`` is dropped alone."""
    if "SO" not in syms:
        return syms
    k = syms.index("SO")
    end = next((j for j in range(k, len(syms)) if syms[j] == "STOP"), len(syms))
    before, clause = syms[:k], syms[k + 1 : end]
    named = {s for s in clause if _P.fullmatch(s)}
    ruled = bool({"IF", "WHENEVER", "WHILE", "UNTIL"} & set(before))
    if ruled and named and named <= set(before):
        rest = syms[end:]
        return consequences([*before[:-1], *rest] if before[-1:] == ["COMMA"] else [*before, *rest])
    return consequences([*before, *syms[k + 1 :]])


_CONTINUED = re.compile(
    r"\b(IF|WHENEVER) (P\d+) COMMA (?:MUST )?(P\d+) NOT (?:STOP|COMMA) (?:AND )?(NOT \3 (?:THEN|FROMNOW))\b"
)
_CONDITIONS = frozenset({"IF", "WHENEVER", "AFTER", "WHILE"})
_MODALS = frozenset({"AND", "MUST", "IT", "ALWAYS"})


def continued(syms: list[str]) -> list[str]:
    """A rule continued in the next clause or sentence: "if a, B becomes off limits. Never enter
    it after that." is "if a, never B after that" (future avoidance); "never B afterwards" after
    a condition it does not continue names no time of its own and stays unread (``PREV``),
    rather than be read as "never B" (it was read as global avoidance)."""
    syms = _CONTINUED.sub(r"\1 \2 COMMA \4", " ".join(syms)).split()
    out: list[str] = []
    cuts = clauses_of(syms, ("STOP", "COMMA"))
    for k, (start, end) in enumerate(cuts):
        part = [s for s in syms[start:end] if s not in _MODALS]
        out += syms[start:end]
        afterwards = (
            len(part) == 3 and part[0] == "NOT" and _P.fullmatch(part[1]) and part[2] == "THEN"
        )
        said_before = set(syms[:start]) & {"IF", "WHENEVER"}
        own = k and _CONDITIONS & set(syms[cuts[k - 1][0] : cuts[k - 1][1]])
        if afterwards and said_before and not own:
            out.append("PREV")
        out += [syms[end]] if end < len(syms) else []
    return out


_DASHED = re.compile(r"\b(P\d+) COMMA COMMA (?=MUST|NOT|CAN|BE)")
_NAMING = frozenset({"BE", "AND", "OR"})


def asides(syms: list[str]) -> list[str]:
    """The marks of a parenthesis dropped, except around one that only names places ("stay out
    of the vault (the one behind the cellar)"): a description, or a rule said too briefly, which
    no clause reads (one ``PAREN`` stays); "(and the cellar)" adds a place. An aside between
    dashes that says nothing, between a subject and its predicate ("the vault - that is where
    the money is - must never be entered"), is dropped with its dashes."""
    out: list[str] = []
    opened: int | None = None
    for s in syms:
        if s != "PAREN":
            out.append(s)
        elif opened is None:
            opened = len(out)
        else:
            inner = out[opened:]
            names = [x for x in inner if _P.fullmatch(x)]
            only = names and all(x in _NAMING or _P.fullmatch(x) for x in inner)
            if only and inner[0] not in ("AND", "OR"):
                out[opened:] = ["PAREN"]
            opened = None
    return _DASHED.sub(r"\1 ", " ".join(out)).split()


def shape(syms: list[str], places: Iterable[str]) -> list[str]:
    """The passes of the module run first: :func:`asides`, :func:`facts`, :func:`consequences`,
    :func:`both_ways`, :func:`continued` (:func:`restated` runs after the anaphora)."""
    return continued(both_ways(consequences(facts(asides(syms), places))))
