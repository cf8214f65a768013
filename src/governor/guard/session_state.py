"""A session's state, and its JSON form for a store.

What a session keeps between calls: the messages so far, each constraint's memory (an LTL rule's
progressed formula, printed with ``str`` and read back with :func:`~governor.ltl.parser.parse`,
its running sums and provenance index; a commit failure as its error), the pending implicit feedback, the
number of executed actions, the operators' acts on it (pause, resume, end, and with modes
set_mode and release: the audit trail, which a reset keeps), and, under a policy with a
supervision section, the supervisor's state (its mode, cooldown, rule monitors and audit trail:
:meth:`~governor.supervision.SupervisorState.to_json`). A saved rule state is only read back into the same rule (the same
name and formula); under a changed policy a rule new to the session starts from its current
step, or is replayed over its stored messages (the rule's ``on_live_sessions``), a rule the
policy no longer has is dropped, and the state read back says so (``changed``) for the session to
record. The last step's request and reply (``last``) answer a retry.
Imports the core types, the LTL parser, the operator acts and state of the supervision layer and
the guard's exchange and constraints.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from governor.core import (
    CommitFailure,
    Constraint,
    DecisionKind,
    Feedback,
    FeedbackKind,
    Step,
    Trajectory,
)
from governor.errors import ConfigError, GovernorError, expected
from governor.guard.constraints import ToolLTLConstraint, ToolMonitorState
from governor.guard.exchange import Conversation, History, Message, conversation_from, reply_of
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
    last: Mapping[str, Any] | None = None
    """The last step's request and reply, so that the same request sent again (a client's retry)
    is answered with it: ``n`` (the request's messages), ``fp`` (its tools and sampling),
    ``key`` (its Idempotency-Key), ``reply``, ``kind``, ``t``."""
    changed: Mapping[str, tuple[str, ...]] | None = None
    """When read back under a changed policy: the rules ``added``, ``removed`` and ``replayed``
    (not saved: the session writes it to its records once)."""

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


_RULE_TEXTS: list[tuple[Sequence[Constraint], dict[str, str]]] = []
"""The last constraints :func:`_rule_texts` read and its answer (one entry: a session's saves
and loads read the same tuple; the entry holds it, so its identity is not reused)."""


def _rule_texts(constraints: Sequence[Constraint]) -> Mapping[str, str]:
    """Each LTL rule's formula text in ``constraints``, by name (read once per tuple of
    constraints: a rule's name and formula do not change)."""
    last = _RULE_TEXTS[0] if _RULE_TEXTS else None
    if last is not None and last[0] is constraints:
        return last[1]
    texts = {c.name: str(c.rule.formula) for c in constraints if isinstance(c, ToolLTLConstraint)}
    if isinstance(constraints, tuple):  # not a list, which could change under the same identity
        _RULE_TEXTS[:] = [(constraints, texts)]
    return texts


def state_to_json(
    state: SessionState, constraints: Sequence[Constraint], *, with_messages: bool = True
) -> dict[str, Any]:
    """The JSON-safe form of ``state`` (each rule's state with the formula it belongs to);
    without its messages (``with_messages=False``: a store keeps them apart, appending the new
    ones) it holds their number, ``n_messages``."""
    rules = _rule_texts(constraints)
    memory: dict[str, Any] = {}
    for name, value in state.memory.items():
        if isinstance(value, ToolMonitorState):
            m = value.monitors
            entry = {
                "kind": "ltl",
                "rule": rules.get(name, ""),
                "formulas": list(map(str, m.formulas)),
                "labels": sorted(m.labels) if m.labels else [],
                "t": m.t,
                "sums": dict(value.sums),
            }
            if value.seen is not None:
                entry["seen"] = value.seen.to_json()
            memory[name] = entry
        elif isinstance(value, CommitFailure):
            memory[name] = {"kind": "failed", "error": value.error}
        elif value is not None:
            raise ConfigError(f"session state {name}: {expected('a guard state', value)}")
    feedback = state.feedback
    out: dict[str, Any] = {
        "format": FORMAT,
        "t": state.t,
        "memory": memory,
        "operator": [a.to_json() for a in state.acts],
        "supervisor": None if state.supervisor is None else state.supervisor.to_json(),
        "last": None if state.last is None else dict(state.last),
        "feedback": None
        if feedback is None
        else {
            "kind": feedback.kind.value,
            "text": feedback.text,
            "constraints": list(feedback.constraints),
        },
    }
    if with_messages:
        out["messages"] = [m.to_dict() for m in state.messages]
    else:
        out["n_messages"] = len(state.messages)
    return out


def state_from_json(
    data: Any,
    constraints: Sequence[Constraint],
    where: str = "session state",
    prefix: tuple[Message, ...] = (),
) -> SessionState:
    """The state saved as ``data``, read back into ``constraints``; ``prefix``: the messages
    before those ``data`` holds (a store that read only the messages after them says where
    they start, ``messages_from``, which must be the prefix's length)."""
    try:
        return _read(data, constraints, where, prefix)
    except GovernorError:
        raise
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        found = f"{type(exc).__name__} {exc}"
        raise ConfigError(f"{where}: expected a saved guard session, found {found}") from exc


def _read(
    data: Any, constraints: Sequence[Constraint], where: str, prefix: tuple[Message, ...]
) -> SessionState:
    if not isinstance(data, Mapping) or data.get("format") != FORMAT:
        raise ConfigError(f"{where}: {expected(f'a saved session of format {FORMAT}', data)}")
    t = int(data["t"])
    saved = data["memory"]
    start = int(data.get("messages_from") or 0)
    if start != len(prefix):
        wanted = f"messages from index {len(prefix)} (those before are held)"
        raise ConfigError(f"{where}: expected {wanted}, found them from index {start}")
    messages = prefix + conversation_from(data["messages"], f"{where}: messages")
    rules = _rule_texts(constraints)
    removed = [
        name
        for name, entry in saved.items()
        if name not in rules or (entry.get("kind") == "ltl" and entry.get("rule") != rules[name])
    ]
    live = bool(t or messages)
    added: list[str] = []
    replayed: list[str] = []
    memory: dict[str, Any] = {}
    for c in constraints:
        entry = saved.get(c.name)
        if not isinstance(c, ToolLTLConstraint):
            memory[c.name] = None
        elif entry is None or c.name in removed:  # new to this session (or its formula changed)
            if live:
                added.append(c.name)
            if live and c.rule.on_live_sessions == "replay":
                memory[c.name] = replayed_state(c, messages)
                replayed.append(c.name)
            else:
                memory[c.name] = c.initial_state(None)
        elif entry["kind"] == "failed":
            memory[c.name] = CommitFailure(str(entry["error"]))
        else:
            memory[c.name] = _monitor_state(c, entry, where)
    changed = None
    if added or removed:
        changed = {"added": tuple(added), "removed": tuple(removed), "replayed": tuple(replayed)}
    raw = data.get("feedback")
    feedback = None
    if raw is not None:
        feedback = Feedback(FeedbackKind(raw["kind"]), str(raw["text"]), tuple(raw["constraints"]))
    acts = tuple(OperatorAct.from_json(a) for a in data.get("operator") or ())
    raw_sup = data.get("supervisor")
    try:
        supervisor = None if raw_sup is None else SupervisorState.from_json(raw_sup)
    except ConfigError as exc:
        raise ConfigError(f"{where}: {exc}") from None
    last = data.get("last")
    if last is not None and not isinstance(last, Mapping):
        raise ConfigError(f"{where}: last: {expected('an object', last)}")
    return SessionState(messages, memory, feedback, t, acts, supervisor, last, changed)


def replayed_state(c: ToolLTLConstraint, messages: Sequence[Message]) -> ToolMonitorState:
    """The state of rule ``c`` after every assistant message of ``messages``, in order (a rule
    added to a live session that asks to be replayed over its history); linear in it."""
    tuple_of = tuple(messages)
    memory: ToolMonitorState = c.initial_state(None)
    for i, m in enumerate(tuple_of):
        if m.role != "assistant":
            continue
        seen = Conversation(History(tuple_of, i))
        after = Conversation(History(tuple_of, i + 1))
        step = Step(seen, reply_of(m), after, DecisionKind.EXECUTE, {})
        memory = c.commit(Trajectory(seen, memory={c.name: memory}), step)
    return memory


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
