"""The guard's constraints: LTL monitors over tool calls, and overlays over text replies.

:class:`ToolLTLConstraint` is an :class:`~governor.ltl.constraint.LTLConstraint` for one policy
rule whose labels come from the policy's vocabulary (:mod:`governor.guard.spec.propositions`).
Its memory is a :class:`ToolMonitorState`: the monitor's progressed formula and the running sums
the rule's propositions read. Position 0 is the start of the session (no action, no labels);
each executed action is one more position. ``check`` is a what-if; ``commit`` advances formula and sums.

A reply's tool calls run in parallel: they are one step, one position whose labels are every
call's (a running sum adds every call), in which no call's result is known. So a reply is
admissible when that step is, and when each call, taken alone as the next position, is too: a
rule that needs an earlier call ("verify_identity before refund") is not met by a sibling. The
step is committed as one position. A rule's descriptor never quotes the reply (the decision
record keeps the candidate; the client's summary must not, :mod:`.summary`).

:class:`TextOverlayConstraint` judges the text of a reply with one overlay, the text beside tool
calls too (a reply of calls only passes), after the session's recent text turns
(:func:`dialogue_of`: the last :data:`DIALOGUE_TURNS`, so its cost does not grow with the
session). The policy's ``checks`` choose which constraints judge
text (``assistant``) and which judge tool calls (``tool_calls``); a constraint that does not judge
an action admits it, and an LTL monitor still reads every executed action. The checks of the
calls as calls (offered tools, calls that run alone) are :mod:`.call_checks`. Each declares what it can judge of a reply still
being generated (:mod:`.prefix`): an LTL rule every prefix (the labels of a text reply do not
depend on its text); an overlay every prefix when it bounds a growing feature from above only,
the whole reply when from below only, else nothing before the whole. Imports the core types, the
LTL monitor constraint, the overlays and the guard's call checks, exchange, spec (policy and
propositions),
prefix and value constraint (:mod:`.value_constraint`: a policy's safety value, after the LTL
rules).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from governor.core import CommitFailure, Constraint, Step, Trajectory, Verdict
from governor.guard.call_checks import call_constraints
from governor.guard.exchange import History, Message, Reply, messages_of, reply_of
from governor.guard.prefix import PrefixJudgement
from governor.guard.provenance import Seen
from governor.guard.spec.guard_policy import Checks, GuardPolicy, LTLRule
from governor.guard.spec.propositions import Vocabulary
from governor.guard.value_constraint import SafetyValueConstraint
from governor.ltl.constraint import LTLConstraint
from governor.ltl.monitor import MonitorSetState
from governor.overlays.constraint import OverlayConstraint
from governor.overlays.features.base import get_feature
from governor.overlays.features.dialogue import Dialogue, Turn
from governor.overlays.rules import Overlay


@dataclass(frozen=True, slots=True)
class ToolMonitorState:
    """One rule's memory: its monitor's state, the running sums of its propositions and, when
    they ask where a value came from, the provenance index (:mod:`.provenance`)."""

    monitors: MonitorSetState
    sums: Mapping[str, float] = dataclasses.field(default_factory=dict)
    seen: Seen | None = None


WHAT_IF_LIMIT = 4096
"""Memoised what-if verdicts a rule keeps (emptied when full)."""
PREDICTED_LIMIT = 64
"""Actions whose predicted labels a rule keeps for the trajectory checked last (its candidates
and their calls; a commit of one of them reuses them)."""
TEXT_REPLY = Reply("")
"""A reply without tool calls (what a rule whose labels read the sums alone sees of any text)."""


def _no_labels(observation: Any) -> frozenset[str]:
    return frozenset()


_DIALOGUES: dict[int, tuple[Sequence[Message], Dialogue]] = {}
"""The dialogues of recently judged conversations, by the id of their message tuple (each entry
holds that tuple, so the id is not reused while the entry lives); every overlay of a check reads
the same one."""
_DIALOGUES_LIMIT = 64
DIALOGUE_TURNS = 32
"""The most recent text turns an overlay reads in a guarded session: its features (the last user
turn, the assistant's last few turns, the user's recent words), its ``last_n`` scope and its
``trajectory`` scope (the assistant's turns among these) see no further back, so a check costs
the same at step 1,000 as at step 10."""
DIALOGUE_MESSAGES = 4 * DIALOGUE_TURNS
"""The most recent messages those turns are looked for in (tool calls and results in between
count too)."""


class ToolLTLConstraint(LTLConstraint):
    """One policy rule monitored over the session's actions (see the module doc)."""

    prefix_judgement = PrefixJudgement.EACH_PREFIX
    violation = "rule"
    pure = True  # a monitor's step over propositions read from the action and the messages

    def __init__(self, rule: LTLRule, vocabulary: Vocabulary, checks: Checks | None = None):
        self.rule = rule
        self.vocabulary = vocabulary.restricted(rule.formula.atom_labels())
        self.checks = checks or Checks()
        super().__init__(
            [(rule.name, rule.text, rule.formula)], self._predict, _no_labels, name=rule.name
        )
        self._what_if: dict[tuple[Any, ...], Verdict] = {}
        self._steps: dict[tuple[Any, ...], tuple[Any, ...]] = {}
        self._start: ToolMonitorState | None = None
        self._predicted: tuple[Trajectory, dict[int, tuple[Any, Any]]] | None = None
        """The labels predicted after the trajectory checked last, by the id of each action."""
        self._judges: tuple[Checks, bool, bool] | None = None
        """What :meth:`_read_checks` read."""

    # The memory is a ToolMonitorState (the monitors' state plus the sums); ``_state`` unwraps it
    # for the inherited check, so these two overrides widen what the base class keeps.
    def initial_state(self, observation: Any) -> ToolMonitorState:  # type: ignore[override]
        """The memory of a new session: the monitors after the start (no labels: the same for
        every observation) and no sums, made once: no one changes a state or its sums (a
        commit makes new ones), so every session starts from the same one."""
        start = self._start
        if start is None:
            start = self._start = ToolMonitorState(self.monitors.start(frozenset()), {})
        return start

    def memory(self, traj: Trajectory) -> ToolMonitorState:
        """This rule's state in ``traj`` (the initial one before anything was kept)."""
        state = traj.memory.get(self.name)
        if type(state) is ToolMonitorState:
            return state
        if state is None:
            return self.initial_state(traj.observation)
        if not isinstance(state, ToolMonitorState):
            raise TypeError(f"{self.name}: expected a ToolMonitorState, found {state!r}")
        return state

    def _state(self, traj: Trajectory) -> MonitorSetState:
        return self.memory(traj).monitors

    def _predict(self, traj: Trajectory, action: Any) -> frozenset[str]:
        return self._predicted_labels(traj, action, self.memory(traj))

    def _predicted_labels(
        self, traj: Trajectory, action: Any, mem: ToolMonitorState
    ) -> frozenset[str]:
        """The labels of ``action`` as the next position after ``traj`` (whose memory of this
        rule is ``mem``), kept with the sums and index after it for a commit of that action."""
        reply = action if isinstance(action, Reply) else Reply(str(action))
        found = self.vocabulary.labels(mem.sums, reply, messages_of(traj.observation), mem.seen)
        last = self._predicted
        if last is not None and last[0] is traj and len(last[1]) < PREDICTED_LIMIT:
            last[1][id(action)] = (action, found)
        else:
            self._predicted = (traj, {id(action): (action, found)})
        return found[0]

    def _labelled(
        self, traj: Trajectory, step: Step, mem: ToolMonitorState
    ) -> tuple[frozenset[str], Mapping[str, float], Seen | None]:
        """The labels, sums and provenance index at ``step``: those predicted for this very
        action after this very trajectory when it was the last one checked (the checks just
        before the commit; the objects are held, so identity is sameness), else computed. The
        sums are never changed once made (each labelling makes new ones), so states share
        them."""
        last = self._predicted
        if last is not None and last[0] is traj and step.observation is traj.observation:
            hit = last[1].get(id(step.action))
            if hit is not None and hit[0] is step.action:
                return hit[1]
        action = step.action if isinstance(step.action, Reply) else Reply(str(step.action))
        return self.vocabulary.labels(mem.sums, action, messages_of(step.observation), mem.seen)

    def _read_checks(self) -> tuple[Checks, bool, bool]:
        """The policy's checks, and whether they run this rule on a reply of tool calls and on
        one of text (read again when the checks are replaced)."""
        checks = self.checks
        self._judges = judges = (
            checks,
            checks.runs("tool_calls", self.name, "ltl"),
            checks.runs("assistant", self.name, "ltl"),
        )
        return judges

    def check(self, traj: Trajectory, action: Any) -> Verdict:
        judges = self._judges
        if judges is None or judges[0] is not self.checks:
            judges = self._read_checks()
        reply = isinstance(action, Reply)
        if not judges[1 if reply and action.tool_calls else 2]:
            return Verdict.allow(self.name)
        mem = traj.memory.get(self.name)
        if type(mem) is not ToolMonitorState:
            mem = self.memory(traj)
        verdict = self._judged(traj, action, mem)
        if not reply:
            return verdict
        calls = action.tool_calls
        if not verdict.admissible:
            what = "the tool call" if len(calls) == 1 else "the reply"
            return dataclasses.replace(verdict, descriptor=f"{what} {verdict.descriptor}")
        if len(calls) < 2:
            return verdict
        # parallel calls: each must be admissible alone too, so that no sibling stands in for an
        # earlier call (calls in one reply form one step in which no result is known)
        for i, call in enumerate(calls):
            alone = self._judged(traj, Reply(action.content, (call,)), mem)
            if not alone.admissible:
                descriptor = (
                    f"call {i + 1} of {len(calls)} {alone.descriptor} (calls in one reply run as"
                    " one step in which no result is known: another call of the same reply does"
                    " not count as made before it)"
                )
                return dataclasses.replace(alone, descriptor=descriptor)
        return verdict

    def _judged(self, traj: Trajectory, action: Any, mem: ToolMonitorState) -> Verdict:
        """The monitors' verdict on ``action`` as the next position (memoised: a function of
        their state and the predicted labels). Its descriptor never quotes the action."""
        state = mem.monitors
        key = (
            state.formulas,
            state.verdicts,
            state.labels,
            self._predicted_labels(traj, action, mem),
        )
        verdict = self._what_if.get(key)
        if verdict is None:
            verdict = super().check(traj, action)
            if len(self._what_if) >= WHAT_IF_LIMIT:
                self._what_if.clear()
            self._what_if[key] = verdict
        return verdict

    def commit(self, traj: Trajectory, step: Step) -> ToolMonitorState:  # type: ignore[override]
        mem = traj.memory.get(self.name)
        if type(mem) is not ToolMonitorState:
            mem = self.memory(traj)
        labels, sums, seen = self._labelled(traj, step, mem)
        # the next formulas are a function of the formulas and the labels: memoised (a replayed
        # history steps the same few states over and over)
        state = mem.monitors
        key = (state.formulas, labels)
        hit = self._steps.get(key)
        if hit is None:
            nxt = self.monitors.step(state, labels)
            if nxt.formulas == state.formulas:  # the same tuple again: found by identity next
                nxt = dataclasses.replace(nxt, formulas=state.formulas)
            if len(self._steps) >= WHAT_IF_LIMIT:
                self._steps.clear()
            self._steps[key] = (nxt.formulas, nxt.verdicts)
        else:
            nxt = MonitorSetState(state.names, hit[0], hit[1], labels, state.t + 1)
        return ToolMonitorState(nxt, sums, seen)

    def replay(self, memory: Any, messages: Sequence[Message], at: Sequence[int]) -> Any:
        """This rule's memory after the assistant messages of ``messages`` at the indices ``at``
        (ascending) were executed in turn, each after the messages before it: what :meth:`commit`
        gives message by message, without a trajectory, a step or a state object per message (a
        client's history replayed: linear, and cheap per message). As under the observer's
        commit, a :class:`~governor.core.CommitFailure` stays, and a failing commit becomes one."""
        if isinstance(memory, CommitFailure):
            return memory
        try:
            mem = self.initial_state(None) if memory is None else memory
            if not isinstance(mem, ToolMonitorState):
                raise TypeError(f"{self.name}: expected a ToolMonitorState, found {mem!r}")
            return self._replayed(mem, messages, at)
        except Exception as exc:
            return CommitFailure(f"{type(exc).__name__}: {exc}")

    def _replayed(
        self, mem: ToolMonitorState, messages: Sequence[Message], at: Sequence[int]
    ) -> ToolMonitorState:
        vocabulary, steps, monitors = self.vocabulary, self._steps, self.monitors
        state = mem.monitors
        names, formulas, verdicts, labels, t = (
            state.names, state.formulas, state.verdicts, state.labels, state.t
        )  # fmt: skip
        sums, seen = mem.sums, mem.seen
        by_sums = vocabulary.text_labels_read_sums_only
        text_in: Any = None  # the sums the labels of a text reply were last computed from
        text_out: tuple[frozenset[str], Mapping[str, float]] = (frozenset(), sums)
        history = messages if isinstance(messages, tuple) else tuple(messages)
        last: tuple[Any, Any, tuple[Any, Any]] = (None, None, (formulas, verdicts))
        for i in at:
            m = history[i]
            if by_sums and not m.tool_calls:  # a function of the sums alone: once per sums
                if sums is not text_in:
                    got, new, _ = vocabulary.labels(sums, TEXT_REPLY, (), seen)
                    text_in, text_out = sums, (got, sums if new == sums else new)
                now, sums = text_out
            else:
                # (this rule's own objects: no other rule reads them, so nothing is kept)
                now, sums, seen = vocabulary.labels(
                    sums, reply_of(m), History(history, i), seen, kept=False
                )
            if formulas is not last[0] or now is not last[1]:  # (a steady run: no hashing)
                hit = steps.get((formulas, now))
                if hit is None:
                    before = MonitorSetState(names, formulas, verdicts, labels, t)
                    nxt = monitors.step(before, now)
                    hit = (formulas if nxt.formulas == formulas else nxt.formulas, nxt.verdicts)
                    if len(steps) >= WHAT_IF_LIMIT:
                        steps.clear()
                    steps[(formulas, now)] = hit
                last = (formulas, now, hit)
            formulas, verdicts, labels, t = last[2][0], last[2][1], now, t + 1
        return ToolMonitorState(MonitorSetState(names, formulas, verdicts, labels, t), sums, seen)


def dialogue_of(traj: Trajectory) -> Dialogue:
    """The user and assistant text turns before the candidate, the last :data:`DIALOGUE_TURNS`
    of them among the last :data:`DIALOGUE_MESSAGES` messages (read from the end: a check's cost
    does not grow with the session). Built once per conversation: the overlays of a check share
    it."""
    messages = messages_of(traj.observation)
    hit = _DIALOGUES.get(id(messages))
    if hit is not None and hit[0] is messages:
        return hit[1]
    turns: list[Turn] = []
    n = len(messages)
    for j in range(n - 1, max(-1, n - 1 - DIALOGUE_MESSAGES), -1):
        m = messages[j]
        if m.content and m.role in ("user", "assistant"):
            turns.append(Turn(m.role, m.content))
            if len(turns) == DIALOGUE_TURNS:
                break
    dialogue = tuple(reversed(turns))
    if len(_DIALOGUES) >= _DIALOGUES_LIMIT:
        _DIALOGUES.clear()
    _DIALOGUES[id(messages)] = (messages, dialogue)
    return dialogue


class TextOverlayConstraint(OverlayConstraint):
    """One overlay over the text of a reply, the text beside tool calls included (a reply of
    calls only passes); it runs when ``checks.assistant`` names it (text is judged as text, with
    or without calls)."""

    violation = "overlay"

    def __init__(self, overlay: Overlay, checks: Checks | None = None) -> None:
        super().__init__(overlay, dialogue=dialogue_of)
        self.checks = checks or Checks()
        self.prefix_judgement = _overlay_judgement(overlay)
        self.pure = overlay.resources.embed is None  # an embedding is a model call

    def check(self, traj: Trajectory, action: Any) -> Verdict:
        if isinstance(action, Reply):
            text = action.content or ""
            if action.tool_calls and not text.strip():
                return Verdict.allow(self.name)
        else:
            text = str(action)
        if not self.checks.runs("assistant", self.name, "overlays"):
            return Verdict.allow(self.name)
        return self.overlay.judge(self.dialogue(traj), text)


def _overlay_judgement(overlay: Overlay) -> PrefixJudgement:
    """Prefixes for a growing feature bounded from above, the whole reply for one bounded from
    below, nothing before the whole otherwise (a condition, a window, a widening, a margin)."""
    plain = overlay.scope.kind == "turn" and overlay.condition is None and not overlay.permits
    if not (plain and overlay.margin is None and get_feature(overlay.feature).grows):
        return PrefixJudgement.HOLD
    if overlay.bounds.min is None:
        return PrefixJudgement.EACH_PREFIX
    return PrefixJudgement.WHOLE_REPLY if overlay.bounds.max is None else PrefixJudgement.HOLD


def guard_constraints(policy: GuardPolicy) -> list[Constraint]:
    """The checks of the calls as calls (:mod:`.call_checks`), the policy's LTL rules (hard),
    its safety value, then its overlays, highest priority first."""
    out: list[Constraint] = call_constraints(policy.tools)
    out += [ToolLTLConstraint(r, policy.vocabulary, policy.checks) for r in policy.ltl]
    if policy.safety_value is not None:  # see .value_constraint
        out.append(SafetyValueConstraint(policy.safety_value))
    ranked = sorted(policy.overlays, key=lambda o: -o.priority)
    out += [TextOverlayConstraint(o, policy.checks) for o in ranked if o.kind != "permissive"]
    return out
