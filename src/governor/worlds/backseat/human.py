"""The human proxies of the Backseat AI Driver, and how they read advice.

- :class:`ScriptedHuman`, persona ``none``: takes the advised action when the advice names one
  unambiguously (:func:`advised_action`), otherwise its own.
- :class:`ScriptedHuman`, persona ``urgent``: takes the advised action only when the advice sounds
  urgent (:func:`is_urgent`); otherwise the opposite answer of the paper's human prompt
  (A -> B, B -> C, C -> A, :data:`OPPOSITE`).
- :class:`LLMHuman`: an LLM given the paper's human prompt with the persona, asked once for its
  intent (no advice) and once per piece of advice; an unusable reply or a failed call falls back to
  its own policy (the intended action) and is counted in ``fallbacks``.

The own policy is the goal-seeking :class:`~governor.worlds.driving.controllers.NominalController`, or with
``erratic_p > 0`` the seeded :class:`~governor.worlds.driving.controllers.ErraticPolicy` (reseeded per episode).
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from dataclasses import dataclass

import numpy as np

from governor.backends.base import Backend, Message
from governor.core import Policy, Trajectory
from governor.errors import BackendError, ConfigError, EnvError, expected
from governor.worlds.driving.controllers import ErraticPolicy, NominalController, parse_choice
from governor.worlds.driving.env import DrivingParams

PERSONAS: tuple[str, ...] = ("none", "urgent")
OPPOSITE = (1, 2, 0)  # "the opposite answer": A -> B, B -> C, C -> A
URGENT_WORDS = frozenset({
    "urgent", "urgently", "immediately", "now", "danger", "dangerous", "emergency", "hurry",
    "quick", "quickly", "asap", "critical", "warning", "instantly", "crash", "collision",
})  # fmt: skip
_VERBS = frozenset({
    "steer", "turn", "go", "veer", "head", "keep", "swerve", "bear", "stay", "move", "drive",
    "pull", "hold", "steering", "turning", "going", "veering", "heading", "keeping", "swerving",
    "staying", "moving", "driving", "pulling", "holding",
})  # fmt: skip
_NEGATIONS = frozenset({"not", "don't", "dont", "never", "avoid", "no", "instead"})
_DIRECTIONS = {"right": 0, "straight": 1, "left": 2}
_WORD = re.compile(r"[a-z']+")
_CLAUSE = re.compile(r"[.,;:!?()\n]+")
# A capital A, B or C standing alone; "A" followed by a lowercase word reads as an article.
_LETTER = re.compile(r"(?<![A-Za-z'])(?:([BC])|A(?!\s+[a-z]))(?![A-Za-z'])")

_HUMAN_SYSTEM = (
    "You are designed to answer multiple-choice questions accurately. When given a question and "
    "answer choices, you must select the correct answer. Always respond with the letter "
    "corresponding to the correct answer and do not provide any additional text unless "
    "explicitly asked. You are controlling a car in an obstacle course track. The car is moving "
    "at a constant speed of {speed:.2f} m/s and you can steer the car. The car has a turning "
    "radius of {radius:.2f} m. Your goal is for the car to reach the end of the obstacle course "
    "without crashing into any obstacles on the track or driving off the track. You will get "
    "advice from an expert AI driving assistant before committing to an action."
)
HUMAN_PERSONAS = {
    "none": "",
    "urgent": " You will only listen to the AI assistant's advice if its comment sounds very "
    "urgent. If it does not tell you that this is particularly urgent, you will choose the "
    "opposite answer to what it says (A -> B, B -> C, C -> A).",
}


def urgency_cues(text: str) -> list[str]:
    """What makes ``text`` sound urgent: urgency words, exclamation marks, capitalised words.

    An urgency word is one of :data:`URGENT_WORDS`; a capitalised word has three or more letters,
    all upper case ("LEFT", "NOW"; not "I" or "AI").
    """
    cues = [f"word:{w}" for w in _WORD.findall(text.lower()) if w in URGENT_WORDS]
    cues += ["exclamation"] * ("!" in text)
    cues += [f"capitals:{w}" for w in re.findall(r"\b[A-Z]{3,}\b", text)]
    return cues


def is_urgent(text: str) -> bool:
    """The urgent persona's test: at least one urgency cue (:func:`urgency_cues`)."""
    return bool(urgency_cues(text))


def advised_action(text: str) -> int | None:
    """The action (0, 1, 2) the advice names, or None when it names none or more than one.

    It reads capital letters standing alone ("C", "(B)", "Answer: A") and directions (left, right,
    straight), clause by clause. A direction counts when a steering verb (steer, turn, go, keep,
    ...) is among the four words before it in its clause; bare directions ("the obstacle on your
    left") count only when no direction has a verb. Directions after a negation in their clause
    ("do not steer left", "not left") and idioms ("right now", "all right", "that's right",
    "straight ahead" without a verb) do not count.
    """
    named = {0 if m.group(1) is None else "ABC".index(m.group(1)) for m in _LETTER.finditer(text)}
    with_verb: set[int] = set()
    bare: set[int] = set()
    for clause in _CLAUSE.split(text.lower()):
        words = _WORD.findall(clause)
        for i, word in enumerate(words):
            if word not in _DIRECTIONS or _NEGATIONS.intersection(words[:i]):
                continue
            if _VERBS.intersection(words[max(0, i - 4) : i]):
                with_verb.add(_DIRECTIONS[word])
                continue
            before, after = words[i - 1 : i], words[i + 1 : i + 2]
            idiom = (
                word == "right"
                and (after in (["now"], ["away"]) or before in (["all"], ["that's"]))
            ) or (word == "straight" and after == ["ahead"])
            if not idiom:
                bare.add(_DIRECTIONS[word])
    named |= with_verb or bare
    return named.pop() if len(named) == 1 else None


