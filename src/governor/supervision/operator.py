"""Operator acts: what a teacher, clinician or other human stakeholder may do to a session.

An operator may pause a session (it engages with no one until resumed), resume it, set the mode
(held until released), release the mode back to the supervisor, or end the session for good.
Every act says who did it, when and why; :meth:`Supervisor.operate
<governor.supervision.supervisor.Supervisor.operate>` appends it to the session's audit trail.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from governor.errors import ConfigError, expected


class ActKind(StrEnum):
    PAUSE = "pause"
    RESUME = "resume"
    SET_MODE = "set_mode"
    RELEASE = "release"
    END = "end"


@dataclass(frozen=True)
class OperatorAct:
    """One act of a human operator: ``kind`` by ``who`` at ``at`` (seconds since the epoch)
    because ``why``; ``mode`` for ``set_mode``; ``t`` the supervisor step it took effect at."""

    kind: ActKind
    who: str
    why: str
    at: float
    mode: str | None = None
    t: int = 0

    def __post_init__(self) -> None:
        if not isinstance(self.kind, ActKind):
            raise ConfigError(f"operator act: {expected(' or '.join(ActKind), self.kind)}")
        for name in ("who", "why"):
            value = getattr(self, name)
            if not isinstance(value, str) or not value.strip():
                raise ConfigError(f"operator act {name}: {expected('a non-empty string', value)}")
        if not (isinstance(self.at, (int, float)) and math.isfinite(self.at)):
            raise ConfigError(f"operator act at: {expected('a time in seconds', self.at)}")
        if (self.kind is ActKind.SET_MODE) != (self.mode is not None):
            wanted = "a mode" if self.kind is ActKind.SET_MODE else "no mode"
            raise ConfigError(f"operator act {self.kind}: {expected(wanted, self.mode)}")

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind.value,
            "who": self.who,
            "why": self.why,
            "at": self.at,
            "mode": self.mode,
            "t": self.t,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> OperatorAct:
        try:
            return cls(
                ActKind(data["kind"]),
                str(data["who"]),
                str(data["why"]),
                float(data["at"]),
                data.get("mode"),
                int(data.get("t", 0)),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise ConfigError(f"operator act: {expected('an act record', data)}") from exc
