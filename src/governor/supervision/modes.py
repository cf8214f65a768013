"""Modes (sub-policies) and the graph of which mode may follow which.

A :class:`Mode` is an activity with its own :class:`~governor.observer.Observer`: its base policy
(prompts), its constraints (overlays, LTL monitors, value filters) and its fallback. The
:class:`ModeGraph` says which modes an interaction may start in and which mode may follow which
(staying in a mode is always allowed). It is validated when built: every mode must be reachable
from the initial mode, and from every mode a path must lead back to the initial one (no dead
end); either failure is a :class:`~governor.errors.ConfigError` naming the mode.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from governor.errors import ConfigError, expected
from governor.observer import Observer


@dataclass(frozen=True, eq=False)
class Mode:
    """One sub-policy: a name, the observer that runs it, and what it is for.

    ``prompt`` is the instruction a language-model policy of this mode works under (kept here so
    a trace reader can see what each mode asked for); the observer's policy is what uses it.
    """

    name: str
    observer: Observer
    description: str = ""
    prompt: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.isidentifier():
            raise ConfigError(
                f"mode name: {expected('an identifier such as small_talk', self.name)}"
            )
        if not isinstance(self.observer, Observer):
            raise ConfigError(f"mode {self.name}: {expected('an Observer', self.observer)}")

    @property
    def atom(self) -> str:
        """The proposition that holds at a step where this mode is executed: ``mode_<name>``."""
        return mode_atom(self.name)


def mode_atom(name: str) -> str:
    """``mode_<name>``: the proposition of a mode in the mode rules."""
    return f"mode_{name}"


def _reach(start: Iterable[str], edges: Mapping[str, frozenset[str]]) -> set[str]:
    seen = set(start)
    todo = deque(seen)
    while todo:
        for nxt in edges.get(todo.popleft(), frozenset()):
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return seen


class ModeGraph:
    """Modes, the transitions between them, the initial mode and the entry modes.

    ``edges[a]`` are the modes that may follow ``a`` (besides ``a`` itself). ``entries`` are the
    modes an interaction may start in (default: the initial mode only).
    """

    def __init__(
        self,
        modes: Iterable[Mode],
        edges: Mapping[str, Iterable[str]],
        initial: str,
        entries: Iterable[str] | None = None,
    ) -> None:
        found = tuple(modes)
        names = [m.name for m in found]
        if not names:
            raise ConfigError(f"mode graph: {expected('at least one mode', names)}")
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise ConfigError(f"mode graph: {expected('distinct mode names', twice)} twice")
        known = set(names)
        frozen = {}
        for src, targets in edges.items():
            outs = frozenset(targets) if not isinstance(targets, str) else frozenset((targets,))
            for name in (src, *sorted(outs)):
                if name not in known:
                    raise ConfigError(f"mode graph edge: {expected(f'one of {names}', name)}")
            frozen[src] = outs - {src}
        start = frozenset((initial,) if entries is None else entries)
        for name in (initial, *sorted(start)):
            if name not in known:
                raise ConfigError(
                    f"mode graph: initial/entry mode {expected(f'one of {names}', name)}"
                )
        self.modes: tuple[Mode, ...] = found
        self.edges: Mapping[str, frozenset[str]] = MappingProxyType(frozen)
        self.initial = initial
        self.entries: frozenset[str] = start
        self._validate()

    def _validate(self) -> None:
        reachable = _reach([self.initial, *self.entries], self.edges)
        for m in self.modes:
            if m.name not in reachable:
                raise ConfigError(
                    f"mode graph: mode {m.name!r} is unreachable: no path leads to it from the"
                    f" initial mode {self.initial!r} or an entry mode; expected an edge into it"
                )
        for m in self.modes:
            if self.initial not in _reach([m.name], self.edges):
                raise ConfigError(
                    f"mode graph: mode {m.name!r} is a dead end: no path leads from it back to"
                    f" the initial mode {self.initial!r}; expected an edge out of it"
                )

    def __iter__(self) -> Iterator[Mode]:
        return iter(self.modes)

    def __len__(self) -> int:
        return len(self.modes)

    def __contains__(self, name: object) -> bool:
        return any(m.name == name for m in self.modes)

    def __getitem__(self, name: str) -> Mode:
        for m in self.modes:
            if m.name == name:
                return m
        raise ConfigError(f"mode: {expected(f'one of {self.names}', name)}")

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(m.name for m in self.modes)

    def allows(self, current: str | None, nxt: str) -> bool:
        """Whether ``nxt`` may follow ``current`` (``None``: whether an interaction may start in it)."""
        if current is None:
            return nxt in self.entries
        return nxt == current or nxt in self.edges.get(current, frozenset())
