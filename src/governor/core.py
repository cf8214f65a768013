"""The core types of governor: one loop, and what flows through it.

A base :class:`Policy` proposes :class:`Candidate` actions for a :class:`Trajectory`; every
:class:`Constraint` judges each candidate with a :class:`Verdict`; the observer's arbiter turns the
verdicts into a :class:`Decision` (execute, execute with implicit feedback, regenerate with forced
:class:`Feedback`, fallback, defer, abort); after the environment moves, each constraint commits
the executed :class:`Step` into its own slot of the trajectory's memory.

Every LLM call made anywhere inside a metered scope is counted (:mod:`governor.usage`): backends
record their calls themselves, so a constraint cannot make a hidden one.

All types here are frozen. A trajectory is an immutable snapshot; a what-if check reads it and
never changes it.
"""

from __future__ import annotations

import math
import numbers
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from enum import IntEnum, StrEnum
from types import MappingProxyType
from typing import Any, Generic, TypeVar

from governor.usage import Usage

A = TypeVar("A")

_NO_DEVIATION = 0.0
_FULL_CONFIDENCE = 1.0


# --------------------------------------------------------------------------- verdicts


class Severity(IntEnum):
    """How much a violation matters; feedback mentions the most severe first."""

    LOW = 0
    MEDIUM = 1
    HIGH = 2
    CRITICAL = 3


