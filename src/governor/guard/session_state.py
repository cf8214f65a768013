"""A session's state, and its JSON form for a store.

What a session keeps between calls: the messages so far, each constraint's memory (an LTL rule's
progressed formula, printed with ``str`` and read back with :func:`~governor.ltl.parser.parse`,
its running sums and provenance index; a commit failure as its error), the pending implicit feedback, the
number of executed actions, the operators' acts on it (pause, resume, end, and with modes
set_mode and release: the audit trail, which a reset keeps), and, under a policy with a
supervision section, the supervisor's state (its mode, cooldown, rule monitors and audit trail:
:meth:`~governor.supervision.SupervisorState.to_json`). A saved rule state is only read back into the same rule: a state
saved under another formula is refused (a changed policy cannot silently forget what happened).
Imports the core types, the LTL parser, the operator acts and state of the supervision layer and
the guard's exchange and constraints.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from governor.core import CommitFailure, Constraint, Feedback, FeedbackKind
from governor.errors import ConfigError, GovernorError, expected
from governor.guard.constraints import ToolLTLConstraint, ToolMonitorState
from governor.guard.exchange import Message, conversation_from
from governor.guard.provenance import Seen
from governor.ltl.monitor import MonitorSetState
from governor.ltl.parser import parse
from governor.supervision import SupervisorState
from governor.supervision.operator import ActKind, OperatorAct

FORMAT = 1


@dataclass(frozen=True)
class SessionState:
    """Where a session stands after its last committed decision."""

    messages: tuple[Message, ...] = ()
    memory: Mapping[str, Any] = field(default_factory=dict)
    feedback: Feedback | None = None
    t: int = 0
    acts: tuple[OperatorAct, ...] = ()
    supervisor: SupervisorState | None = None

    @property
    def paused(self) -> bool:
        """Paused by an operator (and not resumed since)."""
        return operator_status(a.kind for a in self.acts)[0]

    @property
    def ended(self) -> bool:
        """Ended by an operator, for good."""
        return operator_status(a.kind for a in self.acts)[1]


def operator_status(kinds: Iterable[str]) -> tuple[bool, bool]:
    """(paused, ended) after operator acts of these kinds, oldest first (names or ActKinds):
    paused when the last pause or resume was a pause; ended after any end."""
    paused = ended = False
    for kind in kinds:
        if kind == ActKind.PAUSE or kind == ActKind.RESUME:
            paused = kind == ActKind.PAUSE
        ended = ended or kind == ActKind.END
    return paused, ended


def state_to_json(state: SessionState, constraints: Sequence[Constraint]) -> dict[str, Any]:
    """The JSON-safe form of ``state`` (each rule's state with the formula it belongs to)."""
    rules = {c.name: str(c.rule.formula) for c in constraints if isinstance(c, ToolLTLConstraint)}
    memory: dict[str, Any] = {}
    for name, value in state.memory.items():
        if isinstance(value, ToolMonitorState):
            m = value.monitors
            memory[name] = {
                "kind": "ltl",
                "rule": rules.get(name, ""),
                "formulas": [str(f) for f in m.formulas],
                "labels": sorted(m.labels),
                "t": m.t,
                "sums": dict(value.sums),
                **({} if value.seen is None else {"seen": value.seen.to_json()}),
            }
        elif isinstance(value, CommitFailure):
            memory[name] = {"kind": "failed", "error": value.error}
        elif value is not None:
            raise ConfigError(f"session state {name}: {expected('a guard state', value)}")
    feedback = state.feedback
    return {
        "format": FORMAT,
        "t": state.t,
        "messages": [m.to_dict() for m in state.messages],
        "memory": memory,
        "operator": [a.to_json() for a in state.acts],
        "supervisor": None if state.supervisor is None else state.supervisor.to_json(),
        "feedback": None
        if feedback is None
        else {
            "kind": feedback.kind.value,
            "text": feedback.text,
            "constraints": list(feedback.constraints),
        },
    }


def state_from_json(
    data: Any, constraints: Sequence[Constraint], where: str = "session state"
) -> SessionState:
    """The state saved as ``data``, read back into ``constraints``."""
    try:
        return _read(data, constraints, where)
    except GovernorError:
        raise
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        found = f"{type(exc).__name__} {exc}"
        raise ConfigError(f"{where}: expected a saved guard session, found {found}") from exc


def _read(data: Any, constraints: Sequence[Constraint], where: str) -> SessionState:
    if not isinstance(data, Mapping) or data.get("format") != FORMAT:
        raise ConfigError(f"{where}: {expected(f'a saved session of format {FORMAT}', data)}")
    t = int(data["t"])
    saved = data["memory"]
    memory: dict[str, Any] = {}
    for c in constraints:
        entry = saved.get(c.name)
        if not isinstance(c, ToolLTLConstraint):
            memory[c.name] = None
        elif entry is None:
            if t:
                raise ConfigError(
                    f"{where}: rule {c.name} has no saved state (added after the session began);"
                    " start a new session"
                )
            memory[c.name] = c.initial_state(None)
        elif entry["kind"] == "failed":
            memory[c.name] = CommitFailure(str(entry["error"]))
        else:
            memory[c.name] = _monitor_state(c, entry, where)
    raw = data.get("feedback")
    feedback = None
    if raw is not None:
        feedback = Feedback(FeedbackKind(raw["kind"]), str(raw["text"]), tuple(raw["constraints"]))
    messages = conversation_from(data["messages"], f"{where}: messages")
    acts = tuple(OperatorAct.from_json(a) for a in data.get("operator") or ())
    raw_sup = data.get("supervisor")
    try:
        supervisor = None if raw_sup is None else SupervisorState.from_json(raw_sup)
    except ConfigError as exc:
        raise ConfigError(f"{where}: {exc}") from None
    return SessionState(messages, memory, feedback, t, acts, supervisor)


def _monitor_state(c: ToolLTLConstraint, entry: Mapping[str, Any], where: str) -> ToolMonitorState:
    if entry.get("rule") != str(c.rule.formula):
        raise ConfigError(
            f"{where}: rule {c.name} changed since the session was saved (saved under"
            f" {entry.get('rule')!r}, now {str(c.rule.formula)!r}); start a new session"
        )
    formulas = tuple(parse(text) for text in entry["formulas"])
    monitors = c.monitors
    if len(formulas) != len(monitors):
        raise ConfigError(
            f"{where}: rule {c.name}: {expected(f'{len(monitors)} formulas', formulas)}"
        )
    verdicts = tuple(m.verdict(f) for m, f in zip(monitors, formulas, strict=True))
    state = MonitorSetState(
        monitors.names, formulas, verdicts, frozenset(entry["labels"]), int(entry["t"])
    )
    sums = {str(k): float(v) for k, v in dict(entry.get("sums") or {}).items()}
    raw_seen = entry.get("seen")
    seen = None if raw_seen is None else Seen.from_json(raw_seen, f"{where}: rule {c.name}: seen")
    return ToolMonitorState(state, sums, seen)
