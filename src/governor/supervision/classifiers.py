"""State classifiers: they turn one step's raw observation into the features the gate reads.

A :class:`StateClassifier` declares the features it provides and computes them from one step's
observation (a mapping of raw signals) and the supervisor's state. Shipped, all offline:

- :class:`PresenceClassifier`: ``people`` (persons detected), ``user_present`` (1 when at least
  one), ``others_talking`` (1 when the audio suggests a co-present conversation or media);
- :class:`TimeWindowClassifier`: ``in_window`` (1 inside the daily training window);
- :class:`AffectClassifier`: ``user_affect`` (a given estimate, else VADER on the user's turn);
- :class:`RefusalClassifier`: ``refusals`` (the user's consecutive refusals so far);
- :class:`CrisisClassifier`: ``crisis_statement`` (1 when the user's turn matches a crisis phrase).

A classifier reads at most :data:`MAX_TEXT` characters of the user's turn; a signal it does not
find is left out of its features (unknown), never guessed.
"""

from __future__ import annotations

import math
import re
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from typing import Any

from governor.errors import ConfigError, expected
from governor.overlays.features.text import compound
from governor.supervision.state import SupervisorState

MAX_TEXT = 2_000
"""The most characters of a user turn that a classifier reads."""


def user_text(observation: Mapping[str, Any]) -> str:
    text = observation.get("user_text")
    return text[:MAX_TEXT] if isinstance(text, str) else ""


class StateClassifier(ABC):
    """Estimates features of the interaction state; ``features`` names what it provides."""

    name: str = "classifier"
    features: tuple[str, ...] = ()

    @abstractmethod
    def classify(
        self, observation: Mapping[str, Any], state: SupervisorState
    ) -> Mapping[str, float]:
        """The features of this step (a subset of ``features``; a missing one is unknown)."""


def _number(observation: Mapping[str, Any], key: str) -> float | None:
    value = observation.get(key)
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)) and math.isfinite(value):
        return float(value)
    return None


class PresenceClassifier(StateClassifier):
    """Reads ``people`` (a person detector's count) and ``others_talking`` (an audio classifier)."""

    name = "presence"
    features = ("people", "user_present", "others_talking")

    def classify(
        self, observation: Mapping[str, Any], state: SupervisorState
    ) -> Mapping[str, float]:
        out: dict[str, float] = {}
        people = _number(observation, "people")
        if people is not None:
            out["people"] = people
            out["user_present"] = 1.0 if people >= 1 else 0.0
        talking = _number(observation, "others_talking")
        if talking is not None:
            out["others_talking"] = 1.0 if talking else 0.0
        return out


class TimeWindowClassifier(StateClassifier):
    """``in_window``: 1 when ``hour`` (0-24, local time) lies in [start, end)."""

    name = "time_window"
    features = ("in_window",)

    def __init__(self, start: float, end: float) -> None:
        if not (0.0 <= start < end <= 24.0):
            raise ConfigError(f"time window: {expected('0 <= start < end <= 24', (start, end))}")
        self.start, self.end = start, end

    def classify(
        self, observation: Mapping[str, Any], state: SupervisorState
    ) -> Mapping[str, float]:
        hour = _number(observation, "hour")
        if hour is None:
            return {}
        return {"in_window": 1.0 if self.start <= hour % 24.0 < self.end else 0.0}


class AffectClassifier(StateClassifier):
    """``user_affect`` in [-1, 1]: the observation's ``affect`` estimate when given, else the VADER
    compound score of ``user_text``."""

    name = "affect"
    features = ("user_affect",)

    def classify(
        self, observation: Mapping[str, Any], state: SupervisorState
    ) -> Mapping[str, float]:
        given = _number(observation, "affect")
        if given is not None:
            return {"user_affect": max(-1.0, min(1.0, given))}
        text = user_text(observation)
        return {"user_affect": compound(text)} if text.strip() else {}


class RefusalClassifier(StateClassifier):
    """``refusals``: the consecutive refusals the supervisor has counted, this step's included."""

    name = "refusals"
    features = ("refusals",)

    def classify(
        self, observation: Mapping[str, Any], state: SupervisorState
    ) -> Mapping[str, float]:
        return {"refusals": float(state.refusals)}


CRISIS_PHRASES = (
    r"\b(?:hurt|harm|kill|cut) (?:myself|me)\b",
    r"\bwant to die\b|\bend (?:it|my life)\b|\bsuicid",
    r"\b(?:going to|gonna|will|want to) (?:hurt|hit|kill|stab|shoot) (?:him|her|them|you|someone|somebody|everyone)\b",
    r"\bno(?:body| one) would care if i (?:died|disappeared|was gone)\b",
    r"\bi(?:'ve| have) already decided\b",
)


class CrisisClassifier(StateClassifier):
    """``crisis_statement``: 1 when the user's turn matches one of ``phrases`` (regular
    expressions, case-insensitive; a short shipped list, not a clinical screen)."""

    name = "crisis"
    features = ("crisis_statement",)

    def __init__(self, phrases: Sequence[str] = CRISIS_PHRASES) -> None:
        self.pattern = re.compile("|".join(f"(?:{p})" for p in phrases), re.IGNORECASE)

    def classify(
        self, observation: Mapping[str, Any], state: SupervisorState
    ) -> Mapping[str, float]:
        return {"crisis_statement": 1.0 if self.pattern.search(user_text(observation)) else 0.0}
