"""Domains for translating constraints: the propositions a labelling function produces, the names
that refer to their objects, the domain's rules, and label sets for satisfiability checks.

A proposition is a canonical label (``agent_at(kitchen)``, ``is_in(apple, fridge)``) or a bare
name (``kitchen``). Objects are the arguments of the propositions and the bare names; a phrase
refers to an object when its spelling key (lower case, no spaces, ``_`` or ``-``) is an alias.
"""

from __future__ import annotations

import difflib
import functools
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from governor.errors import SpecError, expected
from governor.ltl.parser import atom, canonical_label
from governor.ltl.satisfiability import exactly_one, one_hot, powerset
from governor.ltl.syntax import Formula
from governor.worlds.household.labels import arguments, proposition_vocabulary, room_propositions
from governor.worlds.household.scene import SPELLING_ALIASES, SceneGraph, name_key
from governor.worlds.household.sim import default_scene
from governor.worlds.household.tasks import Task, find_task, load_tasks

MAX_EXTRAS = 10
"""Most non-room propositions an alphabet enumerates (it has rooms * 2**extras label sets)."""
SHOWN = 40
"""Most known propositions or objects an error message lists."""


@dataclass(frozen=True)
class Domain:
    """What constraints may talk about.

    ``aliases`` maps spelling keys to object names; ``rules`` hold on every trace of the domain;
    ``alphabet`` lists the label sets a state may have (over the propositions the task's
    constraints mention). ``rooms`` are the propositions of which exactly one holds; ``places``
    gives, for ``agent_at(object)``, the room propositions that can hold with it.
    """

    name: str
    propositions: list[str]
    aliases: dict[str, str]
    rules: list[Formula]
    alphabet: list[frozenset[str]]
    rooms: tuple[str, ...] = ()
    places: dict[str, frozenset[str]] = field(default_factory=dict)
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
    def of(cls, name: str, propositions: Iterable[str], rooms: Iterable[str] = ()) -> Domain:
        """A domain over ``propositions``; with ``rooms``, exactly one of them holds at a time."""
        props = [canonical_label(p) for p in propositions]
        room_list = tuple(canonical_label(r) for r in rooms)
        rules = [exactly_one(room_list)] if room_list else []
        alphabet = one_hot(room_list) if room_list else powerset(props[:MAX_EXTRAS])
        return cls(name, props, default_aliases(props), rules, alphabet, room_list)

    @functools.cached_property
    def objects(self) -> list[str]:
        """The objects the propositions are about, sorted."""
        return sorted({a for p in self.propositions for a in proposition_args(p)})

    def resolve(self, words: str) -> str | None:
        """The object that ``words`` name (any case, spacing or known misspelling), if any."""
        return self.aliases.get(name_key(words))

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


def proposition_args(label: str) -> tuple[str, ...]:
    """The objects a proposition is about: its arguments, or its own name when it has none."""
    return arguments(label) if "(" in label else (label,)


def _listing(items: list[str]) -> str:
    if not items:
        return "none"
    shown = ", ".join(items[:SHOWN])
    return shown if len(items) <= SHOWN else f"{shown} ... and {len(items) - SHOWN} more"


def default_aliases(propositions: Iterable[str]) -> dict[str, str]:
    """Spelling keys of every object, and the household's misspellings of them."""
    objs = {a for p in propositions for a in proposition_args(p)}
    out = {name_key(o): o for o in sorted(objs)}
    for key, target in SPELLING_ALIASES.items():
        if target in objs:
            out.setdefault(key, target)
    return out


def household_domain(
    task: Task | str | None = None,
    *,
    extra_objects: Iterable[str] = (),
    scene: SceneGraph | None = None,
    data_dir: str | Path | None = None,
) -> Domain:
    """The Safety Chip household: TestScene1's propositions (for a task, those about its
    objects), exactly one room at a time, and an alphabet over the task's constraint propositions.

    ``extra_objects`` adds grabbable objects the scene lacks (``agent_at``, ``is_grabbed``,
    ``is_touched``, ``is_in``/``is_on`` the scene's holders); they never hold in the simulator.
    """
    scene = scene if scene is not None else default_scene(data_dir)
    if isinstance(task, str):
        task = find_task(task, load_tasks(data_dir))
    props = set(proposition_vocabulary(scene, task))
    objs = {a for p in props for a in arguments(p)}
    kinds = {n.name: n.properties for n in scene.nodes.values() if n.name in objs}
    surfaces = {x for x, ps in kinds.items() if "SURFACES" in ps}
    holders = surfaces | {x for x, ps in kinds.items() if "CONTAINERS" in ps} | set(scene.rooms)
    for x in extra_objects:
        props |= {f"agent_at({x})", f"is_grabbed({x})", f"is_touched({x})"}
        props |= {f"is_in({x}, {y})" for y in holders} | {f"is_on({x}, {y})" for y in surfaces}
    rooms = tuple(r for r in room_propositions() if r in props)
    places = {}
    for name, ids in scene.by_name.items():
        found = {scene.nodes[r].name for i in ids if (r := scene.nodes[i].room) is not None}
        if f"agent_at({name})" in props and found and name not in scene.rooms:
            places[f"agent_at({name})"] = frozenset(f"agent_at({r})" for r in found)
    name = "household" if task is None else f"household ({task.key})"
    base = Domain(
        name, sorted(props), default_aliases(props), [exactly_one(rooms)], one_hot(rooms),
        rooms, places,
    )  # fmt: skip
    if task is None:
        return base
    return Domain(
        name, base.propositions, base.aliases, base.rules, _task_alphabet(base, task), rooms, places
    )


def _task_alphabet(domain: Domain, task: Task) -> list[frozenset[str]]:
    """Label sets over the rooms and the propositions of the task's translatable constraints."""
    from governor.ltl.translate import translate_offline

    texts = dict.fromkeys(c for group in task.constraints.values() for c in group)
    formulas = [f for t in texts if (f := translate_offline(t, domain).formula) is not None]
    atoms = sorted({a for f in formulas for a in f.atom_labels()} - set(domain.rooms))
    return domain.alphabet_for(*(atom(x) for x in atoms[:MAX_EXTRAS]))