@dataclass(frozen=True, slots=True)
class Verdict:
    """One constraint's judgement of one candidate action.

    ``deviation`` >= 0 is the distance past the constraint's boundary (0 when satisfied); an
    admissible verdict with a positive deviation was accepted within the constraint's tolerance
    and carries implicit feedback. ``margin`` is the signed distance to the boundary when known
    (a safety value, a distance to failure). ``error`` is set when the check itself failed; such a
    verdict is never admissible. Build verdicts with the named constructors.
    """

    constraint: str
    admissible: bool
    deviation: float = 0.0
    margin: float | None = None
    confidence: float = 1.0
    descriptor: str = ""
    severity: Severity = Severity.MEDIUM
    error: str | None = None
    cause: RejectionCause | None = None
    """The constraint's own name for why it rejects, when it has one (a lookahead constraint:
    ``lookahead_failure``); the arbiter names that cause when every rejection carries it."""
    repair: Any = None
    """A safe replacement for the rejected action that the constraint proposes, when it has one
    (a safety value's safest action); a fallback may execute it (recovery, not bare refusal)."""

    def __post_init__(self) -> None:
        # the common case, decided from exact types alone (a verdict it does not settle, e.g. an
        # int deviation or an error, gets the full validation below, which raises as before)
        margin = self.margin
        if (
            type(self.constraint) is str
            and type(self.admissible) is bool
            and type(self.severity) is Severity
            and type(self.deviation) is float
            and type(self.confidence) is float
            and 0.0 <= self.deviation < math.inf
            and 0.0 <= self.confidence <= 1.0
            and (margin is None or (type(margin) is float and margin == margin))
            and self.error is None
            and self.cause is None
        ):
            return
        self._validate()

    def _validate(self) -> None:
        if not isinstance(self.constraint, str):
            raise ValueError(
                f"verdict constraint: expected a name (str), found {self.constraint!r}"
            )
        if not isinstance(self.admissible, bool):
            found = f"{type(self.admissible).__name__} {self.admissible!r}"
            raise ValueError(f"verdict admissible: expected True or False, found {found}")
        if not isinstance(self.severity, Severity):
            raise ValueError(f"verdict severity: expected a Severity, found {self.severity!r}")
        for name in ("deviation", "confidence") + (("margin",) if self.margin is not None else ()):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, numbers.Real):
                raise ValueError(f"verdict {name}: expected a number, found {value!r}")
        if not (self.deviation >= 0.0 and math.isfinite(self.deviation)):
            raise ValueError(
                f"verdict deviation: expected a finite number >= 0, found {self.deviation!r}"
            )
        if not 0.0 <= self.confidence <= 1.0:
            raise ValueError(
                f"verdict confidence: expected a number in [0, 1], found {self.confidence!r}"
            )
        if self.margin is not None and math.isnan(self.margin):
            raise ValueError("verdict margin: expected a number or None, found NaN")
        if self.error is not None and self.admissible:
            raise ValueError("a verdict whose check failed cannot be admissible")
        if self.cause is not None and (
            self.admissible or not isinstance(self.cause, RejectionCause)
        ):
            raise ValueError(
                f"verdict cause: expected a RejectionCause on a rejection, found {self.cause!r}"
                f" on {'an admissible' if self.admissible else 'a rejecting'} verdict"
            )

    @classmethod
    def allow(
        cls,
        constraint: str,
        *,
        margin: float | None = None,
        deviation: float = _NO_DEVIATION,
        confidence: float = _FULL_CONFIDENCE,
        descriptor: str = "",
        severity: Severity = Severity.LOW,
    ) -> Verdict:
        """Admissible; a positive ``deviation`` means within tolerance (implicit feedback).
        A plain admission (no argument but the name) is made once per name and shared (it is
        immutable)."""
        if (
            deviation is _NO_DEVIATION
            and confidence is _FULL_CONFIDENCE
            and margin is None
            and severity is Severity.LOW
            and not descriptor
            and type(descriptor) is str
            and type(constraint) is str
            and cls is Verdict
        ):
            plain = _ALLOWED.get(constraint)
            if plain is None:
                plain = cls(constraint, True, deviation, margin, confidence, descriptor, severity)
                if len(_ALLOWED) >= _ALLOWED_LIMIT:
                    _ALLOWED.clear()
                _ALLOWED[constraint] = plain
            return plain
        return cls(constraint, True, deviation, margin, confidence, descriptor, severity)

    @classmethod
    def reject(
        cls,
        constraint: str,
        deviation: float,
        descriptor: str,
        *,
        margin: float | None = None,
        confidence: float = 1.0,
        severity: Severity = Severity.HIGH,
        cause: RejectionCause | None = None,
        repair: Any = None,
    ) -> Verdict:
        """Inadmissible: ``deviation`` past the boundary, explained by ``descriptor``; ``repair``
        is the safe replacement the constraint proposes, if any."""
        return cls(
            constraint,
            False,
            deviation,
            margin,
            confidence,
            descriptor,
            severity,
            cause=cause,
            repair=repair,
        )

    @classmethod
    def from_margin(
        cls, constraint: str, margin: float, *, threshold: float = 0.0, descriptor: str = ""
    ) -> Verdict:
        """Admissible iff ``margin > threshold`` (a safety monitor's switching rule)."""
        if margin > threshold:
            return cls.allow(constraint, margin=margin, descriptor=descriptor)
        return cls.reject(constraint, threshold - margin, descriptor, margin=margin)

    @classmethod
    def failed(cls, constraint: str, error: BaseException | str) -> Verdict:
        """The check could not be made: inadmissible, with the error recorded (fail closed)."""
        text = error if isinstance(error, str) else f"{type(error).__name__}: {error}"
        return cls(
            constraint, False, 0.0, None, 0.0, f"check failed: {text}", Severity.CRITICAL, text
        )

    @property
    def needs_feedback(self) -> bool:
        """Accepted, but past the boundary within tolerance: worth an implicit note."""
        return self.admissible and self.deviation > 0.0


_ALLOWED: dict[str, Verdict] = {}
"""The plain admission of each constraint name (:meth:`Verdict.allow` with the name alone)."""
_ALLOWED_LIMIT = 4096


# --------------------------------------------------------------------------- candidates, steps


@dataclass(frozen=True, slots=True)
class Candidate(Generic[A]):
    """An action proposed by a policy, with the raw text it came from when a model wrote it.

    A candidate whose ``error`` is set could not be turned into an action (a reply that is not a
    valid choice); it is inadmissible without being shown to any constraint.
    """

    action: A | None
    text: str | None = None
    error: str | None = None
    logprob: float | None = None

    @classmethod
    def invalid(cls, text: str | None, error: str) -> Candidate[Any]:
        return cls(None, text, error)

    @property
    def valid(self) -> bool:
        return self.error is None and self.action is not None


class FeedbackKind(StrEnum):
    IMPLICIT = "implicit"  # rides along with an accepted action, for the next proposal
    FORCED = "forced"  # asks the policy to regenerate now


