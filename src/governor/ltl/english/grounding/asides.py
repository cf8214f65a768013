"""The asides of a constraint sentence, removed from its tokens before grounding: the words that
frame a rule or give its reason without constraining anything.

- *framing*: an opening "Could you please", "Can you", "I would appreciate it if you", "Just
  so you know,", "To be clear,", "The rule is:", "Here is what I need:" and a closing "if you
  can", "if possible", "please", "thanks" ask or announce; the rule is what they frame.
- *reasons*: "because ...", "so that ...", "given that ...", "so" before a subject right after
  the rule ("close it at the next step so the cat can't get out", "..., so nobody trips"), and
  "since" /
  "as" after a comma before a subject ("..., since the floor is wet", "..., as it is unsafe")
  give the reason of a rule. A reason runs to the sentence end or to a comma before a new clause
  (", and", ", but", ", so", ", then", ...); one that opens a sentence ("Because the floor is
  wet, ...") runs to its first comma. "Since" elsewhere stays a time ("after"), and a purpose
  ("enter the bedroom in order to enter the bathroom later") may order places: it stays.
  A reason that says a time, an order or a count ("..., because the door locks at the next
  step", "..., since you must be there before the bell") or addresses the agent with a rule
  ("because you must not enter B") may be part of the rule: the sentence fails rather than
  lose it.

Tokens are those of :func:`governor.ltl.english.lexicon.tokens` (``.`` ends a sentence, ``,`` a
clause). One left-to-right pass: linear in the sentence.

Imports the time units and the error type only.
"""

from __future__ import annotations

from collections.abc import Sequence

from governor.errors import SpecError
from governor.ltl.english.phrases.time_units import UNIT_NOUNS

__all__ = ["without_asides"]


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


def _phrases(text: str) -> tuple[tuple[str, ...], ...]:
    """Phrases of ``text`` (separated by ``|``), longest first."""
    out = {tuple(p.split()) for p in text.split("|")}
    return tuple(sorted(out, key=len, reverse=True))


_OPENERS = _phrases(
    "could you please|could you|would you please|would you|can you please|can you|will you"
    "|will you please|please|kindly|i would appreciate it if you|i would appreciate it if"
    "|it would be great if you|it would be nice if you|i would be grateful if you"
    "|i would like it if you|just so you know ,|just so you know|to be clear ,|just to be clear ,"
    "|for the record ,|the rule is .|the rule is that|the rule is|the rule .|rule .|here is the"
    " rule .|here is what i need .|here is what i need you to do .|what i need is|what i need ."
    "|important .|note .|note that|please note .|please note that|remember that|keep in mind that"
    "|bear in mind that|heads up ,|heads up .|just a heads up .|just a heads up ,|a heads up .|one more thing ,"
    "|one more thing .|okay ,|ok ,|so ,|alright ,"
)
"""Openings of a sentence that ask or announce; the rule follows them."""
_CLOSERS = _phrases(
    "please|if you can|if possible|if you would|if you do not mind|if you please|thanks"
    "|thank you|thank you very much|thanks a lot|, please|, thanks|, thank you"
)
"""Closings of a sentence that ask politely."""
_REASONS = _phrases("because|so that|given that|seeing that")
"""Words that open a reason anywhere."""
_SUBJECT_REASONS = frozenset({"since", "as"})
"""Words that open a reason only after a comma and before a subject ("..., since it is wet")."""
_SUBJECTS = _words(
    "it they this that there the we i he she its their our his her these those one a an"
)
_NEW_CLAUSE = _words(
    "and but so then or also never do always whenever if when once after before until you"
    " stay keep go avoid visit"
)
"""Words after a comma that start a new clause: the end of a reason said after the rule."""
_NOBODY = _words("nobody noone nothing everyone everybody")
"""Subjects of a purpose after "so" even after a comma ("..., so nobody sneaks in"); after a
comma, "so" before another subject may open the rule's own consequence ("..., so the robot
must keep out of it")."""
_ENDS = frozenset({".", ""})
_TIMED = (
    _words(
        "next following within immediately until before after then first later earlier once twice"
        " times previous afterwards eventually again"
    )
    | UNIT_NOUNS
)
"""Words of a time, an order or a count: a reason that says one may be part of the rule."""
_RULES = _phrases(
    "you must|you have to|you need to|you should|you cannot|you may not|you must not|you are not"
    "|you are required|you are only|you may only|you can only|do not|you will"
)
"""Words that address the agent with a rule."""


def _at(toks: Sequence[str], i: int, phrase: tuple[str, ...]) -> bool:
    return tuple(toks[i : i + len(phrase)]) == phrase


def _opens(toks: Sequence[str], i: int) -> bool:
    """Whether a sentence starts at ``i``."""
    return i == 0 or toks[i - 1] == "."


def _reason_at(toks: Sequence[str], i: int) -> bool:
    """Whether a reason opens at ``i``."""
    if any(_at(toks, i, r) for r in _REASONS):
        return True
    nxt = toks[i + 1] if i + 1 < len(toks) else ""
    if toks[i] == "so" and i > 0:  # "close it at once so the cat can't get out"
        return nxt in _NOBODY or (toks[i - 1] != "," and nxt in _SUBJECTS)
    return toks[i] in _SUBJECT_REASONS and i > 0 and toks[i - 1] == "," and nxt in _SUBJECTS


def _reason_end(toks: Sequence[str], i: int, opening: bool) -> int:
    """The index where a reason opening at ``i`` ends (the comma or sentence end it stops at)."""
    j = i + 1
    while j < len(toks) and toks[j] != ".":
        if toks[j] == "," and (opening or (toks[j + 1 : j + 2] or [""])[0] in _NEW_CLAUSE):
            return j
        j += 1
    return j


def _unread(toks: Sequence[str], start: int, end: int) -> str | None:
    """The words of a reason between ``start`` and ``end`` that may belong to the rule."""
    said = [t for t in toks[start:end] if t in _TIMED]
    for j in range(start, end):
        rule = next((r for r in _RULES if _at(toks, j, r)), None)  # the longest at ``j``
        said += [" ".join(rule)] if rule else []
    return ", ".join(said) or None


def without_asides(toks: Sequence[str]) -> list[str]:
    """``toks`` without framing and reasons (see the module docstring)."""
    out: list[str] = []
    i = 0
    while i < len(toks):
        if _opens(toks, i):
            opener = next((o for o in _OPENERS if _at(toks, i, o) and len(o) < len(toks) - i), None)
            if opener is not None:
                i += len(opener)
                continue
        closer = next(
            (
                c
                for c in _CLOSERS
                if _at(toks, i, c) and toks[i + len(c) : i + len(c) + 1] in ([], ["."])
            ),
            None,
        )
        if closer is not None and out:
            i += len(closer)
            continue
        if _reason_at(toks, i):
            opening = _opens(toks, i)
            end = _reason_end(toks, i, opening)
            unread = _unread(toks, i, end)
            if unread is not None:
                raise SpecError(
                    f"expected a reason that constrains nothing, found one that says {unread!r}:"
                    f" {' '.join(toks[i:end])!r}"
                )
            if out and out[-1] == "," and (end >= len(toks) or toks[end] == "."):
                out.pop()  # "stay out, because ...": the comma before the reason
            i = end + (opening and end < len(toks) and toks[end] == ",")
            continue
        out.append(toks[i])
        i += 1
    return out
