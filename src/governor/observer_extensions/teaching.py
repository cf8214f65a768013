"""Teachable overlays (extension 3): user feedback during a session becomes an overlay update.

A :class:`Teacher` is a constraint of the loop whose memory slot holds the session's updates:
per-overlay overrides (bounds and epsilon scaled: tighten or loosen; or removed), phrases the user
asked the agent not to mention (added rules, judged by the teacher itself) and the record of every
update: who, what, which rule, the words that asked for it, when (turn and clock) and the rule
before and after. :class:`TaughtOverlay` judges with an overlay as this session's updates left it.

Updates come from the user's turns: when a step is committed, the next user turn is read for
:data:`LESSONS` ("be briefer", "be gentler", "don't mention X", ...), and the update applies to
the very next check (at once, this session only). :meth:`Teacher.teach` applies one explicitly.

A safety rule cannot be loosened or removed by users: a rule is protected when its severity is
critical, its epsilon is 0 (high rigidity) or it is named in ``locked``. Such an update is refused
with a message naming the rule: :meth:`Teacher.teach` raises a :class:`~governor.errors.SpecError`,
and a refusal read from a user turn is recorded as refused. Tightening a safety rule is allowed.

The fallible mode of a tutoring agent is in :mod:`.fallible`. Parsers are
regular expressions over the first 2,000 characters of a turn.
"""

from __future__ import annotations

import dataclasses
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from governor.core import Constraint, Severity, Step, Trajectory, Verdict
from governor.errors import SpecError, expected
from governor.overlays.constraint import OverlayConstraint
from governor.overlays.rules import Bounds, Overlay

Action = Literal["tighten", "loosen", "remove", "ban"]
MAX_READ = 2000


@dataclass(frozen=True)
class Lesson:
    """A phrase users say, and the update it makes: ``action`` on ``rule`` by ``factor``."""

    pattern: re.Pattern[str]
    action: Action
    rule: str = ""
    factor: float = 1.0


def _lesson(pattern: str, action: Action, rule: str = "", factor: float = 1.0) -> Lesson:
    return Lesson(re.compile(pattern, re.I), action, rule, factor)


LESSONS: tuple[Lesson, ...] = (
    _lesson(r"\b(be briefer|be brief|shorter|too long|less wordy)\b", "tighten", "brevity", 0.7),
    _lesson(r"\b(longer answers|more detail|you can say more)\b", "loosen", "brevity", 1.4),
    _lesson(r"\b(be gentler|too harsh|be nicer|that was mean)\b", "tighten", "harsh_feedback", 0.5),
    _lesson(r"\b(be more direct|be blunt|don'?t sugar-?coat)\b", "loosen", "harsh_feedback", 1.5),
    _lesson(r"\b(too formal|be more casual|less stiff)\b", "tighten", "formality", 0.7),
    _lesson(r"\b(insult me|be mean|roast me)\b", "loosen", "no_insults", 2.0),
    _lesson(r"\bdon'?t (?:mention|talk about|bring up) ([\w' -]{2,40}?)(?:[.!,;]|$)", "ban"),
)
"""The default phrases (the first that matches applies; ``ban`` captures the phrase)."""


def protected(overlay: Overlay, locked: Sequence[str] = ()) -> bool:
    """Whether users may not loosen or remove ``overlay`` (a safety rule)."""
    return overlay.severity >= Severity.CRITICAL or overlay.epsilon == 0.0 or overlay.name in locked


def _scaled(overlay: Overlay, factor: float) -> dict[str, float | None]:
    b = overlay.bounds
    return {
        "min": None if b.min is None else b.min / factor,
        "max": None if b.max is None else b.max * factor,
        "epsilon": overlay.epsilon * factor,
    }


def _rule(overlay: Overlay) -> dict[str, float | None]:
    return {"min": overlay.bounds.min, "max": overlay.bounds.max, "epsilon": overlay.epsilon}