@dataclass(frozen=True, slots=True)
class Feedback:
    """What the observer tells the base policy, built from verdict descriptors."""

    kind: FeedbackKind
    text: str
    constraints: tuple[str, ...] = ()


class DecisionKind(StrEnum):
    EXECUTE = "execute"
    EXECUTE_WITH_FEEDBACK = "execute_with_feedback"
    REGENERATE = "regenerate"
    FALLBACK = "fallback"
    DEFER = "defer"
    ABORT = "abort"


class RejectionCause(StrEnum):
    """Why a set of candidates was not executed (the journal paper, section 5.5)."""

    EMPTY = "empty_admissible_set"
    LOW_CONFIDENCE = "low_confidence"
    CONFLICT = "conflicting_constraints"
    TIMEOUT = "time_budget_exceeded"
    ERROR = "stage_error"
    LOOKAHEAD = "lookahead_failure"  # locally admissible, but rollouts reach an unsafe region


V = TypeVar("V")


_VERDICT_FIELDS = tuple(f.name for f in fields(Verdict))


class VerdictMemo(Generic[V]):
    """Values made from verdicts, kept across calls for verdicts (exact :class:`Verdict`) whose
    fields are all exact immutable scalars: checks memoise their verdicts, so the same objects
    come back step after step, and such a verdict's value never changes. Keyed by the verdict's
    id, the verdict held with its value (so no other object has that id while it is kept); at
    most ``limit`` entries, cleared when full."""

    _IMMUTABLE = frozenset({str, float, int, bool, type(None), Severity, RejectionCause})

    def __init__(self, limit: int = 1024) -> None:
        self.limit = limit
        self._kept: dict[int, tuple[Verdict, V]] = {}

    def get(self, v: Verdict) -> V | None:
        """The value kept for ``v``; None when none is."""
        got = self._kept.get(id(v))
        return None if got is None else got[1]

    def keep(self, v: Verdict, value: V) -> bool:
        """Keep ``value`` for ``v`` when ``v``'s fields are all exact immutable scalars; whether
        it was kept."""
        if type(v) is not Verdict:
            return False
        immutable = self._IMMUTABLE
        if not all(type(getattr(v, f)) in immutable for f in _VERDICT_FIELDS):
            return False
        if len(self._kept) >= self.limit:
            self._kept.clear()
        self._kept[id(v)] = v, value
        return True


@dataclass(frozen=True, slots=True)
class Step:
    """One executed step: what was seen, what was done, what came of it."""

    observation: Any
    action: Any
    next_observation: Any
    decision: DecisionKind
    info: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class CommitFailure:
    """Stands in a constraint's memory slot after its commit failed; it then rejects everything."""

    error: str


@dataclass(frozen=True)
class Trajectory:
    """The interaction state: executed steps, the current observation, per-constraint memory.

    ``memory`` maps a constraint's name to the state it keeps (a monitor's automaton state, running
    feature aggregates). ``feedback`` is implicit feedback waiting for the next proposal.
    """

    observation: Any
    steps: tuple[Step, ...] = ()
    memory: Mapping[str, Any] = field(default_factory=dict)
    feedback: Feedback | None = None
    info: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "memory", MappingProxyType(dict(self.memory)))
        object.__setattr__(self, "info", MappingProxyType(dict(self.info)))

    @property
    def t(self) -> int:
        """The number of executed steps."""
        return len(self.steps)

    def advance(
        self, step: Step, memory: Mapping[str, Any], feedback: Feedback | None
    ) -> Trajectory:
        """The trajectory after ``step``; this one is left as it was."""
        if type(self) is not Trajectory:  # a subclass's own fields are carried over
            return replace(
                self,
                observation=step.next_observation,
                steps=(*self.steps, step),
                memory=memory,
                feedback=feedback,
                info=step.info,
            )
        return Trajectory(step.next_observation, (*self.steps, step), memory, feedback, step.info)


# --------------------------------------------------------------------------- the three plug-ins


