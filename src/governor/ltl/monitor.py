"""Runtime monitors: one per natural-language constraint, stepped by progression.

Convention: the first position of the trace is the initial state, so ``start(labels)`` already
progresses the initial labels. Stepping is pure: a what-if is a step whose result is not kept.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from enum import StrEnum

from governor.errors import SpecError
from governor.ltl.parser import parse
from governor.ltl.progression import FALSE, accepts_empty, progress_exact
from governor.ltl.satisfiability import letters, search
from governor.ltl.simplify import simplify
from governor.ltl.syntax import Formula


class MonitorVerdict(StrEnum):
    """What a monitor says about the trace read so far."""

    OK = "ok"  # satisfied so far: the trace may end here
    PENDING = "pending"  # an obligation is pending: it must still be met before the end
    VIOLATED = "violated"  # irrecoverable: no continuation can satisfy the constraint


_RANK = {MonitorVerdict.OK: 0, MonitorVerdict.PENDING: 1, MonitorVerdict.VIOLATED: 2}


def worst(verdicts: Iterable[MonitorVerdict]) -> MonitorVerdict:
    """The most severe verdict (VIOLATED > PENDING > OK); OK when there are none."""
    return max(verdicts, key=_RANK.__getitem__, default=MonitorVerdict.OK)


def classify(
    obligation: Formula, alphabet: Iterable[AbstractSet[str]] | None = None, max_depth: int = 64
) -> MonitorVerdict:
    """The verdict of a progressed obligation.

    VIOLATED when it is ``false``, or, given the alphabet of possible label sets, when an
    exhaustive search finds no continuation over it; OK when the rest of the trace may be empty.
    """
    if obligation == FALSE:
        return MonitorVerdict.VIOLATED
    if accepts_empty(obligation):
        return MonitorVerdict.OK
    if alphabet is not None:
        found = search(obligation, alphabet, max_depth)
        if found.trace is None and found.exhaustive:
            return MonitorVerdict.VIOLATED
    return MonitorVerdict.PENDING


def _frozen(labels: AbstractSet[str]) -> frozenset[str]:
    if type(labels) is frozenset:
        return labels
    if isinstance(labels, str):
        raise TypeError(f"labels: expected a set of label strings, found the str {labels!r}")
    return frozenset(labels)


@dataclass(frozen=True, slots=True)
class MonitorState:
    """A monitor after ``t`` positions: the obligation left, its verdict, the last labels."""

    formula: Formula
    verdict: MonitorVerdict
    labels: frozenset[str]
    t: int


@dataclass(frozen=True, eq=False)
class Monitor:
    """The monitor of one constraint: its formula, a name and the sentence it came from.

    Progression starts from ``simplify(formula)``, so a subformula such as ``X false`` is
    already ``false``. With an ``alphabet`` (every label set a state may have), states from which
    no continuation over it satisfies the formula are VIOLATED as soon as they are reached.
    """

    formula: Formula
    name: str
    text: str = ""
    alphabet: tuple[frozenset[str], ...] | None = None
    max_depth: int = 64
    atoms: frozenset[str] = field(init=False, repr=False)
    start_formula: Formula = field(init=False, repr=False)
    _verdicts: dict[Formula, MonitorVerdict] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        formula = parse(self.formula) if isinstance(self.formula, str) else self.formula
        if not isinstance(formula, Formula):
            raise SpecError(f"monitor formula: expected a Formula or text, found {formula!r}")
        if not isinstance(self.name, str) or not self.name:
            raise SpecError(f"monitor name: expected a non-empty str, found {self.name!r}")
        object.__setattr__(self, "formula", formula)
        object.__setattr__(self, "atoms", formula.atom_labels())
        object.__setattr__(self, "start_formula", simplify(formula))
        if self.alphabet is not None:
            object.__setattr__(self, "alphabet", tuple(letters(self.alphabet)))
        object.__setattr__(self, "_verdicts", {})

    @property
    def initial(self) -> MonitorState:
        """The state before any position is read (the empty trace is not accepted)."""
        return MonitorState(self.start_formula, MonitorVerdict.PENDING, frozenset(), 0)

    def start(self, labels: AbstractSet[str]) -> MonitorState:
        """The state after reading the initial state's labels."""
        return self.step(self.initial, labels)

    def step(self, state: MonitorState, labels: AbstractSet[str]) -> MonitorState:
        """The state after reading one more position labelled ``labels``."""
        fs = _frozen(labels)
        nxt = progress_exact(state.formula, self.atoms.intersection(fs))
        return MonitorState(nxt, self.verdict(nxt), fs, state.t + 1)

    def verdict(self, obligation: Formula) -> MonitorVerdict:
        """The verdict of a progressed obligation of this monitor (memoised)."""
        out = self._verdicts.get(obligation)
        if out is None:
            out = self._verdicts[obligation] = classify(obligation, self.alphabet, self.max_depth)
        return out

    @staticmethod
    def final_verdict(state: MonitorState) -> MonitorVerdict:
        """The verdict if the trace ends now: a pending obligation is a violation."""
        return MonitorVerdict.OK if state.verdict is MonitorVerdict.OK else MonitorVerdict.VIOLATED


