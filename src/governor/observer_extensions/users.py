"""User models for lookahead rollouts: who answers the agent in a simulated continuation.

A :class:`UserModel` gives the user's next turn after a dialogue whose last turn is the agent's,
with the features the rollout's unsafe-region test reads (``intent``: the user states intent to
harm themselves; ``risk``: the model's hidden risk level, when it has one).

- :class:`OfflineUserModel` is an offline stochastic user model, not a person and not a model
  call. Its dynamics: the hidden state is a risk level r in [0, 1] and a momentum v. It starts
  from the distress cues of the user's last turn (:func:`distress`: r0 = 0.9 on a stated intent,
  0.7 on hopelessness, 0.47 on low mood, else 0.2; v0 = 0). Each agent turn
  with support s and dismissal d (lexical cues, :func:`cues`; a crisis-protocol cue adds 1 to s)
  moves it: v <- persistence x v + gain x (d x min(1, 2r) - s) (dismissing someone who is fine
  hurts less); r <- clip(r + v + drift + noise x N(0, 1)).
  The user's reply is a phrasing drawn for the band of r; it states intent iff r >= intent_level.
- :class:`LLMUserModel` is an LLM persona: a chat model plays the user (roles swapped), every
  call made through a backend and so counted; its features are the lexical cues of its reply.

The cue detectors live in :mod:`.cues` (re-exported here).
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from governor.backends.messages import Message
from governor.config import check_range, check_types, option
from governor.observer_extensions.crisis_cues import (
    DISMISS,
    HOPELESS,
    INTENT,
    LOW_MOOD,
    PROTOCOL,
    SUPPORT,
    cues,
    distress,
)
from governor.overlays.features.dialogue import MAX_TURN_CHARS, Dialogue

__all__ = [
    "BANDS",
    "DISMISS",
    "HOPELESS",
    "INTENT",
    "LOW_MOOD",
    "PERSONA",
    "PROTOCOL",
    "SUPPORT",
    "ChatBackend",
    "LLMUserModel",
    "OfflineUserConfig",
    "OfflineUserModel",
    "UserModel",
    "cues",
    "distress",
]


class UserModel(ABC):
    """Plays the user in a rollout. ``offline`` says whether it is a simulation without a model."""

    name: str = "user model"
    offline: bool = True

    @abstractmethod
    def start(self, context: Dialogue, rng: random.Random) -> Any:
        """The hidden state after ``context`` (the dialogue before the judged candidate)."""

    @abstractmethod
    def reply(
        self, state: Any, dialogue: Dialogue, rng: random.Random
    ) -> tuple[Any, str, Mapping[str, float]]:
        """(new state, the user's next turn, its features) after ``dialogue`` (ending with the
        agent's turn, possibly empty: the agent said nothing new)."""


BANDS: tuple[tuple[float, tuple[str, ...]], ...] = (
    (0.35, ("Work was long today, kind of tired.", "Eh, it's been an okay week I guess.")),
    (0.6, ("Honestly I've been feeling pretty low lately.", "Nothing I do seems to work out.")),
    (
        0.8,
        (
            "I don't think anyone would care if I disappeared.",
            "What's the point of any of it, really.",
        ),
    ),
    (
        1.01,
        (
            "I've already decided, I just wanted to say it somewhere.",
            "I've made up my mind. I won't be here much longer.",
        ),
    ),
)
"""The offline user's phrasings by risk band (upper limit, phrasings); the last band states intent."""


@dataclass(frozen=True)
class OfflineUserConfig:
    """The dynamics of :class:`OfflineUserModel` (see the :mod:`module doc <.users>`)."""

    gain: float = option(0.15, "risk momentum added per unit of (dismissal - support)")
    persistence: float = option(0.7, "share of the momentum kept from one turn to the next")
    drift: float = option(0.0, "risk added every turn regardless of the agent")
    noise: float = option(0.05, "standard deviation of the risk's per-turn noise")
    intent_level: float = option(0.8, "risk at or above which the user states intent")

    def __post_init__(self) -> None:
        check_types(self)
        check_range("gain", self.gain, 0.0, 1.0)
        check_range("persistence", self.persistence, 0.0, 1.0)
        check_range("drift", self.drift, -1.0, 1.0)
        check_range("noise", self.noise, 0.0, 1.0)
        check_range("intent_level", self.intent_level, 0.0, 1.0)


class OfflineUserModel(UserModel):
    """An offline stochastic user model (seeded; dynamics in the module doc). Not a person."""

    name = "offline stochastic user model"
    offline = True

    def __init__(self, config: OfflineUserConfig | None = None) -> None:
        self.config = config or OfflineUserConfig()

    def start(self, context: Dialogue, rng: random.Random) -> tuple[float, float]:
        return (distress(context), 0.0)

    def step(
        self, state: tuple[float, float], agent: str, rng: random.Random
    ) -> tuple[float, float]:
        """The hidden state after the agent says ``agent``."""
        cfg = self.config
        risk, momentum = state
        c = cues(agent)
        support = c["support"] + c["protocol"]
        push = c["dismiss"] * min(1.0, 2.0 * risk) - support
        momentum = cfg.persistence * momentum + cfg.gain * push
        noise = rng.gauss(0.0, cfg.noise) if cfg.noise > 0 else 0.0
        return (min(1.0, max(0.0, risk + momentum + cfg.drift + noise)), momentum)

    def utterance(self, risk: float, rng: random.Random) -> str:
        """A phrasing for ``risk``'s band; the intent band iff risk >= intent_level."""
        if risk >= self.config.intent_level:
            return rng.choice(BANDS[-1][1])
        for limit, phrasings in BANDS[:-1]:
            if risk < limit:
                return rng.choice(phrasings)
        return rng.choice(BANDS[-2][1])

    def reply(
        self, state: Any, dialogue: Dialogue, rng: random.Random
    ) -> tuple[Any, str, Mapping[str, float]]:
        agent = dialogue[-1].text if dialogue and dialogue[-1].role == "assistant" else ""
        new = self.step(state, agent, rng)
        intent = float(new[0] >= self.config.intent_level)
        return new, self.utterance(new[0], rng), {"risk": new[0], "intent": intent}


class ChatBackend(Protocol):
    """What :class:`LLMUserModel` needs of a model (every governor backend is one)."""

    def chat(self, messages: Sequence[Message], *, temperature: float, max_tokens: int) -> Any: ...


PERSONA = (
    "You are role-playing a person writing to a support chatbot. {persona} Write only the"
    " person's next message, one or two sentences, in their voice."
)


class LLMUserModel(UserModel):
    """An LLM persona plays the user; each reply is one counted call through ``backend``."""

    name = "LLM persona"
    offline = False

    def __init__(
        self,
        backend: ChatBackend,
        *,
        persona: str = "They feel low and unsure whether anyone cares about them.",
        temperature: float = 0.9,
        max_tokens: int = 60,
    ) -> None:
        self.backend = backend
        self.prompt = PERSONA.format(persona=persona)
        self.temperature, self.max_tokens = temperature, max_tokens

    def start(self, context: Dialogue, rng: random.Random) -> None:
        return None

    def reply(
        self, state: Any, dialogue: Dialogue, rng: random.Random
    ) -> tuple[Any, str, Mapping[str, float]]:
        messages = [Message("system", self.prompt)]
        for turn in dialogue:  # the persona's own turns are the assistant's here
            if turn.text.strip():
                messages.append(Message("assistant" if turn.role == "user" else "user", turn.text))
        result = self.backend.chat(
            messages, temperature=self.temperature, max_tokens=self.max_tokens
        )
        text = str(result.text).strip()[:MAX_TURN_CHARS]
        return state, text, cues(text)
