"""Simulated users: replayed human dialogue openings, or an LLM playing a persona.

A :class:`UserSimulator` says the user's next turn given the dialogue so far, or None when the
user is done. :func:`human_openings` draws held-out human dialogues (never the calibration split,
so nothing the retrieval responder or the calibration saw is replayed) and replays one speaker's
turns in order, whatever the bot says; the other speaker's real replies are kept as a human
reference for the same openings.
"""

from __future__ import annotations

import hashlib
from abc import ABC, abstractmethod
from collections.abc import Sequence
from pathlib import Path

from governor.backends.base import Backend, Message
from governor.errors import BackendError, ConfigError, expected
from governor.overlays.corpora import CORPORA, load_dialogues, split_of
from governor.overlays.features.dialogue import Dialogue

DEFAULT_PERSONA = (
    "You are a person making casual small talk with someone you just met. Reply as yourself in"
    " one or two short sentences, the way people talk, with no lists and no assistance. Say only"
    " your next turn."
)


class UserSimulator(ABC):
    """Produces the user's turns."""

    name: str = "user"

    @abstractmethod
    def next_turn(self, dialogue: Dialogue) -> str | None:
        """The user's next turn after ``dialogue`` (the bot spoke last), or None to stop."""


class ReplayedUser(UserSimulator):
    """Replays a human's turns in order; ``replies`` are what the other human actually said."""

    def __init__(
        self, corpus: str, dialogue_id: str, turns: Sequence[str], replies: Sequence[str] = ()
    ) -> None:
        self.corpus, self.dialogue_id = corpus, dialogue_id
        self.turns, self.replies = tuple(turns), tuple(replies)
        self.name = f"{corpus}:{dialogue_id}"

    def next_turn(self, dialogue: Dialogue) -> str | None:
        said = sum(1 for t in dialogue if t.role == "user")
        return self.turns[said] if said < len(self.turns) else None


class LLMPersonaUser(UserSimulator):
    """An LLM plays the user; its calls are counted, and a failed one ends the conversation."""

    name = "llm persona"

    def __init__(
        self,
        backend: Backend,
        *,
        opening: str = "Hi! How's it going?",
        persona: str = DEFAULT_PERSONA,
        turns: int = 8,
        temperature: float = 0.8,
        max_tokens: int = 60,
    ) -> None:
        self.backend, self.opening, self.persona = backend, opening, persona
        self.turns, self.temperature, self.max_tokens = turns, temperature, max_tokens

    def next_turn(self, dialogue: Dialogue) -> str | None:
        said = sum(1 for t in dialogue if t.role == "user")
        if said >= self.turns:
            return None
        if said == 0:
            return self.opening
        swapped = [Message("assistant" if t.role == "user" else "user", t.text) for t in dialogue]
        try:
            reply = self.backend.chat(
                [Message("system", self.persona), *swapped],
                temperature=self.temperature,
                max_tokens=self.max_tokens,
                stop=("\n",),  # one turn: one line
            ).text.strip()
        except BackendError:
            return None
        return reply or None


def human_openings(
    data_dir: str | Path,
    n: int,
    turns: int,
    *,
    seed: int = 0,
    corpora: Sequence[str] = CORPORA,
    split_seed: int = 0,
) -> list[ReplayedUser]:
    """``n`` held-out dialogues with at least ``turns`` turns per speaker, corpora taken in turn.

    Within a corpus, dialogues come in the order of a hash of ``seed``; consecutive turns by one
    speaker are joined; the user is the speaker who opened.
    """
    if n < 1 or turns < 1:
        raise ConfigError(f"openings: {expected('n >= 1 and turns >= 1', (n, turns))}")
    pools: list[list[ReplayedUser]] = []
    for corpus in corpora:
        users = []
        for dialogue_id, speakers, texts, _ in load_dialogues(data_dir, corpus):
            if split_of(corpus, dialogue_id, seed=split_seed) != "heldout":
                continue
            merged = _merge(speakers, texts)
            mine = tuple(t for s, t in merged if s == merged[0][0])
            theirs = tuple(t for s, t in merged if s != merged[0][0])
            if min(len(mine), len(theirs)) >= turns:
                users.append(ReplayedUser(corpus, dialogue_id, mine[:turns], theirs[:turns]))
        users.sort(key=lambda u: _rank(seed, u.corpus, u.dialogue_id))
        pools.append(users)
    picked: list[ReplayedUser] = []
    for i in range(max(len(p) for p in pools) if pools else 0):
        picked += [p[i] for p in pools if i < len(p)]
    if len(picked) < n:
        found = f"{len(picked)} held-out dialogues with {turns} turns per speaker"
        raise ConfigError(f"openings: {expected(f'{n} dialogues', found)}")
    return picked[:n]


def _merge(speakers: Sequence[str], texts: Sequence[str]) -> list[tuple[str, str]]:
    merged: list[tuple[str, str]] = []
    for s, t in zip(speakers, texts, strict=True):
        if merged and merged[-1][0] == s:
            merged[-1] = (s, f"{merged[-1][1]} {t}")
        else:
            merged.append((s, t))
    return merged


def _rank(seed: int, corpus: str, dialogue: str) -> bytes:
    return hashlib.sha256(f"openings:{seed}:{corpus}:{dialogue}".encode()).digest()