class Constraint(ABC):
    """Judges candidate actions. Its state lives in ``traj.memory[self.name]``, never on self.

    ``check`` is a side-effect-free what-if; ``commit`` returns the constraint's new state after an
    action was executed. A ``hard`` constraint (a safety rule, an LTL monitor) judges the
    fallback's action too, and a fallback action it rejects is not executed: the step is deferred.
    Soft constraints (style overlays) judge only the policy's proposals. A value filter whose
    fallback is its own argmax need not be hard: in a state where even that action fails the
    margin, it is still the safest one.
    """

    name: str = "constraint"
    hard: bool = False
    pure: bool = False
    """Whether ``check`` and ``commit`` compute from their arguments alone, bounded by their size:
    no model call, no I/O, nothing that waits. A guard whose every stage is pure (or awaits its
    I/O) runs its steps on the service's event loop (:mod:`governor.on_loop`)."""

    def initial_state(self, observation: Any) -> Any:
        """The state this constraint keeps at the start of an episode."""
        return None

    @abstractmethod
    def check(self, traj: Trajectory, action: Any) -> Verdict:
        """Judge ``action`` as the next step of ``traj``."""

    def commit(self, traj: Trajectory, step: Step) -> Any:
        """The new state after ``step`` was executed (``traj`` is the trajectory before it)."""
        return traj.memory.get(self.name)


class NoMoreProposals(Exception):
    """Raised by a policy that cannot propose again in this step (a streamed reply has already
    released text): the step falls back for the last attempt's cause, and nothing failed."""


class Policy(ABC):
    """The base policy: an LLM, a planner or a controller. It is never trusted."""

    name: str = "policy"

    @abstractmethod
    def propose(
        self, traj: Trajectory, feedback: Feedback | None, n: int
    ) -> Sequence[Candidate[Any]]:
        """Up to ``n`` candidate next actions, most preferred first."""


class Fallback(ABC):
    """The recovery policy used when no proposed candidate is admissible."""

    name: str = "fallback"

    @abstractmethod
    def act(self, traj: Trajectory, verdicts: Sequence[Verdict]) -> Any | None:
        """A safe action, or ``None`` to stop (the episode is aborted, nothing is executed)."""


# --------------------------------------------------------------------------- decisions


@dataclass(frozen=True, slots=True)
class Attempt:
    """One round of proposal and judgement inside a step."""

    candidates: tuple[Candidate[Any], ...]
    verdicts: tuple[tuple[Verdict, ...], ...]  # one row per candidate
    feedback: Feedback | None  # the feedback the proposal was made under
    chosen: int | None
    cause: RejectionCause | None


@dataclass(frozen=True, slots=True)
class Decision:
    """What the observer decided for one step, and everything it based the decision on."""

    kind: DecisionKind
    action: Any | None
    verdicts: tuple[Verdict, ...] = ()
    feedback: Feedback | None = None
    reason: str = ""
    cause: RejectionCause | None = None
    attempts: tuple[Attempt, ...] = ()
    latency: Mapping[str, float] = field(default_factory=dict)
    usage: Mapping[str, Usage] = field(default_factory=dict)
    errors: tuple[str, ...] = ()

    @property
    def executed(self) -> bool:
        return self.action is not None and self.kind not in (DecisionKind.DEFER, DecisionKind.ABORT)

    @property
    def intervened(self) -> bool:
        """The guard changed what the base policy would have done on its first try."""
        return self.kind in (DecisionKind.FALLBACK, DecisionKind.DEFER, DecisionKind.ABORT) or (
            len(self.attempts) > 1
        )

    @property
    def total_usage(self) -> Usage:
        stages = tuple(self.usage.values())
        if len(stages) == 1:  # (the usual step: its proposal's calls alone)
            return stages[0]
        total = Usage()
        for usage in stages:
            total = total + usage
        return total

    @property
    def regenerations(self) -> int:
        return max(0, len(self.attempts) - 1)

    @property
    def proposing_seconds(self) -> float:
        """Time the base policy (the model) spent proposing in this step."""
        return self.latency.get("propose", 0.0)

    @property
    def judging_seconds(self) -> float:
        """Time the guard spent on this step (checks, feedback, fallback): all but proposing."""
        return sum(s for stage, s in self.latency.items() if stage != "propose")
