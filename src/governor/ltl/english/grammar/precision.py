"""Precision first: a reading is offered only when the sentence is accounted for.

Checked after the clause grammar has read a sentence, before its reading is offered:

- **unplaced words** (:func:`unplaced`): a word the normaliser dropped that carries meaning no
  clause read: a timing word ("next", "immediately", "instant"), a counting word ("twice",
  "fourth", "times", "at most"; unless a count was read), a negation ("avoid", "without", "not")
  or a head noun of the domain's names that no grounded phrase uses ("floors" in "without
  changing floors"). The sentence fails and names them.
- **a negation's scope** (:func:`negated_commands`): a place a coordinated clause commands going
  to ("..., and go to the green room") may not come out only negated: "avoid the red room and go
  to the green room" is not ``G !red & G !green``.
- **a command not required** (:func:`unrequired_command`): a sentence that opens by commanding a
  visit and says "after" must require that visit: "navigate to A after going to B" is not
  ``G(B -> A)``, which a run that never reaches A satisfies.

World-free: imports the LTL syntax, operators and satisfiability search only.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from governor.ltl import operators as op
from governor.ltl import syntax as s
from governor.ltl.satisfiability import powerset, search

TIMING = frozenset(
    [
        "next",
        "immediately",
        "instantly",
        "instant",
        "instants",
        "promptly",
        "within",
        "subsequent",
        "following",
    ]
)
"""Timing words: never dropped from a reading."""
COUNTING = frozenset(
    [
        "once",
        "twice",
        "thrice",
        "times",
        "third",
        "fourth",
        "fifth",
        "sixth",
        "seventh",
        "eighth",
        "ninth",
        "tenth",
        "most",
        "least",
        "fewer",
    ]
)
"""Counting words: never dropped from a reading."""
NEGATION = frozenset(
    ["not", "never", "no", "avoid", "avoiding", "without", "nor", "neither", "except", "unless"]
)
"""Negation words: never dropped from a reading."""
STAYING = frozenset(["staying", "remaining", "leaving", "changing"])
"""Words of staying in an area ("while staying on the second floor"): never dropped."""
MOTION = frozenset(
    [
        "go",
        "navigate",
        "head",
        "move",
        "proceed",
        "travel",
        "fly",
        "drive",
        "walk",
        "visit",
        "reach",
        "enter",
        "get",
    ]
)
"""Imperative verbs of motion that command a visit."""
NEGATING = frozenset(["not", "never", "avoid", "avoiding", "without", "no", "nor"])
"""Words that, right before a place, say it is avoided."""


def unplaced(
    dropped: Iterable[str], domain_words: set[str], said: set[str], syms: Sequence[str]
) -> list[str]:
    """The dropped words that carry meaning: timing, negation, counting (unless a count was
    read), or a word of the domain's names that no grounded phrase of the sentence (``said``:
    their words) uses."""
    counted = any(re.fullmatch(r"(?:LE|GE|EQ|GT|LT|N|WITHIN)_\d+", x) for x in syms)
    out = []
    for w in dropped:
        bare = w[:-1] if w.endswith("s") and len(w) > 3 else w
        own = (w in domain_words or bare in domain_words) and not {w, bare} & said
        if w in TIMING or w in NEGATION or w in STAYING or (w in COUNTING and not counted) or own:
            out.append(w)
    return list(dict.fromkeys(out))


def polarities(f: s.Formula) -> dict[str, set[bool]]:
    """Atom name -> the polarities (True: positive) of its occurrences in ``f``."""
    out: dict[str, set[bool]] = {}
    stack: list[tuple[s.Formula, bool]] = [(f, True)]
    while stack:
        g, pos = stack.pop()
        if isinstance(g, s.Atom):
            out.setdefault(g.name, set()).add(pos)
        elif isinstance(g, op.Not):
            stack.append((g.arg, not pos))
        elif isinstance(g, op.Iff):
            stack += [(g.left, pos), (g.left, not pos), (g.right, pos), (g.right, not pos)]
        elif isinstance(g, op.Implies):
            stack += [(g.left, not pos), (g.right, pos)]
        elif isinstance(g, s.Unary):
            stack.append((g.arg, pos))
        elif isinstance(g, s.Binary):
            stack += [(g.left, pos), (g.right, pos)]
        elif isinstance(g, s.NAry):
            stack += [(x, pos) for x in g.args]
    return out


def commanded(phrase_text: str) -> bool:
    """Whether a referring phrase opens with an imperative verb of motion ("go to the lab")."""
    words = phrase_text.split()
    return bool(words) and words[0] in MOTION


COORDINATING = frozenset({"and", ",", "then", "but", "."})
"""Tokens before a coordinated clause ("..., and go to B")."""


def negated_commands(
    f: s.Formula, tokens: Sequence[str], phrases: Iterable[tuple[str, str]]
) -> list[str]:
    """The commanded phrases (``(text, placeholder)``) of a coordinated clause ("avoid A and go
    to B", "avoid A, navigate to B") that ``f`` reads only negated: the negation of the clause
    before spread over them."""
    pol = polarities(f)
    toks = list(tokens)
    at = [k for k, x in enumerate(toks) if re.fullmatch(r"P\d+", x)]
    out = []
    for k, (text, name) in zip(at, phrases, strict=False):  # each mention, in order
        if pol.get(name) != {False} or toks[k] != name:
            continue
        j, verb = k - 1, commanded(text)
        while j >= 0 and (toks[j] in MOTION_FORMS or toks[j] in _LINKS):
            verb = verb or toks[j] in MOTION_FORMS
            j -= 1
        prev = toks[j] if j >= 0 else None
        coordinated = prev in COORDINATING or bool(prev and re.fullmatch(r"P\d+", prev))
        if verb and coordinated and not _negated_before(toks, name):
            out.append(text)
    return out


MOTION_FORMS = MOTION | frozenset(
    [
        "going",
        "navigating",
        "heading",
        "moving",
        "proceeding",
        "travelling",
        "traveling",
        "flying",
        "visiting",
        "reaching",
        "entering",
    ]
)
"""Verbs of motion, in their imperative and -ing forms."""
_LINKS = frozenset({"to", "into", "towards", "the", "then", "directly", "straight"})


def _negated_before(tokens: Sequence[str], name: str) -> bool:
    """Whether the clause of ``name`` opens with a negation and names no place before it ("do
    not, at any point, set foot in A": the commas part no clauses)."""
    k = list(tokens).index(name)
    before = [t for t in tokens[:k] if t not in (",",)]
    return bool(NEGATING & set(before[:2])) and not any(re.fullmatch(r"P\d+", t) for t in before)


def first_out_of_order(symbols: Sequence[str]) -> bool:
    """Whether a clause opening with "but" after a place asks for another place first ("go to
    A, but first B", "go to A, but go through B first"): an order no clause reading keeps."""
    for k, x in enumerate(symbols):
        if x != "BUT" or not any(re.fullmatch(r"P\d+", y) for y in symbols[:k]):
            continue
        clause = []
        for y in symbols[k + 1 :]:
            if y in ("STOP", "COMMA"):
                break
            clause.append(y)
        if "FIRST" in clause and not {"NOT", "NOR", "ANYORDER", "ONLY", "UNTIL"} & set(clause):
            return True
    return False


def unrequired_command(f: s.Formula, symbols: Sequence[str], first: str | None) -> bool:
    """Whether the sentence says "after", opens by commanding a visit to the placeholder
    ``first``, and ``f`` (over placeholder atoms) has a run that never makes ``first`` true."""
    marked = {"NEXT", "ONLY", "ANY", "WHENEVER", "IF"} & set(symbols)
    if first is None or "AFTER" not in symbols or marked:
        return False  # "right after", "only after", "after every": a reaction said as one
    names = sorted({a.name for a in f.atoms()})
    if first not in names or len(names) > 6 or not all(re.fullmatch(r"P\d+", n) for n in names):
        return False
    never = op.And((f, op.Always(op.Not(s.Atom(first)))))
    found = search(never, powerset(names), max_depth=16, max_states=4000)
    return found.trace is not None


LEAD = MOTION | {"to", "the", "into", "towards", "please", "first", "now"}
"""Words that may open a command before its place."""


def opening(tokens: Sequence[str], phrases: Iterable[tuple[str, str]]) -> str | None:
    """The placeholder of the place the sentence opens by commanding a visit to (by a motion
    verb before it or in its phrase), or None."""
    words = [t for t in tokens if t not in (",", ".")]
    k = 0
    while k < len(words) and words[k] in LEAD:
        k += 1
    if k >= len(words) or not re.fullmatch(r"P\d+", words[k]):
        return None
    text = next((x for x, name in phrases if name == words[k]), "")
    return words[k] if k > 0 or commanded(text) else None
