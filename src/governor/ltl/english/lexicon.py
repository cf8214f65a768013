"""The English word lists of the offline grounder, and the normalisation of sentences."""

from __future__ import annotations

import re

CONTRACTIONS = {
    "don't": "do not", "doesn't": "does not", "didn't": "did not", "haven't": "have not",
    "hasn't": "has not", "hadn't": "had not", "can't": "cannot", "won't": "will not",
    "mustn't": "must not", "shouldn't": "should not", "isn't": "is not", "aren't": "are not",
    "wasn't": "was not", "you've": "you have", "you're": "you are", "it's": "it is",
    "i'd": "i would", "we'd": "we would", "you'd": "you would", "here's": "here is",
    "that's": "that is", "there's": "there is", "what's": "what is", "let's": "let us",
    "i'm": "i am", "we're": "we are", "they're": "they are", "i'll": "i will", "we'll": "we will",
    "you'll": "you will", "it'll": "it will", "weren't": "were not", "wouldn't": "would not",
    "couldn't": "could not",
}  # fmt: skip


def _set(text: str) -> frozenset[str]:
    return frozenset(text.split())


DETERMINERS = _set("the a an your my that this its her his their our")
PRONOUNS = frozenset({"it", "them"})
INDEFINITE = _set("a an any another each every one no")
"""Determiners of a noun that names no particular place ("enter a room")."""
LEAVING = _set("leave leaves left leaving exit exits exited exiting")
"""Verbs of leaving: "once you leave one" names no particular place."""
GENERIC_PLACES = _set(
    "place places room rooms location locations spot spots area areas site sites stop stops"
    " destination destinations waypoint waypoints"
)
"""Nouns that name no particular place ("once you have left a place")."""
LIST_POSITIONS = _set("previous next preceding following prior earlier later former latter")
"""Words of a noun that names a place by its position in a list ("the previous one")."""
MOTION = _set(
    "go goes going went gone enter enters entering entered visit visits visiting visited been be"
    " walk walks walking walked reach reaches reached reaching come comes coming came return"
    " returns returning returned head heads heading sit sits sitting sat lie lies lying reenter"
    " reenters reentering reentered"
)
PARTICLES = _set("to into in inside near past on onto by at back over toward towards")
PLACE_CUES = _set("before after avoid from near past than at in unlock unlocks")
PUT = _set("put puts putting place places placed placing store stores stored")
OPEN = _set("open opens opened opening")
CLOSE = _set("close closes closed closing shut shuts shutting")
GRAB = _set("grab grabs grabbed grabbing take takes took taking hold holds")
PICK = _set("pick picks picked picking")
SWITCH = _set("switch switches switched switching turn turns turned turning")
IN, ON = _set("in into int inside"), frozenset({"on", "onto"})
VERBS = MOTION | PUT | OPEN | CLOSE | GRAB | PICK | SWITCH
FUNCTION = _set(
    "later if before after until then and or but when once twice again more less at for in on to"
    " up it them you is are not never too ever also afterward afterwards first , ."
)


MODALS = _set("must should will shall")
"""Modal words a proposition's mention may hold ("the battery must become full")."""
PUNCTUATION = frozenset({",", ".", "(", ")"})
"""The punctuation :func:`tokens` keeps: a comma, ``.`` for any sentence end (``;:!?``), and the
parentheses of an aside (each also a sentence end)."""
STATIVE = _set("be being is are was were sit sits sitting")
"""First words of a place phrase that say where the agent is, not where it goes ("sit in the
waiting room until ..." stays there)."""
RELATIVE = _set("that which who")
"""Relative pronouns: a phrase holding one is a subject with a relative clause."""
RETURNING = _set(
    "return returns returning returned revisit revisits revisiting revisited back reenter reenters"
    " reentering reentered"
)
"""Words of a place phrase that make it a visit again."""


