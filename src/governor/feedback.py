"""Feedback writers: verdict descriptors in, a note for the base policy out.

Implicit feedback rides along with an accepted action whose verdicts were within tolerance but
past a boundary; forced feedback asks for a regeneration after a rejection. The default writer
fills templates and makes no LLM call. :class:`LLMFeedbackWriter` merges the descriptors into one
directive through a backend (its calls are counted like every other); when that call fails it
falls back to the templates, since feedback steers but never decides what is executed, and says so
in the :class:`TemplateFallback` it returns (the trace records its ``observer_error``).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from governor.core import Feedback, FeedbackKind, Verdict
from governor.errors import BackendError


class Reply(Protocol):
    """What a chat model's answer must offer a feedback writer."""

    @property
    def text(self) -> str: ...


class ChatModel(Protocol):
    """What a feedback writer needs of a model: one prompt in, a reply out (every
    :class:`~governor.backends.base.Backend` is one). It raises a
    :class:`~governor.errors.BackendError` when the model cannot answer."""

    def chat(self, messages: str, *, max_tokens: int) -> Reply: ...


def _describe(v: Verdict) -> str:
    """What a policy may be told of a verdict: never the internals of a check that failed."""
    if v.error is not None:
        return f"{v.constraint} could not be checked"
    return v.descriptor or f"{v.constraint} not satisfied"


def _worst_first(verdicts: Sequence[Verdict]) -> list[Verdict]:
    """One verdict per constraint (the largest deviation), most severe first."""
    best: dict[str, Verdict] = {}
    for v in verdicts:
        if v.constraint not in best or v.deviation > best[v.constraint].deviation:
            best[v.constraint] = v
    return sorted(best.values(), key=lambda v: (-v.severity, -v.deviation, v.constraint))


@dataclass(frozen=True)
class TemplateFallback(Feedback):
    """Template feedback written because the observer model failed; ``observer_error`` says how."""

    observer_error: str = ""


class FeedbackWriter(ABC):
    """Turns verdicts into :class:`Feedback`; returns None when there is nothing to say."""

    def implicit(self, verdicts: Sequence[Verdict]) -> Feedback | None:
        notes = _worst_first([v for v in verdicts if v.needs_feedback])
        return self._write(FeedbackKind.IMPLICIT, notes) if notes else None

    def forced(self, verdicts: Sequence[Verdict], problems: Sequence[str] = ()) -> Feedback:
        """Feedback for a regeneration; ``problems`` are issues no constraint named."""
        notes = _worst_first([v for v in verdicts if not v.admissible])
        return self._write(FeedbackKind.FORCED, notes, problems)

    @abstractmethod
    def _write(
        self, kind: FeedbackKind, notes: Sequence[Verdict], problems: Sequence[str] = ()
    ) -> Feedback: ...


class TemplateFeedbackWriter(FeedbackWriter):
    """Fills ``{items}`` in one template per kind. No LLM call."""

    def __init__(
        self,
        implicit_template: str = "Accepted, with a note for your next turn: {items}.",
        forced_template: str = (
            "Your proposal was not accepted: {items}. Propose a different action that avoids this."
        ),
        separator: str = "; ",
    ) -> None:
        for name, template in (("implicit", implicit_template), ("forced", forced_template)):
            if "{items}" not in template:
                raise ValueError(
                    f"{name} template: expected a '{{items}}' placeholder in {template!r}"
                )
        self.templates = {
            FeedbackKind.IMPLICIT: implicit_template,
            FeedbackKind.FORCED: forced_template,
        }
        self.separator = separator

    def items(self, notes: Sequence[Verdict], problems: Sequence[str] = ()) -> str:
        parts = [_describe(v) for v in notes]
        return self.separator.join([*parts, *problems]) or "no admissible candidate"

    def _write(
        self, kind: FeedbackKind, notes: Sequence[Verdict], problems: Sequence[str] = ()
    ) -> Feedback:
        text = self.templates[kind].format(items=self.items(notes, problems))
        return Feedback(kind, text, tuple(v.constraint for v in notes))


class LLMFeedbackWriter(FeedbackWriter):
    """Merges descriptors into one short directive with an observer model (counted calls)."""

    PROMPT = (
        "You supervise another assistant. Merge these observations about its {what} into one short,"
        " concrete instruction for its next attempt, in the second person, no preamble:\n{items}"
    )

    def __init__(self, backend: ChatModel, *, max_tokens: int = 80) -> None:
        self.backend = backend
        self.max_tokens = max_tokens
        self.templates = TemplateFeedbackWriter()

    def _write(
        self, kind: FeedbackKind, notes: Sequence[Verdict], problems: Sequence[str] = ()
    ) -> Feedback:
        what = "accepted reply" if kind is FeedbackKind.IMPLICIT else "rejected proposal"
        items = "\n".join(f"- {line}" for line in self.templates.items(notes, problems).split("; "))
        try:
            prompt = self.PROMPT.format(what=what, items=items)
            reply = self.backend.chat(prompt, max_tokens=self.max_tokens).text.strip()
            error = "" if reply else "empty reply"
        except BackendError as exc:
            reply, error = "", f"{type(exc).__name__}: {exc}"
        if error:
            written = self.templates._write(kind, notes, problems)
            return TemplateFallback(written.kind, written.text, written.constraints, error)
        return Feedback(kind, reply, tuple(v.constraint for v in notes))
