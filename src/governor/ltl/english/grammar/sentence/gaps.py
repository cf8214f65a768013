"""Elided clauses of the sentence passes (:mod:`governor.ltl.english.grammar.sentence.passes`): a second clause that
leaves out the verb of the first takes its negation, "again" or count ("do not enter B before A,
or C before B"; "B stays off limits until A, and C until B"; "nor come back to A before B, nor
to B before C"; "only one visit to A before B, and to B before C"). At most :data:`MAX_GAPS`
are restored in a sentence. A clause whose subject says what is forbidden ("going into B before
A is not allowed"; "touching B before A, or C before B, is forbidden") is "do not B before A".

Imports nothing of the project.
"""

from __future__ import annotations

import re

__all__ = ["MAX_GAPS", "forbidden", "gapping"]

_PAIR = r"(?:PERF )?(?:BEFORE|UNTIL) (?:PERF )?P\d+"
_GAPPED = re.compile(
    rf"(?P<head>(?P<h>NOT (?:AGAIN )?|(?:ONLY )?(?:N|EQ)_1 )?P\d+ (?P<hn>NOT )?{_PAIR})"
    rf" (?:COMMA )?(?:OR|AND|NOR) (?P<g>P\d+) (?P<gt>{_PAIR})(?= COMMA| STOP| BUT| AND| OR| NOR|$)"
)
"""A clause and a second one that elides its verb: "do not enter B before A, or C before B";
"B stays off limits until A, and C until B"; "only one visit to A before B, and to B before C"."""
_NOR = re.compile(rf"\bNOR (?=(?:AGAIN )?P\d+ (?:AGAIN )?{_PAIR}(?= |$))")


_FORBIDDEN = re.compile(
    r"(?:^|(?<=STOP )|(?<=COMMA ))(?P<said>P\d+ BEFORE P\d+(?: (?:COMMA )?OR P\d+ BEFORE P\d+)*)"
    r" (?:COMMA )?(?:MUST )?NOT(?= STOP|$)"
)
"""A forbidden order said as the subject: "going into B before A is not allowed"."""


def forbidden(syms: list[str]) -> list[str]:
    """ "B before A (, or C before B,) is not allowed": ``NOT B BEFORE A (OR C BEFORE B)``."""
    return _FORBIDDEN.sub(r"NOT \g<said>", " ".join(syms)).split()


MAX_GAPS = 16
"""Most elided clauses restored in one sentence (the pass stays linear in the sentence)."""


def _next_gap(text: str, pos: int) -> re.Match[str] | None:
    """The first clause from ``pos`` with a negation or count and an elided second clause."""
    while (m := _GAPPED.search(text, pos)) is not None and not (m["h"] or m["hn"]):
        pos = m.start("g")
    return m


def gapping(syms: list[str]) -> list[str]:
    """The elided verb of a second clause restored from the first (its negation, "again" or
    count), left to right, so that each restored clause may lend it to the next ("A before B,
    or B before C, or C before D"); "nor d before c" is ``COMMA NOT d BEFORE c`` after any
    clause, any other "nor" ``AND``."""
    text, pos = " ".join(forbidden(syms)), 0
    for _ in range(MAX_GAPS):
        gap, nor = _next_gap(text, pos), _NOR.search(text, pos)
        if nor is not None and (gap is None or nor.start() < gap.end("head")):
            text, pos = f"{text[: nor.start()]}COMMA NOT {text[nor.end() :]}", nor.start()
            continue
        if gap is None:
            break
        second = f"{gap['h']}{gap['g']} {gap['gt']}" if gap["h"] else f"{gap['g']} NOT {gap['gt']}"
        text = f"{text[: gap.start()]}{gap['head']} COMMA {second}{text[gap.end() :]}"
        pos = gap.start() + len(gap["head"]) + len(" COMMA ")
    return [("AND" if s == "NOR" else s) for s in text.split()]
