"""Domains for translating constraints: the propositions a labelling function produces, the names
that refer to their objects, the domain's rules, and label sets for satisfiability checks.

A proposition is a canonical label (``agent_at(kitchen)``, ``is_in(apple, fridge)``) or a bare
name (``kitchen``). Objects are the arguments of the propositions and the bare names; a phrase
refers to an object when its spelling key (lower case, no spaces, ``_`` or ``-``) is an alias.

World-free: imports the error tree and the LTL syntax, parser and satisfiability helpers only. A
world builds its own domain (the household's: :mod:`governor.worlds.household.ltl_domain`), with
its phrase table for the translator when it has one.
"""

from __future__ import annotations

import difflib
import functools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from governor.errors import SpecError, expected
from governor.ltl.parser import canonical_label
from governor.ltl.satisfiability import exactly_one, one_hot, powerset
from governor.ltl.syntax import Formula

MAX_EXTRAS = 10
"""Most non-room propositions an alphabet enumerates (it has rooms * 2**extras label sets)."""
SHOWN = 40
"""Most known propositions or objects an error message lists."""


@dataclass(frozen=True)
class Domain:
    """What constraints may talk about.

    ``aliases`` maps spelling keys (:func:`spelling_key`) to object names; ``rules`` hold on
    every trace of the domain (the joint satisfiability check assumes them); ``alphabet`` lists
    the label sets a state may have (over the propositions the task's constraints mention).
    ``rooms`` are the propositions of which exactly one holds (their objects, :attr:`room_names`,
    are read as places the agent is *in*); ``places`` gives, for ``agent_at(object)``, the room
    propositions that can hold with it. ``phrases`` is the world's phrase table for the English
    translator (a :class:`governor.ltl.english.grounding.world_phrases.WorldPhrases`: how its
    verbs and described states name its propositions), or None: the logic never reads it.
    ``groups`` names sets of propositions of which at most one holds at a time (``floor``:
    ``first_floor``, ``second_floor``...), so that English may say "without changing floors";
    ``convention`` is the English translator's convention the domain declares (None: the
    translator's default); the logic reads neither.
    """

    name: str
    propositions: list[str]
    aliases: dict[str, str]
    rules: list[Formula]
    alphabet: list[frozenset[str]]
    rooms: tuple[str, ...] = ()
    places: dict[str, frozenset[str]] = field(default_factory=dict)
    phrases: object | None = None
    groups: dict[str, tuple[str, ...]] = field(default_factory=dict)
    convention: str | None = None
    known: frozenset[str] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        props = [canonical_label(p) for p in self.propositions]
        object.__setattr__(self, "propositions", sorted(dict.fromkeys(props)))
        object.__setattr__(self, "known", frozenset(props))
        missing = sorted(set(self.rooms) - self.known)
        if missing:
            what = "rooms among the propositions"
            raise SpecError(f"domain {self.name}: {expected(what, ', '.join(missing))}")

    @classmethod
    def of(
        cls,
        name: str,
        propositions: Iterable[str],
        rooms: Iterable[str] = (),
        misspellings: Mapping[str, str] | None = None,
    ) -> Domain:
        """A domain over ``propositions``; with ``rooms``, exactly one of them holds at a time;
        ``misspellings`` maps more spelling keys to objects (see :func:`default_aliases`)."""
        props = [canonical_label(p) for p in propositions]
        room_list = tuple(canonical_label(r) for r in rooms)
        rules = [exactly_one(room_list)] if room_list else []
        alphabet = one_hot(room_list) if room_list else powerset(props[:MAX_EXTRAS])
        return cls(name, props, default_aliases(props, misspellings), rules, alphabet, room_list)

    @functools.cached_property
    def objects(self) -> list[str]:
        """The objects the propositions are about, sorted."""
        return sorted({a for p in self.propositions for a in proposition_args(p)})

    @functools.cached_property
    def room_names(self) -> frozenset[str]:
        """The objects of the room propositions (``kitchen`` for ``agent_at(kitchen)``)."""
        return frozenset(a for r in self.rooms for a in proposition_args(r))

    def resolve(self, words: str) -> str | None:
        """The object that ``words`` name (any case, spacing or known misspelling), if any."""
        return self.aliases.get(spelling_key(words))

    def about(self, obj: str) -> list[str]:
        """The propositions that mention ``obj``."""
        return [p for p in self.propositions if obj in proposition_args(p)]

    def location(self, obj: str) -> str | None:
        """The proposition saying the agent is at ``obj``: ``agent_at(obj)``, else ``obj``."""
        for label in (f"agent_at({obj})", obj):
            if label in self.known:
                return label
        return None

    def unknown_proposition(self, label: str) -> SpecError:
        """The error for a proposition the domain does not have, naming known ones."""
        objs = [a for a in proposition_args(label) if a in self.objects]
        near = [p for o in objs for p in self.about(o)]
        near = near or difflib.get_close_matches(label, self.propositions, n=8, cutoff=0.5)
        hint = f"; known propositions about {', '.join(objs)}" if objs else "; close ones"
        return SpecError(
            f"{label} is not a proposition of the {self.name} domain{hint}: {_listing(near)}"
        )

    def unknown_object(self, word: str, phrase: str) -> SpecError:
        """The error for a phrase naming no object of the domain, naming the known ones."""
        what = f"an object of the {self.name} domain ({_listing(self.objects)})"
        return SpecError(
            f"cannot ground {phrase!r}: {expected(what, word)}; "
            f"known propositions: {_listing(self.propositions)}"
        )

    def check(self, formula: Formula) -> Formula:
        """``formula`` when every atom is a proposition of the domain; else the error."""
        for label in sorted(formula.atom_labels()):
            if label not in self.known:
                raise self.unknown_proposition(label)
        return formula

    def alphabet_for(self, *formulas: Formula) -> list[frozenset[str]]:
        """Label sets over the rooms and the other propositions the formulas mention.

        The agent is in exactly one room, at no more than one object, and at an object only in
        a room where it can be.
        """
        atoms = sorted({a for f in formulas for a in f.atom_labels()})
        extras = [a for a in atoms if a not in self.rooms]
        if len(extras) > MAX_EXTRAS:
            raise SpecError(
                f"alphabet: {expected(f'at most {MAX_EXTRAS} propositions besides rooms', extras)}"
            )
        if not self.rooms:
            return powerset(extras) if extras else [frozenset()]
        spots = [a for a in extras if a.startswith("agent_at(")]
        out = []
        for letter in one_hot(self.rooms, extras):
            at = [a for a in spots if a in letter]
            if len(at) > 1 or any(not (self.places.get(a, letter) & letter) for a in at):
                continue
            out.append(letter)
        return out


