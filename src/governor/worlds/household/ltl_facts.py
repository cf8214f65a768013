"""The facts of the household's action domain (:mod:`.ltl_rules`): which scene instances it covers,
their reach, the effects every move shares, and the facts of a simulator state (``project``).

Fact names hold ``#`` (``held#437``, ``rel#INSIDE#327#305``) so that no constraint atom names
one; the household labels are views over them (``is_grabbed(apple)`` holds when an apple is held).

Imports the household scene, state and labels, and the runtime's action domains.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property

from governor.ltl.actions import Action, When, facts
from governor.worlds.household.labels import proposition
from governor.worlds.household.scene import SceneGraph
from governor.worlds.household.state import State

HOLDERS = frozenset({"SURFACES", "CONTAINERS"})


@dataclass(frozen=True)
class Facts:
    """The instances a domain covers (``ids``; ``grabbable`` among them) in ``scene``."""

    scene: SceneGraph
    ids: frozenset[int]
    grabbable: frozenset[int]
    touch: bool
    names: frozenset[str]

    @classmethod
    def of(cls, scene: SceneGraph, objects: Iterable[str], touch: bool = False) -> Facts:
        """The instances of the classes ``objects`` names, and the closed containers their
        grabbable instances start in (GRAB needs those open)."""
        names = frozenset(n for o in objects if (n := scene.resolve(o) or o) not in scene.rooms)
        ids = {i for n in names for i in scene.by_name.get(n, ()) if scene.nodes[i].actionable}
        todo = [i for i in ids if "GRABBABLE" in scene.nodes[i].properties]
        while todo:
            for a, rel, b in scene.initial_relations:
                if (
                    a == todo[-1]
                    and rel == "INSIDE"
                    and not scene.nodes[b].is_room
                    and b not in ids
                ):
                    ids.add(b)
                    todo.insert(0, b)
            todo.pop()
        grab = frozenset(i for i in ids if "GRABBABLE" in scene.nodes[i].properties)
        return cls(scene, frozenset(ids), grab, touch, names)

    # ------------------------------------------------------------------ naming

    def name(self, i: int) -> str:
        return self.scene.nodes[i].name

    def props(self, i: int) -> frozenset[str]:
        return self.scene.nodes[i].properties

    def room_of(self, i: int) -> int:
        """The room a static instance is in (grabbable ones: the room the scene put them in)."""
        room = self.scene.nodes[i].room
        return room if room is not None else min(self.scene.rooms.values())

    def here(self, rid: int) -> frozenset[str]:
        return facts(f"agent_at({self.scene.nodes[rid].name})")

    @cached_property
    def room_facts(self) -> frozenset[str]:
        return facts(f"agent_at({r})" for r in self.scene.rooms)

    @cached_property
    def all_held(self) -> frozenset[str]:
        return facts(f"held#{i}" for i in self.grabbable)

    @cached_property
    def all_touched(self) -> frozenset[str]:
        return facts(f"touched#{i}" for i in self.ids) if self.touch else frozenset()

    @cached_property
    def holders(self) -> tuple[int, ...]:
        """Static instances things can be put in or on."""
        return tuple(sorted(i for i in self.ids - self.grabbable if self.props(i) & HOLDERS))

    # ------------------------------------------------------------------ places of grabbables

    def rels_of(self, g: int) -> frozenset[str]:
        """Every ``rel#`` fact a grabbable instance may have."""
        out = {f"rel#INSIDE#{g}#{r}" for r in self.scene.rooms.values()}
        for _, rel, h in self.destinations(g):
            out.add(f"rel#{rel}#{g}#{h}")
        for a, rel, b in self.scene.initial_relations:
            if a == g and (b in self.ids or self.scene.nodes[b].is_room):
                out.add(f"rel#{rel}#{g}#{b}")
        return frozenset(out)

    def places_of(self, g: int) -> frozenset[str]:
        loose = {f"loose#{g}#{r}" for r in self.scene.rooms.values()}
        return self.rels_of(g) | loose | {f"home#{g}"}

    def destinations(self, g: int) -> list[tuple[str, str, int]]:
        """(verb, relation, holder) of each PUTIN/PUTBACK of ``g`` into or onto a static holder."""
        out = []
        for h in self.holders:
            out.append(("PUTIN", "INSIDE", h))
            if "SURFACES" in self.props(h):
                out.append(("PUTBACK", "ON", h))
        return [x for x in out if x[2] != g]

    def open_needed(self, rel: str, h: int) -> frozenset[str]:
        return facts(f"open#{h}") if rel == "INSIDE" and "CAN_OPEN" in self.props(h) else facts()

    def in_room_now(self, g: int) -> tuple[When, ...]:
        rooms = self.scene.rooms.values()
        return tuple(When(self.here(r), add=facts(f"rel#INSIDE#{g}#{r}")) for r in rooms)

    def grab_from(self, g: int) -> list[frozenset[str]]:
        """The preconditions of each place ``g`` may be grabbed from (closed containers block)."""
        home = {f"home#{g}"}
        todo, seen = [g], set()
        while todo:
            x = todo.pop()
            for a, rel, b in self.scene.initial_relations:
                if a == x and rel == "INSIDE" and b in self.ids and b not in seen:
                    seen.add(b)
                    todo.append(b)
                    if "CAN_OPEN" in self.props(b):
                        home.add(f"open#{b}")
        out = [facts(home)]
        out += [
            facts(f"rel#{rel}#{g}#{h}") | self.open_needed(rel, h)
            for _, rel, h in self.destinations(g)
        ]
        out += [facts(f"loose#{g}#{r}") for r in self.scene.rooms.values()]
        return out

    def anchors(self, i: int) -> list[tuple[frozenset[str], int, frozenset[int] | None]]:
        """(precondition, room, reach) of standing at ``i`` from each place it may be; reach
        None: anything in the room (``i`` was put on something left out)."""
        reach = self.scene.within_reach
        if i not in self.grabbable:
            return [(frozenset(), self.room_of(i), reach(i))]
        out: list[tuple[frozenset[str], int, frozenset[int] | None]]
        out = [(facts(f"home#{i}"), self.room_of(i), reach(i))]
        out += [
            (facts(f"rel#{rel}#{i}#{h}"), self.room_of(h), reach(h))
            for _, rel, h in self.destinations(i)
        ]
        out += [(facts(f"loose#{i}#{r}"), r, None) for r in self.scene.rooms.values()]
        return out

    def other_spots(self) -> list[tuple[int, str, frozenset[int]]]:
        """(room, name, reach) of one object left out per distinct reach among the covered ones."""
        groups: dict[tuple[int, frozenset[int]], list[int]] = {}
        for n in self.scene.nodes.values():
            if n.actionable and not n.is_room and n.room is not None and n.id not in self.ids:
                sig = self.scene.within_reach(n.id) & self.ids
                if sig:
                    groups.setdefault((n.room, sig), []).append(n.id)
        return [
            (room, self._pick(ids), sig) for (room, sig), ids in sorted(groups.items(), key=str)
        ]

    def put_down_spots(self) -> list[tuple[int, str]]:
        """(room, name) of a surface left out in each room, to put a held thing on."""
        out = []
        for rid in sorted(self.scene.rooms.values()):
            ids = [
                n.id
                for n in self.scene.nodes.values()
                if n.room == rid
                and n.actionable
                and "SURFACES" in n.properties
                and n.id not in self.ids
            ]
            if ids:
                out.append((rid, self._pick(ids)))
        return out

    def _pick(self, ids: list[int]) -> str:
        """The name of one of ``ids``: one whose class is unique in the scene, if any."""
        unique = [i for i in sorted(ids) if len(self.scene.by_name[self.name(i)]) == 1]
        return self.name((unique or sorted(ids))[0])

    # ------------------------------------------------------------------ actions

    def act(self, name: str, i: int, pre: frozenset[str], pre_not: frozenset[str] = frozenset(),
            *, add: frozenset[str] = frozenset(), delete: frozenset[str] = frozenset(),
            when: tuple[When, ...] = (), at_most: tuple[tuple[frozenset[str], int], ...] = ()) -> Action:  # fmt: skip
        """An action on ``i`` (it becomes the one thing touched)."""
        if self.touch:
            delete, add = delete | self.all_touched, add | {f"touched#{i}"}
        return Action(name, pre, pre_not, add, delete, when, at_most)

    def move(self, name: str, rid: int, reach: frozenset[int] | None, *, spot: int | None,
             keep: bool, pre: frozenset[str] = frozenset()) -> Action:  # fmt: skip
        """A WALK (``keep`` False: reach is replaced) or FIND (added to) in room ``rid``, standing
        at ``spot`` (None: an object left out) with ``reach`` from there."""
        if reach is None:
            reach = frozenset(i for i, n in self.scene.nodes.items() if n.room == rid)
        add = set(self.here(rid)) | {f"reach#{s}" for s in self.ids - self.grabbable if s in reach}
        if spot is not None:
            add.add(f"spot#{spot}")
        delete = set(self.room_facts - self.here(rid)) | {f"spot#{i}" for i in self.ids}
        delete |= self.all_touched
        if not keep:
            delete |= {f"reach#{i}" for i in self.ids}
        when: list[When] = []
        for g in sorted(self.grabbable):
            got = facts(f"reach#{g}")
            ifs = [f"held#{g}", f"loose#{g}#{rid}"] + ([f"home#{g}"] if g in reach else [])
            ifs += [f"rel#{rel}#{g}#{h}" for _, rel, h in self.destinations(g) if h in reach]
            when += [When(facts(x), add=got) for x in ifs]
            moved = self.rels_of(g) & {f"rel#INSIDE#{g}#{r}" for r in self.scene.rooms.values()}
            when.append(When(facts(f"held#{g}"), add=facts(f"rel#INSIDE#{g}#{rid}"), delete=moved))
        return Action(name, pre, frozenset(), facts(add), facts(delete), tuple(when))

    # ------------------------------------------------------------------ labels

    def views(self) -> Mapping[str, frozenset[str]]:
        """Each household label and the facts any of which make it hold."""
        out: dict[str, set[str]] = {}
        for i in self.ids:
            n = self.name(i)
            out.setdefault(proposition("agent_at", n), set()).add(f"spot#{i}")
            out.setdefault(proposition("is_open", n), set()).add(f"open#{i}")
            out.setdefault(proposition("is_switchedon", n), set()).add(f"on#{i}")
            touched = out.setdefault(proposition("is_touched", n), set())
            touched |= {f"held#{i}", f"touched#{i}"}
            if i in self.grabbable:
                out.setdefault(proposition("is_grabbed", n), set()).add(f"held#{i}")
                for fact in self.rels_of(i):
                    _, rel, _, b = fact.split("#")
                    pred = "is_in" if rel == "INSIDE" else "is_on"
                    out.setdefault(proposition(pred, n, self.name(int(b))), set()).add(fact)
        return {k: frozenset(v) for k, v in out.items()}

    def project(self, state: State) -> frozenset[str]:
        """The facts of a simulator state."""
        nodes, out = self.scene.nodes, {f"agent_at({self.scene.nodes[state.room].name})"}
        if state.spot in self.ids:
            out.add(f"spot#{state.spot}")
        out |= {f"reach#{i}" for i in (state.near | set(state.holding)) & self.ids}
        out |= {f"held#{i}" for i in state.holding if i in self.ids}
        if self.touch:
            out |= {f"touched#{i}" for i in state.touched & self.ids}
        for i, flag in state.flags:
            if i in self.ids and flag in ("OPEN", "ON"):
                out.add(f"{'open' if flag == 'OPEN' else 'on'}#{i}")
        for a, rel, b in state.relations:
            if a in self.grabbable and f"rel#{rel}#{a}#{b}" in self.rels_of(a):
                out.add(f"rel#{rel}#{a}#{b}")
            elif a in self.ids and a not in self.grabbable and (b in self.ids or nodes[b].is_room):
                out.add(
                    proposition("is_in" if rel == "INSIDE" else "is_on", self.name(a), self.name(b))
                )
        for g in self.grabbable - set(state.holding):
            if g not in state.moved:
                out.add(f"home#{g}")
            elif not any(f"rel#{r}#{g}#{h}" in out for _, r, h in self.destinations(g)):
                out.add(f"loose#{g}#{state.room_of(g)}")
        return frozenset(out)
