"""A sentence pass of the clause grammar on returns said with leaving: a return is always after
leaving, so "after leaving it" and "between leaving it and" say nothing more than "go back".

- "do not go back into A between leaving it and reaching B", "never re-enter A after leaving it
  until B", "going back into A after leaving it but before B (is not allowed)": a return to A
  before B (``AGAIN A BEFORE B``, the strict pair when denied);
- "once you have left A, do not go back in until B": the return is to A;
- "go to A once, then to B" in a sentence that also denies a return (or says "strictly"): the
  one visit before B is what the return rule says, so the clause is "A, then B".

Imports nothing of the project.
"""

from __future__ import annotations

import re

__all__ = ["returns"]

_RULES = (
    (re.compile(r"\bAGAIN (P\d+) LEAVE AND (?:PERF )*(P\d+)"), r"AGAIN \1 BEFORE \2"),
    (
        re.compile(
            r"\bAGAIN (P\d+) (?:AFTER )?LEAVE (?:BUT |AND )?(BEFORE|UNTIL) (?:PERF )*(P\d+)"
        ),
        r"AGAIN \1 \2 \3",
    ),
    (
        re.compile(r"\bIF (?:PERF )*LEAVE (P\d+) (?:COMMA )?NOT AGAIN (?=UNTIL|BEFORE)"),
        r"IF LEAVE \1 COMMA NOT AGAIN \1 ",
    ),
)
_ONCE_THEN = re.compile(r"\b(P\d+) N_1 (?:COMMA )?(?:AND )?THEN (?:THEN )?(?=P\d+)")


def returns(syms: list[str]) -> list[str]:
    """``syms`` with the returns said with leaving read as returns (see the module docstring)."""
    text = " ".join(syms)
    for pattern, repl in _RULES:
        text = pattern.sub(repl, text)
    if re.search(r"\bNOT (?:\w+ )?AGAIN\b|\bSTRICT\b", text):
        text = _ONCE_THEN.sub(r"\1 THEN ", text)
    return text.split()
