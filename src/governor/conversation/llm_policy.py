"""A chat model as the base policy: candidate replies for the dialogue so far, through a backend.

The request is the system prompt, example exchanges by people when given (as earlier user and
assistant turns: a base model imitates the length and tone it is shown, and answers in turn
rather than copying a transcript's speaker tags; see :mod:`.examples`), the dialogue as user and
assistant messages, and, when the observer has something to say, its feedback as a final system
note. Replies end at a stop sequence (by default the end of the line: a small-talk turn is one
line) or after ``max_tokens``. One request asks for ``n`` completions and counts as one LLM call
(a backend records it). A reply cut off at ``max_tokens`` (finish reason ``length``) keeps its
whole sentences only: the unfinished one is dropped, never judged or sent as if it were the
reply. A reply that is empty, not text, cut off before its first sentence ended, or that repeats
the instructions it was given (half of its words or more inside a word 4-gram of the system
prompt or the note: a base model's way of failing) becomes an invalid candidate, which the
observer never executes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from governor.backends.base import Backend, Message
from governor.config import check_range
from governor.core import Candidate, Feedback, FeedbackKind, Policy, Trajectory
from governor.overlays.features.degenerate import echo_share
from governor.overlays.features.dialogue import as_dialogue
from governor.overlays.features.endings import whole_sentences

SYSTEM_PROMPT = (
    "You are a friendly companion who engages in casual small talk. Keep replies brief, light"
    " and informal; stay on what the other person is talking about; avoid specific details,"
    " advice and offers of help unless asked."
)
EXAMPLES_HEADER = "The first exchanges below are replies people gave (match their length and tone)."
ECHO_LIMIT = 0.5  # a reply half made of 4-grams of its instructions repeats them
NOTE = {
    FeedbackKind.IMPLICIT: "Note from your supervisor about your last reply: {text}",
    FeedbackKind.FORCED: "Your supervisor rejected your reply; write a new one. {text}",
}


class LLMChatPolicy(Policy):
    """Proposes replies from a chat model (see the module doc)."""

    name = "llm chat policy"

    def __init__(
        self,
        backend: Backend,
        *,
        system_prompt: str = SYSTEM_PROMPT,
        temperature: float = 0.7,
        n: int | None = None,
        max_tokens: int = 60,
        examples: Sequence[tuple[str, str]] = (),
        stop: Sequence[str] = ("\n",),
    ) -> None:
        check_range("temperature", temperature, 0.0, 5.0)
        if n is not None:
            check_range("n", n, 1, 128)
        self.backend = backend
        self.system_prompt = system_prompt
        self.temperature = temperature
        self.n = n
        self.max_tokens = max_tokens
        self.stop = tuple(stop)
        self.examples = tuple(examples)
        if examples:
            self.system_prompt = f"{system_prompt}\n\n{EXAMPLES_HEADER}"

    def messages(self, traj: Trajectory, feedback: Feedback | None) -> list[Message]:
        """The request: system prompt, example turns, dialogue, the feedback as a system note."""
        out = [Message("system", self.system_prompt)]
        for turn, reply in self.examples:
            out += [Message("user", turn), Message("assistant", reply)]
        out += [Message(t.role, t.text) for t in as_dialogue(traj)]
        if feedback is not None:
            out.append(Message("system", NOTE[feedback.kind].format(text=feedback.text)))
        return out

    def propose(
        self, traj: Trajectory, feedback: Feedback | None, n: int
    ) -> Sequence[Candidate[Any]]:
        """``self.n`` (else ``n``) candidate replies; empty or non-text ones are invalid."""
        result = self.backend.chat(
            self.messages(traj, feedback),
            n=self.n or n,
            temperature=self.temperature,
            max_tokens=self.max_tokens,
            stop=self.stop,
        )
        told = " ".join(
            m.content or "" for m in self.messages(traj, feedback) if m.role == "system"
        )
        return [
            _not_an_echo(reply_candidate(c.text, c.finish_reason), told) for c in result.completions
        ]


def _not_an_echo(candidate: Candidate[Any], instructions: str) -> Candidate[Any]:
    """``candidate``, or an invalid one when it repeats the instructions it was given."""
    if candidate.valid and echo_share(str(candidate.action), instructions) >= ECHO_LIMIT:
        return Candidate.invalid(
            candidate.text, "expected a reply, found its instructions repeated"
        )
    return candidate


def reply_candidate(text: Any, finish_reason: str | None = None) -> Candidate[Any]:
    """A valid candidate for non-empty text, else an invalid one saying what was found; a reply
    cut off at the length limit keeps only its whole sentences."""
    if not isinstance(text, str):
        return Candidate.invalid(None, f"expected a text reply, found {type(text).__name__}")
    reply = text.strip()
    if not reply:
        return Candidate.invalid(text, "expected a text reply, found an empty one")
    if finish_reason == "length":
        reply = whole_sentences(reply)
        if not reply:
            return Candidate.invalid(
                text, "expected a finished reply, found one cut off at the length limit"
            )
    return Candidate(reply, reply)
