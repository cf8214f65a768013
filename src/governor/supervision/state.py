"""Where a supervised session stands between steps, and its JSON form for a session store.

Everything the supervisor needs to go on is here, nothing on the supervisor itself: the step,
the mode and whether an interaction is engaged, the operator's pause and mode, the refusal count
and cooldown, short windows of recent features and user turns (for trend and perseveration
rules), the mode rules' progressed formulas (printed with ``str`` and read back with
:func:`~governor.ltl.parser.parse`), counts per decision kind, and the operator audit trail.
:meth:`SupervisorState.to_json` and :meth:`SupervisorState.from_json` round-trip exactly.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any

from governor.errors import ConfigError, GovernorError, expected
from governor.ltl.monitor import MonitorSetState, MonitorVerdict
from governor.ltl.parser import parse
from governor.supervision.operator import OperatorAct

FORMAT = 1


@dataclass(frozen=True)
class SupervisorState:
    """One session's supervision state after step ``t`` (see the module doc)."""

    t: int = 0
    mode: str | None = None
    engaged: bool = False
    mode_since: int = 0
    paused: bool = False
    ended: bool = False
    operator_mode: str | None = None
    refusals: int = 0
    cooldown_until: int = 0
    recent: Mapping[str, tuple[float, ...]] = field(default_factory=dict)
    recent_texts: tuple[str, ...] = ()
    monitor: MonitorSetState | None = None
    counts: Mapping[str, int] = field(default_factory=dict)
    audit: tuple[OperatorAct, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "recent", MappingProxyType(dict(self.recent)))
        object.__setattr__(self, "counts", MappingProxyType(dict(self.counts)))

    @property
    def mode_steps(self) -> int:
        """Steps spent in the current mode (0 when not engaged)."""
        return self.t - self.mode_since if self.engaged else 0

    def counted(self, key: str) -> SupervisorState:
        """This state with ``counts[key]`` one higher."""
        return replace(self, counts={**self.counts, key: self.counts.get(key, 0) + 1})

    def to_json(self) -> dict[str, Any]:
        """A JSON-safe dict that :meth:`from_json` reads back into an equal state."""
        m = self.monitor
        monitor = None
        if m is not None:
            monitor = {
                "names": list(m.names),
                "formulas": [str(f) for f in m.formulas],
                "verdicts": [v.value for v in m.verdicts],
                "labels": sorted(m.labels),
                "t": m.t,
            }
        return {
            "format": FORMAT,
            "t": self.t,
            "mode": self.mode,
            "engaged": self.engaged,
            "mode_since": self.mode_since,
            "paused": self.paused,
            "ended": self.ended,
            "operator_mode": self.operator_mode,
            "refusals": self.refusals,
            "cooldown_until": self.cooldown_until,
            "recent": {k: list(v) for k, v in self.recent.items()},
            "recent_texts": list(self.recent_texts),
            "monitor": monitor,
            "counts": dict(self.counts),
            "audit": [a.to_json() for a in self.audit],
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> SupervisorState:
        """The state :meth:`to_json` wrote; anything else is a :class:`ConfigError`."""
        if not isinstance(data, Mapping) or data.get("format") != FORMAT:
            found = data.get("format") if isinstance(data, Mapping) else type(data).__name__
            raise ConfigError(f"supervisor state: {expected(f'format {FORMAT}', found)}")
        try:
            m = data["monitor"]
            monitor = None
            if m is not None:
                monitor = MonitorSetState(
                    tuple(str(n) for n in m["names"]),
                    tuple(parse(str(f)) for f in m["formulas"]),
                    tuple(MonitorVerdict(v) for v in m["verdicts"]),
                    frozenset(str(x) for x in m["labels"]),
                    int(m["t"]),
                )
            return cls(
                t=int(data["t"]),
                mode=_optional_str(data["mode"]),
                engaged=_bool(data["engaged"]),
                mode_since=int(data["mode_since"]),
                paused=_bool(data["paused"]),
                ended=_bool(data["ended"]),
                operator_mode=_optional_str(data["operator_mode"]),
                refusals=int(data["refusals"]),
                cooldown_until=int(data["cooldown_until"]),
                recent={str(k): tuple(float(x) for x in v) for k, v in data["recent"].items()},
                recent_texts=tuple(str(x) for x in data["recent_texts"]),
                monitor=monitor,
                counts={str(k): int(v) for k, v in data["counts"].items()},
                audit=tuple(OperatorAct.from_json(a) for a in data["audit"]),
            )
        except (KeyError, TypeError, ValueError, AttributeError, GovernorError) as exc:
            raise ConfigError(
                f"supervisor state: {expected('a record written by to_json', str(exc))}"
            ) from exc


def _optional_str(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise TypeError(f"expected a string or null, found {value!r}")


def _bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    raise TypeError(f"expected true or false, found {value!r}")


def observe(
    state: SupervisorState, observation: Mapping[str, Any], window: int, text_chars: int
) -> SupervisorState:
    """The next step's state: ``t`` advanced, refusals counted (a refusal adds one, a response
    resets them, no report keeps them), the user's turn kept among the last ``window``."""
    refused = bool(observation.get("refused"))
    text = observation.get("user_text")
    said = text[:text_chars] if isinstance(text, str) and text.strip() else ""
    responded = bool(said) or observation.get("refused") is False
    refusals = state.refusals + 1 if refused else (0 if responded else state.refusals)
    texts = (*state.recent_texts, said)[-window:] if said else state.recent_texts
    return replace(state, t=state.t + 1, refusals=refusals, recent_texts=texts)


def remember(state: SupervisorState, features: Mapping[str, float], window: int) -> SupervisorState:
    """``state`` with this step's features appended to their windows (``window`` + 1 kept)."""
    recent = {k: v for k, v in state.recent.items() if k in features}
    for k, v in features.items():
        recent[k] = (*state.recent.get(k, ()), v)[-(window + 1) :]
    return replace(state, recent=recent)