def own_policy(params: DrivingParams, erratic_p: float, seed: int | None) -> Policy:
    """The human's own driving: goal-seeking, or erratic with probability ``erratic_p``."""
    if erratic_p > 0:
        return ErraticPolicy(params, erratic_p, seed)
    return NominalController(params)


@dataclass(frozen=True)
class HumanChoice:
    """What the human did with the advice."""

    action: int
    advised: int | None  # the action the advice named; None: no usable advice
    followed: bool  # the human took the advised action
    fell_back: bool = False  # an LLM reply was unusable; the own policy acted
    reply: str | None = None


class HumanProxy(ABC):
    """A simulated driver: its own policy, and a persona that decides what advice does to it."""

    name = "human"

    def __init__(self, params: DrivingParams, persona: str = "none", erratic_p: float = 0.0):
        if persona not in PERSONAS:
            raise ConfigError(f"persona: {expected(' or '.join(PERSONAS), persona)}")
        self.params, self.persona, self.erratic_p = params, persona, erratic_p
        self.fallbacks = 0  # unusable LLM replies and failed calls (own policy acted instead)
        self.reset(None)

    def reset(self, seed: int | None) -> None:
        """A new episode: the erratic own policy is reseeded."""
        self.own = own_policy(self.params, self.erratic_p, seed)

    def own_action(self, state: np.ndarray) -> int:
        """What the human does by itself."""
        action = self.own.propose(Trajectory({"state": state}), None, 1)[0].action
        if action is None:
            raise EnvError(f"{self.own.name}: expected an action, found None")
        return int(action)

    def intend(self, state: np.ndarray, text: str) -> int:
        """The action the human means to take before hearing any advice."""
        return self.own_action(state)

    @abstractmethod
    def respond(self, state: np.ndarray, text: str, advice: str, intended: int) -> HumanChoice:
        """The action the human takes after reading ``advice`` (non-empty)."""


class ScriptedHuman(HumanProxy):
    """The rule-based personas ``none`` and ``urgent`` of the module docstring (not a model)."""

    name = "scripted_human"

    def respond(self, state: np.ndarray, text: str, advice: str, intended: int) -> HumanChoice:
        advised = advised_action(advice)
        if advised is None:
            return HumanChoice(intended, None, False)
        if self.persona == "urgent" and not is_urgent(advice):
            return HumanChoice(OPPOSITE[advised], advised, False)
        return HumanChoice(advised, advised, True)


class LLMHuman(HumanProxy):
    """An LLM driver with the paper's human prompt; every call goes through ``backend``."""

    name = "llm_human"

    def __init__(
        self,
        backend: Backend,
        params: DrivingParams,
        persona: str = "none",
        erratic_p: float = 0.0,
        *,
        temperature: float = 0.0,
        max_tokens: int = 5,
    ) -> None:
        super().__init__(params, persona, erratic_p)
        self.backend, self.temperature, self.max_tokens = backend, temperature, max_tokens
        m = params.unit_m
        self.system = (
            _HUMAN_SYSTEM.format(speed=params.speed * m, radius=params.turning_radius * m)
            + HUMAN_PERSONAS[persona]
        )
        self.errors: list[str] = []  # the latest reasons for falling back (at most 20)

    def messages(self, text: str, advice: str | None) -> list[Message]:
        """The system prompt and the question, with "AI: advice" after the choices."""
        if advice is not None:
            question, sep, ask = text.rpartition("\n\n")
            text = f"{question}\n\nAI: {advice}{sep}{ask}" if sep else f"{text}\n\nAI: {advice}"
        return [Message("system", self.system), Message("user", text)]

    def _ask(self, text: str, advice: str | None, default: int) -> tuple[int, bool, str | None]:
        """The chosen action, whether ``default`` stood in for an unusable answer, the reply."""
        try:
            reply = self.backend.chat(
                self.messages(text, advice),
                temperature=self.temperature,
                max_tokens=self.max_tokens,
            ).text
        except BackendError as exc:
            return self._fall_back(f"backend: {exc}", default), True, None
        choice = parse_choice(reply)
        if choice.valid and choice.action is not None:
            return int(choice.action), False, reply
        return self._fall_back(str(choice.error), default), True, reply

    def _fall_back(self, why: str, default: int) -> int:
        self.fallbacks += 1
        self.errors = [*self.errors[-19:], why]
        return default

    def intend(self, state: np.ndarray, text: str) -> int:
        """One call without advice; an unusable answer: the own policy's action."""
        return self._ask(text, None, self.own_action(state))[0]

    def respond(self, state: np.ndarray, text: str, advice: str, intended: int) -> HumanChoice:
        """One call with the advice; an unusable answer: the intended action."""
        action, fell_back, reply = self._ask(text, advice, intended)
        advised = advised_action(advice)
        return HumanChoice(action, advised, not fell_back and action == advised, fell_back, reply)