@dataclass(frozen=True, slots=True)
class MonitorSetState:
    """Every monitor of a set after ``t`` positions, in the set's order."""

    names: tuple[str, ...]
    formulas: tuple[Formula, ...]
    verdicts: tuple[MonitorVerdict, ...]
    labels: frozenset[str]
    t: int

    @property
    def verdict(self) -> MonitorVerdict:
        return worst(self.verdicts)

    def with_verdict(self, verdict: MonitorVerdict) -> tuple[str, ...]:
        """The names of the monitors whose verdict is ``verdict``."""
        if verdict not in self.verdicts:  # the usual answer, without building a tuple
            return ()
        return tuple(n for n, v in zip(self.names, self.verdicts, strict=True) if v is verdict)

    @property
    def violated(self) -> tuple[str, ...]:
        return self.with_verdict(MonitorVerdict.VIOLATED)

    @property
    def pending(self) -> tuple[str, ...]:
        return self.with_verdict(MonitorVerdict.PENDING)

    def __getitem__(self, name: str) -> MonitorState:
        try:
            i = self.names.index(name)
        except ValueError:
            raise KeyError(f"expected one of {', '.join(self.names)}, found {name!r}") from None
        return MonitorState(self.formulas[i], self.verdicts[i], self.labels, self.t)


@dataclass(frozen=True, eq=False)
class MonitorSet:
    """Named monitors stepped together, one per constraint, so a verdict can name its constraint."""

    monitors: tuple[Monitor, ...]
    names: tuple[str, ...] = field(init=False)

    def __post_init__(self) -> None:
        monitors = tuple(self.monitors)
        for m in monitors:
            if not isinstance(m, Monitor):
                raise SpecError(f"monitor set: expected Monitors, found {m!r}")
        names = tuple(m.name for m in monitors)
        repeated = sorted({n for n in names if names.count(n) > 1})
        if repeated:
            raise SpecError(
                f"monitor set: expected distinct names, found {', '.join(repeated)} twice"
            )
        object.__setattr__(self, "monitors", monitors)
        object.__setattr__(self, "names", names)

    @classmethod
    def from_specs(
        cls,
        specs: Iterable[tuple[str, str, Formula | str]],
        alphabet: Iterable[AbstractSet[str]] | None = None,
    ) -> MonitorSet:
        """Monitors from ``(name, sentence, formula or formula text)`` triples."""
        alpha = None if alphabet is None else tuple(letters(alphabet))
        out = []
        for spec in specs:
            if not (isinstance(spec, tuple) and len(spec) == 3):
                raise SpecError(f"monitor spec: expected (name, text, formula), found {spec!r}")
            name, text, formula = spec
            out.append(Monitor(formula, name, text, alpha))  # type: ignore[arg-type]
        return cls(tuple(out))

    def __len__(self) -> int:
        return len(self.monitors)

    def __iter__(self) -> Iterator[Monitor]:
        return iter(self.monitors)

    def __getitem__(self, name: str) -> Monitor:
        return self.monitors[self.names.index(name)]

    @property
    def initial(self) -> MonitorSetState:
        forms = tuple(m.start_formula for m in self.monitors)
        pending = (MonitorVerdict.PENDING,) * len(forms)
        return MonitorSetState(self.names, forms, pending, frozenset(), 0)

    def start(self, labels: AbstractSet[str]) -> MonitorSetState:
        """Every monitor after reading the initial state's labels."""
        return self.step(self.initial, labels)

    def step(self, state: MonitorSetState, labels: AbstractSet[str]) -> MonitorSetState:
        """Every monitor after one more position labelled ``labels`` (``state`` is unchanged)."""
        if state.names is not self.names and state.names != self.names:
            raise SpecError(
                f"expected a state of monitors {self.names}, found one of {state.names}"
            )
        fs = _frozen(labels)
        forms, verdicts = [], []
        for m, f in zip(self.monitors, state.formulas, strict=True):
            nxt = progress_exact(f, m.atoms.intersection(fs))
            verdict = m._verdicts.get(nxt)
            forms.append(nxt)
            verdicts.append(verdict if verdict is not None else m.verdict(nxt))
        return MonitorSetState(self.names, tuple(forms), tuple(verdicts), fs, state.t + 1)

    def final_verdicts(self, state: MonitorSetState) -> dict[str, MonitorVerdict]:
        """Each monitor's verdict if the trace ends now (pending obligations are violations)."""
        ok, bad = MonitorVerdict.OK, MonitorVerdict.VIOLATED
        return {n: ok if v is ok else bad for n, v in zip(state.names, state.verdicts, strict=True)}
