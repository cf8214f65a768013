"""The word scanner of the offline grounder: objects named at a position (across words, after
determiners, ``it`` for the object named last, the last word of a name already said in full:
"the milking parlour ... the parlour"), propositions checked against the domain, and
the place phrases (going to, entering, visiting X; a bare room). Each read looks at a bounded
window at one position.

World-free: imports the domain, the lexicon, the cue words and the LTL parser.
"""

from __future__ import annotations

from governor.errors import SpecError
from governor.ltl.domain import Domain
from governor.ltl.english import lexicon as lx
from governor.ltl.english.phrases.symbols import CUE_WORDS
from governor.ltl.operators import Or
from governor.ltl.parser import atom
from governor.ltl.syntax import Formula


class NoSuchPredicate(SpecError):
    """An action or state whose predicate the domain has none of (``take`` in a domain of
    places): the words are not a phrase of this domain, and another reading is tried."""


_KEPT_FROM = frozenset(
    {
        ("out", "of"),
        ("clear", "of"),
        ("away", "from"),
        ("must", "avoid"),
        ("you", "avoid"),
        ("to", "avoid"),
        ("never", "enter"),
    }
)
"""The words before "it" that keep the agent from a place: "keep out of it"."""
_GENERIC_TAILS = ("area", "room", "zone", "site")
"""Generic place nouns a place's name may be said without ("the triage" for the triage area)."""


class Scanner:
    """Reads one sentence left to right, grounding what it recognises."""

    def __init__(self, toks: list[str], domain: Domain) -> None:
        self.toks, self.domain = toks, domain
        self.last: str | None = None  # the object named last, for "it"
        self.heads: dict[str, set[str]] = {}  # last word -> objects of several words named

    def at(self, i: int) -> str:
        return self.toks[i] if 0 <= i < len(self.toks) else ""

    def obj(self, i: int) -> tuple[str | None, int]:
        """The object named at ``i`` (after determiners) and the index after it."""
        while self.at(i) in lx.DETERMINERS:
            i += 1
        if self.at(i) == "them":
            return None, i  # all the places named before: the clause grammar reads it
        if self.at(i) in lx.PRONOUNS:
            return (self.last, i + 1) if self.last else (None, i)
        for n in (3, 2, 1):
            if i + n <= len(self.toks):
                found = self.domain.resolve("".join(self.toks[i : i + n]))
                if found is not None:
                    self.last = found
                    if n > 1 and len(self.toks[i + n - 1]) > 2:
                        self.heads.setdefault(self.toks[i + n - 1], set()).add(found)
                    return found, i + n
        bare = self._without_generic(self.at(i))  # "triage" for the triage area
        if bare is not None:
            self.last = bare
            return bare, i + 1
        named = self.heads.get(self.at(i), set())
        some = self.at(i - 1) in lx.INDEFINITE  # "a shop", "any shop": no particular one
        if len(named) == 1 and self.at(i) not in CUE_WORDS and not some:  # "... the parlour"
            self.last = next(iter(named))
            return self.last, i + 1
        return None, i

    def _without_generic(self, word: str) -> str | None:
        """The one place named ``word`` and a generic place noun ("triage" for
        ``triage_area``), if exactly one is."""
        if len(word) < 4 or word in CUE_WORDS or word in lx.GENERIC_PLACES:
            return None
        found = {self.domain.resolve(word + g) for g in _GENERIC_TAILS} - {None}
        return next(iter(found)) if len(found) == 1 else None

    def indefinite(self, i: int) -> None:
        """After "a place" / "any room", "it" refers to that noun, not to the object named
        before: forget the last object; so after "leave one" ("once you leave one, don't go
        back into it")."""
        if self.at(i) in lx.INDEFINITE and self.at(i + 1) in lx.GENERIC_PLACES:
            self.last = None
        if self.at(i) == "one" and self.at(i - 1) in lx.LEAVING | lx.INDEFINITE:
            self.last = None

    def need(self, i: int, start: int) -> tuple[str, int]:
        """The object at ``i``, or an error when a content word there names none."""
        found, j = self.obj(i)
        if found is None:
            word = self.at(j)
            phrase = " ".join(self.toks[start : j + 1])
            if word in lx.PRONOUNS:
                raise SpecError(f"cannot ground {phrase!r}: {word!r} refers to nothing before it")
            raise self.domain.unknown_object(word or "the end of the sentence", phrase)
        return found, j

    def content(self, i: int) -> bool:
        """Whether a noun may start at ``i``: an object, a pronoun or an unknown content word."""
        while self.at(i) in lx.DETERMINERS:
            i += 1
        word = self.at(i)
        if word in lx.PRONOUNS:
            return True
        return (
            bool(word) and word not in lx.FUNCTION and word not in lx.VERBS and not word.isdigit()
        )

    def prop(self, predicate: str, *args: str) -> Formula:
        label = f"{predicate}({', '.join(args)})"
        if label not in self.domain.known:
            if not any(p.startswith(predicate + "(") for p in self.domain.known):
                raise NoSuchPredicate(label)
            raise self.domain.unknown_proposition(label)
        return atom(label)

    def place(self, obj: str) -> Formula:
        label = self.domain.location(obj)
        if label is None:
            raise self.domain.unknown_proposition(f"agent_at({obj})")
        return atom(label)

    def onto(self, x: str, y: str) -> Formula:
        known = [f"{p}({x}, {y})" for p in ("is_on", "is_in")]
        found = [atom(k) for k in known if k in self.domain.known]
        if not found:
            raise self.domain.unknown_proposition(known[0])
        return found[0] if len(found) == 1 else Or(tuple(found))

    def motion(self, i: int) -> tuple[int, Formula] | None:
        """Going to, entering, visiting, ... a place."""
        if self.at(i) not in lx.MOTION:
            return None
        j = i + 1
        while self.at(j) in lx.PARTICLES:
            j += 1
        if not self.content(j):
            return None
        if j == i + 1 and self.at(j) not in lx.DETERMINERS and self.obj(j)[0] is None:
            return None  # "be away from": no particle, no object; not a place phrase
        found, after = self.obj(j)
        if found is None and (self.at(after) in CUE_WORDS or self.at(i) in lx.STATIVE):
            return None  # "visited at most twice", "be on time": no place named
        if found is None and (self.at(j) in lx.INDEFINITE or self.at(j) in lx.PRONOUNS):
            return None  # "never enter a room before the previous one", "visit them": a list
        if found is None and self.at(after) in lx.LIST_POSITIONS:
            return None  # "before you have visited the previous one": a position in the list
        x, k = self.need(j, i)
        return k, self.place(x)

    def bare(self, i: int) -> tuple[int, Formula] | None:
        """A room, or a place after a cue such as ``before`` or ``avoid``; "it" after "out of",
        "clear of", "away from" is the place named last ("the vault is wet, so keep out of it")."""
        if self.at(i) in lx.PRONOUNS:
            kept_from = (self.at(i - 2), self.at(i - 1)) in _KEPT_FROM
            label = self.domain.location(self.last) if self.last and kept_from else None
            return (i + 1, atom(label)) if label and self.at(i) == "it" else None
        x, j = self.obj(i)
        if x is None:
            return None
        label = self.domain.location(x)
        if label is None or not (label in self.domain.rooms or self.at(i - 1) in lx.PLACE_CUES):
            return None
        return j, atom(label)