_TRIP = (
    r"\b(?:(?:take|make|do|pay) (?:a|an|one) (?:trip|journey|run|walk|visit|drive|detour)"
    r"|(?:take|bring|drive|get) (?:me|us)|drive|drives|driving|drove"
    r"|find (?:your|its|their|the) way(?: up| down| over| across| back| out)?) (?=to\b|into\b)"
)
"""A trip phrase: "take a trip to X", "take me to X", "drive into X", "find your way up to X" say
"go to X"."""
_SHAPE = (
    (r"\bsooner or later\b", "eventually"),  # one adverb inside an event phrase too
    (r"\bset(?:s|ting)? foot (?:in|into|inside|on)\b", "enter"),  # "never set foot in it"
    (r"\bany (more|fewer|less) than\b", r"\1 than"),  # "not ... any more than three times"
    (r"\bwhichever (?:one )?(?:is|seems|looks) (?:\w+ )?first\b", "in any order"),
    (r"\b([a-z]{3,})s (\d+) (and|or) (\d+)\b", r"\1 \2 \3 \1 \4"),  # "rooms 212 and 214"
    (r"\b(you|we|they|i)(?: have|'ve) got\b", r"\1 have"),  # "you've got three steps to"
    (r"(^|[.!;:]\s+)([^.!?;:]+)\?\s+then\b", r"\1if \2, then"),  # "siren on? then ..."
    (
        r"\b(?:take|follow|run|do|walk|drive|ride) (?:the|this|that) (?:route|path|itinerary)\b:?",
        "visit",
    ),
    (
        r"\s*,\s*(max|maximum|tops|at most|at the most|minimum|at minimum|at least)(?=\s*(?:[.;:!?]|$))",
        r" \1",
    ),
)
"""Rewrites of whole phrases: "set foot in" is "enter", "any more than" is "more than",
"whichever is closer first" is "in any order", "rooms 212 and 214" is "room 212 and room 214",
"you have got" is "you have", "take the route A, B, C" is "visit A, B, C", a question answered by "then" ("Siren on? Then ...") is a
condition, and a closing count after a comma ("two trips to A, max") closes
the count."""


_ENUMERATED = re.compile(
    r"(?:^|(?<=[.;]\s))\s*(step|stage|stop|leg) (one|two|three|four|five|six|\d)\s*:"
)
_ORDINALS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}


def _enumerated(low: str) -> str:
    """ "Step one: A. Step two: B.": the first, then the next (numbered 1, 2, 3, ... in turn);
    numbered otherwise, the text is left as it is (its numbers stay unread)."""
    found = list(_ENUMERATED.finditer(low))
    numbers = [_ORDINALS.get(m[2]) or int(m[2]) for m in found]
    if len(found) < 2 or numbers != list(range(1, len(found) + 1)):
        return low
    return _ENUMERATED.sub(lambda m: "first" if m.start() == found[0].start() else " then", low)


def words(sentence: str) -> list[str]:
    """Lower-case words, contractions expanded, punctuation dropped, ``can not`` -> ``cannot``."""
    return [w for w in tokens(sentence) if w not in PUNCTUATION]


def tokens(sentence: str) -> list[str]:
    """:func:`words`, with commas kept, ``. ; : ! ?`` kept as ``.`` (clause boundaries) and
    parentheses kept inside ``.`` (``. ( ... ) .``); an arrow ``->`` is "implies"."""
    out: list[str] = []
    low = re.sub(r"\s*(?:->|=>|→)\s*", " implies ", sentence.lower())  # an arrow: "a -> b"
    low = re.sub(r"\s[-–—]+\s|[–—]", " , ", low)  # a dash between clauses
    low = re.sub(r"[(\[]", " . ( ", low)  # a parenthesis is a clause of its own, marked
    low = re.sub(r"[)\]]", " ) . ", low)
    low = low.replace("’", "'").replace("-", " ")
    low = re.sub(r"\bafter (?:that|which|this)\b", "afterwards", low)
    low = re.sub(r"\bre (?=enter)", "re", low)
    low = _enumerated(re.sub(_TRIP, "go ", low))  # "take a trip to the dumpster", "pay a visit to"
    for pattern, repl in _SHAPE:
        low = re.sub(pattern, repl, low)
    low = re.sub(r"\beither(?: one| of them)?(?=\s*(?:[.,;:!?]|$))", "them", low)  # "into either"
    low = re.sub(r"\b([a-z0-9_]+)'s\b", lambda m: m[0] if m[0] in CONTRACTIONS else m[1], low)
    for w in re.findall(r"[a-z0-9_']+|[,.;:!?()]", low):
        if w in ",.;:!?()":
            out.append(w if w in ",()" else ".")
            continue
        out.extend(CONTRACTIONS.get(w, w.replace("'", "")).split())
    text = " ".join(w for w in out if w)
    return re.sub(r"\bcan not\b", "cannot", text).split()
