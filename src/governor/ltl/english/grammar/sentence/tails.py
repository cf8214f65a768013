"""Sentence passes on what a rule's sentence says besides the rule: a second sentence (or a
clause after ";" / ":") that explains it, and a task said before a clause that awaits it.

- *explanations*: after a sentence that names a place or a proposition, a sentence that names
  none and says nothing the clause rules read ("Keep the lights on until everyone has left;
  nobody should trip on the way out.", "Never set foot in the vault. Guards only.", "Never go
  into the pool or the hot tub; the kids' safety comes first.") gives a reason: dropped. What it may
  hold is a negation, a modal, a condition, "only", "first", "always" or "so" (all of them words of the
  reason's own clause); a reference, a quantifier, a count, a time, an order, a repetition or a
  return ("Never go back.", "Don't skip ahead.", "Visit both.", "Twice.") is a rule about what
  was named before, and stays; a count said again ("Enter the vault at most once: one visit,
  max.") restates it, and so do other counts denied after an exact one ("exactly twice: not
  once, not three times"). "Only if ..." / "only when ..." restricts the rule before: it stays. A quantifier refers to a list only where two places or more were
  named, and not after a list of things the domain does not name ("The tomatoes and the tools
  both need looking at.").
- *tasks awaited*: "Disarm the alarm, and don't enter the hallway until it's disarmed", "Wash
  your hands, and stay out of the nursery until you have done so", "Lock the door, which is a
  must, and don't switch the oven on before it's locked": a clause that only says a task (a
  proposition) which a later clause of the sentence awaits ("until" / "before" it) is said by
  that clause too (the strong until obliges it): the first clause is dropped.

Imports the clause cut of the list references only.
"""

from __future__ import annotations

import re

from governor.ltl.english.grammar.sentence.lists import clauses_of

__all__ = ["explanations", "tails", "tasks_awaited"]

_P = re.compile(r"P\d+")
_COUNT = re.compile(r"(?:LE|GE|EQ|GT|LT|N)_\d+")
_SAYS_NOTHING = frozenset(
    {"NOT", "MUST", "CAN", "IF", "WHENEVER", "WHILE", "FIRST", "ONLY", "AND", "OR",
     "COMMA", "SO", "BE", "PERF", "SAME", "ALWAYS", "BETWEEN"}
)  # fmt: skip
"""Symbols a reason's own clause may hold (it names nothing and refers to nothing)."""


def explanations(syms: list[str]) -> list[str]:
    """``syms`` without the sentences that explain the one before (see the module docstring)."""
    out: list[str] = []
    named = False
    for start, end in clauses_of(syms, ("STOP",)):
        part = syms[start:end]
        listed = len({x for x in out if _P.fullmatch(x)}) > 1  # "both", "all": the list named
        nothing = _SAYS_NOTHING | (
            {"ANY"} if not listed or part[:1] in (["AND"], ["OR"]) else set()
        )
        counts = {x for x in out if _COUNT.fullmatch(x)}  # "at most once: one visit, max."
        exact = {x[3:] for x in counts if x.startswith("EQ_")}  # "exactly twice: not once, ..."
        if exact and part[:1] == ["NOT"]:
            counts |= {x for x in part if x.startswith("N_") and x[2:] not in exact}
        condition = "ONLY" in part and {"IF", "WHENEVER", "WHILE"} & set(part)  # "Only if needed."
        reason = named and part and not condition and all(x in nothing or x in counts for x in part)
        if not reason:
            out += [*part, *syms[end : end + 1]]
        named = named or any(_P.fullmatch(x) for x in part)
    return out


_TASK = re.compile(
    r"^(P\d+) (?:COMMA )*(?:WHICH MUST (?:COMMA )?)?(?:AND )?(?=(?:MUST )?NOT (?:(?!STOP).)*"
    r"\b(?:UNTIL|BEFORE) (?:PERF )?(?:\1|REF)\b)"
)


def tasks_awaited(syms: list[str], props: frozenset[str]) -> list[str]:
    """``syms`` without an opening task that a later clause awaits (see the module docstring)."""
    text = " ".join(syms)
    m = _TASK.match(text)
    if m is None or m[1] not in props:
        return syms
    rest = text[m.end() :].replace(" REF", f" {m[1]}", 1) if " REF" in text else text[m.end() :]
    return rest.split()


def tails(syms: list[str], props: frozenset[str]) -> list[str]:
    """Both passes: tasks awaited, then explanations."""
    return explanations(tasks_awaited(syms, props))
