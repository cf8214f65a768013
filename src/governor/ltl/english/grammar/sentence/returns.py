"""A sentence pass of the clause grammar on returns said with leaving: a return is always after
leaving, so "after leaving it" and "between leaving it and" say nothing more than "go back".

- "do not go back into A between leaving it and reaching B", "never re-enter A after leaving it
  until B", "going back into A after leaving it but before B (is not allowed)": a return to A
  before B (``AGAIN A BEFORE B``, the strict pair when denied); "don't return to A once you've
  left it until B" too;
- "once you have left A, do not go back in until B", "after you walk out of A, don't return
  there before B", "(visit A once,) leave it, and don't come back (go back there) before B": the
  return is to A; "once you leave it, don't come back until B": the return is to the place
  listed right before B;
- "no returning to A in between", "A only once on the way", "A just once before moving on,":
  the return (the one visit) is before the place listed next (``BETWEEN`` is ``BEFORE B``); a
  ``BETWEEN`` elsewhere ("with any detours you like along the way") says nothing;
- "go to A once, then to B" in a sentence that also denies a return (or says "strictly"): the
  one visit before B is what the return rule says, so the clause is "A, then B"; so are "one
  trip to A, then out, then B", "one visit to A, leave it, and only then B" and "a single stop
  at A, then leave and head to B".

Imports nothing of the project.
"""

from __future__ import annotations

import re

__all__ = ["returns"]

_RULES = (
    (re.compile(r"\bAGAIN (P\d+) LEAVE AND (?:PERF )*(P\d+)"), r"AGAIN \1 BEFORE \2"),
    (
        re.compile(
            r"\bAGAIN (P\d+) (?:AFTER |IF )?(?:PERF )*LEAVE (?:BUT |AND )?(BEFORE|UNTIL) (?:PERF )*(P\d+)"
        ),
        r"AGAIN \1 \2 \3",
    ),
    (
        re.compile(r"\b(IF|AFTER) (?:PERF )*LEAVE (P\d+) (?:COMMA )?NOT AGAIN (?=UNTIL|BEFORE)"),
        r"\1 LEAVE \2 COMMA NOT AGAIN \2 ",
    ),
    (
        re.compile(r"\b(IF|AFTER) (?:PERF )*LEAVE (P\d+) (?:COMMA )?NOT \2 (?=UNTIL|BEFORE)"),
        r"\1 LEAVE \2 COMMA NOT AGAIN \2 ",  # "once you leave A, stay out of it until B"
    ),
    (
        re.compile(
            r"\b(P\d+)((?: (?:N|EQ)_1)?) (?:COMMA |STOP )*LEAVE (?:COMMA )?(?:AND )?NOT"
            r" (?:AGAIN |REF |\1 )(?=(?:BEFORE|UNTIL) (?:PERF )*P\d+)"
        ),
        r"\1 COMMA NOT AGAIN \1 ",  # "A once, leave it, ...": the once is the return's
    ),
)
_BETWEEN = re.compile(
    r"\b((?:AGAIN (P\d+)|(P\d+) (?:ONLY )?(?:N|EQ)_1|(?:ONLY )?(?:N|EQ)_1 (P\d+))) BETWEEN\b"
)
_ONLY_ONCE = re.compile(r"\b(P\d+) ONLY ((?:N|EQ)_1) (?=BEFORE)")
"""``A only once before B``: the count of the strict pair ("A only once on the way")."""
_ONCE_THEN = re.compile(
    r"\b(?:(P\d+) N_1|N_1 (P\d+)) (?:(?:COMMA|AND|LEAVE|ONLY) )*THEN (?:(?:COMMA|AND|LEAVE|THEN) )*"
    r"(?=P\d+)"
)


_LEFT_IT = re.compile(
    r"\b(IF|AFTER) (?:PERF )*LEAVE (?:COMMA )?NOT AGAIN (?=(?:UNTIL|BEFORE) (?:PERF )*(P\d+))"
)
"""``once you leave it, don't come back until B``: the place left is unnamed."""


def _names(syms: list[str]) -> list[str]:
    return list(dict.fromkeys(s for s in syms if re.fullmatch(r"P\d+", s)))


def _left(m: re.Match[str], syms: list[str]) -> str:
    """The return to the place listed right before the awaited one (kept unread when none is)."""
    names = _names(syms)
    k = names.index(m[2]) - 1
    return f"{m[1]} LEAVE {names[k]} COMMA NOT AGAIN {names[k]} " if k >= 0 else m[0]


def _before_next(m: re.Match[str], syms: list[str]) -> str:
    """``... BEFORE B`` for the place B listed right after the one returned to (kept unread
    when none is)."""
    names = _names(syms)
    place = m[2] or m[3] or m[4]
    k = names.index(place) + 1
    return f"{m[1]} BEFORE {names[k]}" if k < len(names) else m[0]


def returns(syms: list[str]) -> list[str]:
    """``syms`` with the returns said with leaving read as returns (see the module docstring)."""
    text = _BETWEEN.sub(lambda m: _before_next(m, syms), " ".join(syms))
    text = _ONLY_ONCE.sub(r"\1 \2 ", text.replace(" BETWEEN", "").replace("BETWEEN ", ""))
    for pattern, repl in _RULES:
        text = pattern.sub(repl, text)
    text = _LEFT_IT.sub(lambda m: _left(m, syms), text)
    if re.search(r"\bNOT (?:\w+ )?AGAIN\b|\bSTRICT\b", text):
        text = _ONCE_THEN.sub(lambda m: f"{m[1] or m[2]} THEN ", text)
    return text.split()
