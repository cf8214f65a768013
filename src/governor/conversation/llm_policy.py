"""A chat model as the base policy: candidate replies for the dialogue so far, through a backend.

The request is the system prompt (with example exchanges by people, when given: a base model
imitates the length and tone it is shown, see :mod:`.examples`), the dialogue as user and
assistant messages, and, when the observer has something to say, its feedback as a final system
note. Replies end at a stop sequence (by default the end of the line: a small-talk turn is one
line) or after ``max_tokens``. One request asks for ``n`` completions and counts as one LLM call
(a backend records it). A reply that is empty or not text becomes an invalid candidate, which the
observer never executes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from governor.backends.base import Backend, Message
from governor.config import check_range
from governor.core import Candidate, Feedback, FeedbackKind, Policy, Trajectory
from governor.overlays.features.dialogue import as_dialogue

SYSTEM_PROMPT = (
    "You are a friendly companion who engages in casual small talk. Keep replies brief, light"
    " and informal; stay on what the other person is talking about; avoid specific details,"
    " advice and offers of help unless asked."
)
EXAMPLES_HEADER = "Replies people gave in casual conversations (match their length and tone):"
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
        if examples:
            shown = "\n\n".join(f"A: {turn}\nB: {reply}" for turn, reply in examples)
            self.system_prompt = f"{system_prompt}\n\n{EXAMPLES_HEADER}\n\n{shown}"

    def messages(self, traj: Trajectory, feedback: Feedback | None) -> list[Message]:
        """The request: system prompt, dialogue, and the feedback as a system note."""
        out = [Message("system", self.system_prompt)]
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
        return [reply_candidate(c.text) for c in result.completions]


def reply_candidate(text: Any) -> Candidate[Any]:
    """A valid candidate for non-empty text, else an invalid one saying what was found."""
    if not isinstance(text, str):
        return Candidate.invalid(None, f"expected a text reply, found {type(text).__name__}")
    reply = text.strip()
    if not reply:
        return Candidate.invalid(text, "expected a text reply, found an empty one")
    return Candidate(reply, reply)