def spelling_key(words: str) -> str:
    """The spelling-insensitive key of a name: lower case, without spaces, ``_`` or ``-``."""
    return words.lower().replace("_", "").replace(" ", "").replace("-", "")


def proposition_args(label: str) -> tuple[str, ...]:
    """The objects a proposition is about: its arguments, or its own name when it has none."""
    if "(" not in label:
        return (label,)
    return tuple(label[label.index("(") + 1 : label.rindex(")")].split(", "))


def _listing(items: list[str]) -> str:
    if not items:
        return "none"
    shown = ", ".join(items[:SHOWN])
    return shown if len(items) <= SHOWN else f"{shown} ... and {len(items) - SHOWN} more"


def default_aliases(
    propositions: Iterable[str], misspellings: Mapping[str, str] | None = None
) -> dict[str, str]:
    """Spelling keys of every object (a possessive word said without its "s" too: the lexer
    drops "'s"), and ``misspellings`` (spelling key -> object) of the objects
    the propositions mention."""
    objs = {a for p in propositions for a in proposition_args(p)}
    out = {spelling_key(o): o for o in sorted(objs)}
    for o in sorted(objs):  # "the patient's room" (lexed "patient room") is patients_room
        parts = o.split("_")
        for k, w in enumerate(parts[:-1]):
            if len(w) > 2 and w.endswith("s") and not w.endswith("ss"):
                out.setdefault(spelling_key("".join([*parts[:k], w[:-1], *parts[k + 1 :]])), o)
    for key, target in (misspellings or {}).items():
        if target in objs:
            out.setdefault(key, target)
    return out
