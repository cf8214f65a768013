"""The cue phrases of anaphora and references (:mod:`governor.ltl.english.phrases.symbols` merges them):
"before that", "until you do", "until it comes", "only after that" (``REF``: the place or proposition said
before), "once there," / "once you are done," (``IF REF``: then), "until you have;" (the clause
before is awaited), "in between" / "on the way" / "before moving on," (``BETWEEN``: before the
next place, :mod:`governor.ltl.english.grammar.sentence.returns` reads it), "any earlier" (``FIRST``), "never before it.", "which it must" (``WHICH MUST``), "which means" (a
comma), and "it has to be visited" (``IT MUST``: the subject of the clause before).

Imports nothing of the project.
"""

from __future__ import annotations

__all__ = ["REFERENCES"]

REFERENCES: dict[tuple[str, ...], tuple[str, ...]] = {}
_REFS: tuple[str, ...] = (
    "then", "that", "this", "there", "you do", "you do so", "that happens", "you get there",
    "doing so", "that point", "this point", "you are there", "getting there", "he does",
    "she does", "it does", "they do",
)  # fmt: skip
_HAPPEN = ("comes", "happens", "arrives", "occurs", "shows up", "turns up", "has come",
           "has happened", "has arrived", "is given")  # fmt: skip
_REFS += tuple(f"{who} {verb}" for who in ("it", "that") for verb in _HAPPEN)
_REFS += tuple(f"they {v}" for v in ("come", "happen", "arrive", "occur", "show up", "turn up"))
for _ref in _REFS:
    REFERENCES[("only", "after", *_ref.split())] = ("ONLY", "AFTER", "REF")
    for _lead in ("before", "until", "till", "up until", "prior to", "ahead of"):
        _sym = "UNTIL" if _lead in ("until", "till", "up until") else "BEFORE"
        REFERENCES[(*_lead.split(), *_ref.split())] = (_sym, "REF")
REFERENCES[("only", "afterwards")] = ("ONLY", "AFTER", "REF")
for _there in (
    "once there", "when there", "once done", "when done", "having done so", "once that is done",
    "when that is done", "once this is done", "once you are done", "when you are done",
    "once finished", "when finished", "once you are done there", "when you are done there",
    "once done there", "once finished there",
):  # fmt: skip
    REFERENCES[(*_there.split(), ",")] = ("IF", "REF", "COMMA")
for _lead in ("until", "before", "till"):  # "until you have;", "before it has.": awaited
    for _end, _sym in ((".", "STOP"), (",", "COMMA")):
        _key = "UNTIL" if _lead != "before" else "BEFORE"
        for _who in ("you", "it", "they", "we", "he", "she"):
            for _aux in ("have", "has", "did", "do", "does", "have done so", "has done so"):
                REFERENCES[(_lead, _who, *_aux.split(), _end)] = (_key, "REF", _sym)
for _lead, _sym in (("before", "BEFORE"), ("until", "UNTIL")):  # "never before it."
    for _end, _close in ((".", "STOP"), (",", "COMMA")):
        for _not in ("never", "not"):
            REFERENCES[(_not, _lead, "it", _end)] = ("NOT", _sym, "REF", _close)
for _lead in ("once", "when", "after"):  # "see A; once you have seen it, go to B": then
    for _done in ("seen", "visited", "been to", "reached", "checked", "explored", "toured"):
        REFERENCES[(_lead, "you", "have", *_done.split(), "it", ",")] = ("IF", "REF", "COMMA")
for _lead in ("once", "when", "after"):  # "A first. Once you have, go on to B": then
    REFERENCES[(_lead, "you", "have", ",")] = ("IF", "REF", "COMMA")
for _way in ("in between", "on the way", "along the way"):  # "no returning to A in between"
    REFERENCES[tuple(_way.split())] = ("BETWEEN",)
for _end, _sym in ((",", "COMMA"), (".", "STOP")):  # "A just once before moving on, and ..."
    REFERENCES[("before", "moving", "on", _end)] = ("BETWEEN", _sym)
for _early in ("any earlier", "any sooner"):
    REFERENCES[tuple(_early.split())] = ("FIRST",)  # "do not see B any earlier": B first
for _one in ("the one ahead of it", "the one in front of it", "the room ahead of it"):
    REFERENCES[("before", *_one.split())] = ("AHEAD",)  # "no room comes before the one ahead of it"
REFERENCES[("after", "having")] = ("AFTER",)  # "after having been in A"
REFERENCES[("which",)] = ("COMMA", "WHICH")
for _who in ("it", "they", "he", "she"):  # "until the lights come on, which they must"
    for _must in ("must", "will", "has to", "have to", "is sure to", "are sure to"):
        REFERENCES[("which", _who, *_must.split())] = ("COMMA", "WHICH", "MUST")
for _means in ("which means", "that means", "meaning", "that is to say", "in other words"):
    REFERENCES[tuple(_means.split())] = ("COMMA",)  # "A then B, which means no B before A"
for _must in ("has to be", "must be", "needs to be", "should be", "is to be", "is also to be"):
    REFERENCES[("it", *_must.split())] = ("IT", "MUST")