class Teacher(Constraint):
    """Holds and applies this session's overlay updates (see the module doc)."""

    name = "teaching"

    def __init__(
        self,
        overlays: Sequence[Overlay],
        *,
        lessons: Sequence[Lesson] = LESSONS,
        locked: Sequence[str] = (),
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.overlays = {o.name: o for o in overlays}
        self.lessons, self.locked, self.clock = tuple(lessons), tuple(locked), clock

    def initial_state(self, observation: Any) -> dict[str, Any]:
        return {"overrides": {}, "banned": [], "updates": []}

    def state(self, traj: Trajectory) -> dict[str, Any]:
        s = traj.memory.get(self.name)
        return dict(s) if isinstance(s, Mapping) else self.initial_state(None)

    def overlay(self, traj: Trajectory, name: str) -> Overlay | None:
        """Overlay ``name`` as this session's updates left it (None once removed)."""
        base = self.overlays[name]
        override = self.state(traj)["overrides"].get(name)
        if override is None:
            return base
        if override.get("removed"):
            return None
        bounds = Bounds(override["min"], override["max"])
        return dataclasses.replace(base, bounds=bounds, epsilon=override["epsilon"])

    def check(self, traj: Trajectory, action: Any) -> Verdict:
        text = str(action).lower()
        for phrase in self.state(traj)["banned"]:
            if phrase in text:
                return Verdict.reject(
                    self.name, 1.0, f"taught this session: don't mention {phrase!r}"
                )
        return Verdict.allow(self.name)

    def commit(self, traj: Trajectory, step: Step) -> Any:
        state = self.state(traj)
        said = step.next_observation if isinstance(step.next_observation, str) else ""
        found = self.read(said)
        if found is None:
            return state
        lesson, phrase = found
        try:
            return self.apply(state, lesson, "user", said, traj.t + 1, phrase)
        except SpecError as exc:
            record: dict[str, Any] = {"who": "user", "what": lesson.action, "rule": lesson.rule}
            record["text"] = said[:200]
            record |= {"turn": traj.t + 1, "at": self.clock(), "refused": str(exc)}
            return {**state, "updates": [*state["updates"], record]}

    def read(self, text: str) -> tuple[Lesson, str] | None:
        """The first lesson ``text`` asks for, with its captured phrase ('' if none)."""
        head = text[:MAX_READ]
        for lesson in self.lessons:
            match = lesson.pattern.search(head)
            if match and (lesson.action == "ban" or lesson.rule in self.overlays):
                return lesson, (match.group(1).strip().lower() if lesson.action == "ban" else "")
        return None

    def teach(
        self, traj: Trajectory, lesson: Lesson, *, who: str, text: str = "", phrase: str = ""
    ) -> Trajectory:
        """``traj`` with ``lesson`` applied at once; raises a SpecError naming a protected rule."""
        state = self.apply(self.state(traj), lesson, who, text, traj.t, phrase)
        return dataclasses.replace(traj, memory={**traj.memory, self.name: state})

    def apply(
        self, state: Mapping[str, Any], lesson: Lesson, who: str, text: str, turn: int, phrase: str
    ) -> dict[str, Any]:
        """The new state after ``lesson``, with its record; raises SpecError when refused."""
        record: dict[str, Any] = {"who": who, "what": lesson.action, "text": text[:200]}
        record |= {"turn": turn, "at": self.clock()}
        new = {**state, "overrides": dict(state["overrides"]), "banned": list(state["banned"])}
        if lesson.action == "ban":
            if not phrase:
                raise SpecError(f"teaching: ban: {expected('a phrase not to mention', phrase)}")
            record |= {"rule": f"don't mention {phrase!r}", "before": None, "after": phrase}
            new["banned"].append(phrase)
        else:
            base = self.overlays.get(lesson.rule)
            if base is None:
                raise SpecError(
                    f"teaching: {expected(f'one of {sorted(self.overlays)}', lesson.rule)}"
                )
            if lesson.action in ("loosen", "remove") and protected(base, self.locked):
                raise SpecError(
                    f"teaching: refused to {lesson.action} {base.name!r}: it is a safety rule"
                    f" (severity {base.severity.name.lower()}, epsilon {base.epsilon:g}) that users"
                    " cannot loosen or remove"
                )
            current: dict[str, Any] = new["overrides"].get(base.name) or _rule(base)
            if lesson.action == "remove":
                after: dict[str, Any] = {**current, "removed": True}
            else:
                cur = dataclasses.replace(
                    base, bounds=Bounds(current["min"], current["max"]), epsilon=current["epsilon"]
                )
                after = _scaled(cur, lesson.factor)
            record |= {"rule": base.name, "before": current, "after": after}
            new["overrides"][base.name] = after
        new["updates"] = [*state["updates"], record]
        return new


class TaughtOverlay(OverlayConstraint):
    """An overlay as this session's updates (in ``teacher``'s memory slot) left it."""

    def __init__(self, overlay: Overlay, teacher: Teacher) -> None:
        super().__init__(overlay)
        self.teacher = teacher

    def check(self, traj: Trajectory, action: Any) -> Verdict:
        taught = self.teacher.overlay(traj, self.name)
        if taught is None:
            return Verdict.allow(self.name, descriptor="removed this session by the user")
        return taught.evaluate(self.dialogue(traj), action)


def teachable_constraints(
    overlays: Sequence[Overlay], *, locked: Sequence[str] = (), lessons: Sequence[Lesson] = LESSONS
) -> list[Constraint]:
    """One :class:`TaughtOverlay` per non-permissive overlay, highest priority first, then the
    :class:`Teacher` that holds the updates."""
    teacher = Teacher(overlays, lessons=lessons, locked=locked)
    ranked = sorted((o for o in overlays if o.kind != "permissive"), key=lambda o: -o.priority)
    return [*(TaughtOverlay(o, teacher) for o in ranked), teacher]
