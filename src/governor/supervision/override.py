"""Protective override: when the trajectory heads into harm, the supervisor interrupts, ends the
line of conversation or forces another mode, even against conversational norms.

Each :class:`ProtectiveRule` looks at this step's features and the recent ones kept in the
supervisor's state and returns an :class:`Override` naming itself, or None. Shipped:

- :class:`ThresholdOverride`: a feature condition, e.g. ``crisis_statement >= 1`` forces the
  crisis protocol;
- :class:`EscalatingAffect`: the user's affect fell by at least ``drop`` over the last
  ``window`` steps and is now below ``below``;
- :class:`Perseveration`: the user's last ``repeats`` turns say the same thing (content-word
  overlap of each with the latest at least ``similarity``), a perseverative loop.

Actions: ``force_mode`` switches to ``mode``; ``end_line`` ends the line of conversation (the
activity starts afresh) and switches when ``mode`` is given; ``interrupt`` does both at once,
speaking now whatever the user is doing. The forced mode is still judged by the mode rules.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from governor.errors import ConfigError, expected
from governor.overlays.features.text import content_stems
from governor.overlays.rules import Condition
from governor.supervision.state import SupervisorState

Action = Literal["force_mode", "end_line", "interrupt"]
ACTIONS: tuple[str, ...] = ("force_mode", "end_line", "interrupt")


@dataclass(frozen=True)
class Override:
    """What a protective rule requires: ``action`` (to ``mode``), named by ``rule``, because ``reason``."""

    rule: str
    action: Action
    mode: str | None
    reason: str

    @property
    def ends_line(self) -> bool:
        return self.action in ("end_line", "interrupt")


class ProtectiveRule(ABC):
    """A rule that may require an override; ``features`` names the features it reads."""

    name: str = "protective_rule"
    features: tuple[str, ...] = ()

    def __init__(self, name: str, mode: str | None, action: Action) -> None:
        if action not in ACTIONS:
            raise ConfigError(
                f"override {name!r}: action: {expected(' or '.join(ACTIONS), action)}"
            )
        if mode is None and action == "force_mode":
            raise ConfigError(f"override {name!r}: {expected('a mode to force', mode)}")
        self.name, self.mode, self.action = name, mode, action

    @abstractmethod
    def check(self, features: Mapping[str, float], state: SupervisorState) -> Override | None:
        """The override this step requires, or None."""

    def fire(self, reason: str) -> Override:
        return Override(self.name, self.action, self.mode, reason)


class ThresholdOverride(ProtectiveRule):
    """Fires while ``condition`` (``"feature op number"``) holds."""

    def __init__(
        self, name: str, condition: str, mode: str | None, action: Action = "force_mode"
    ) -> None:
        super().__init__(name, mode, action)
        try:
            self.condition = Condition.parse(condition)
        except ValueError as exc:
            raise ConfigError(f"override {name!r}: condition: {exc}") from None
        self.features = (self.condition.feature,)

    def check(self, features: Mapping[str, float], state: SupervisorState) -> Override | None:
        value = features.get(self.condition.feature)
        if value is None or not self.condition.holds(value):
            return None
        return self.fire(f"{self.condition} (value {value:.2f})")


class EscalatingAffect(ProtectiveRule):
    """Fires when ``feature`` fell by >= ``drop`` over ``window`` steps and is below ``below``."""

    def __init__(
        self,
        mode: str | None,
        *,
        name: str = "escalating_affect",
        feature: str = "user_affect",
        window: int = 3,
        drop: float = 0.5,
        below: float = -0.5,
        action: Action = "force_mode",
    ) -> None:
        super().__init__(name, mode, action)
        if window < 1:
            raise ConfigError(f"override {name!r}: window: {expected('>= 1', window)}")
        self.feature, self.window, self.drop, self.below = feature, window, drop, below
        self.features = (feature,)

    def check(self, features: Mapping[str, float], state: SupervisorState) -> Override | None:
        now = features.get(self.feature)
        past = state.recent.get(self.feature, ())[-(self.window + 1) : -1]
        if now is None or not past or now >= self.below:
            return None
        fall = max(past) - now
        if fall < self.drop:
            return None
        return self.fire(f"{self.feature} fell by {fall:.2f} in {len(past)} step(s) to {now:.2f}")


class Perseveration(ProtectiveRule):
    """Fires when the user's last ``repeats`` turns overlap the latest by >= ``similarity``."""

    features = ()

    def __init__(
        self,
        mode: str | None,
        *,
        name: str = "perseveration",
        repeats: int = 3,
        similarity: float = 0.5,
        action: Action = "interrupt",
    ) -> None:
        super().__init__(name, mode, action)
        if repeats < 2:
            raise ConfigError(f"override {name!r}: repeats: {expected('>= 2', repeats)}")
        self.repeats, self.similarity = repeats, similarity

    def check(self, features: Mapping[str, float], state: SupervisorState) -> Override | None:
        texts = state.recent_texts[-self.repeats :]
        if len(texts) < self.repeats:
            return None
        latest = content_stems(texts[-1])
        if not latest:
            return None
        for text in texts[:-1]:
            other = content_stems(text)
            if len(latest & other) / max(1, len(latest | other)) < self.similarity:
                return None
        topic = ", ".join(sorted(latest)[:4])
        return self.fire(f"the user repeated the same line {self.repeats} times ({topic})")
