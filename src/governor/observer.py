"""The observer: the runtime loop that decides what a base policy may execute.

Per step: the policy proposes ``n`` candidates, every constraint checks every candidate, the
arbiter forms the admissible set. An admissible candidate is executed (with implicit feedback when
a verdict was within tolerance); otherwise the policy regenerates under forced feedback, at most
``max_regenerations`` times, and sooner goes to the fallback when the same violation repeats (no
progress) or the step's time budget runs out. The fallback's action is executed once the hard
constraints admit it too (otherwise the step is deferred); a fallback that returns None stops the
episode (abort); no fallback means the step is deferred.

It fails closed: an exception or a timeout in the policy, a constraint or a backend becomes a
rejection with the error recorded, and the step ends in the fallback, never in an unchecked
action. Every LLM call made during a stage is counted in the decision's usage.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from functools import partial
from typing import Any, TypeVar

from governor.arbiter import Arbiter, violation_signature
from governor.config import ObserverConfig
from governor.core import (
    Attempt,
    Candidate,
    CommitFailure,
    Constraint,
    Decision,
    DecisionKind,
    Fallback,
    Feedback,
    NoMoreProposals,
    Policy,
    RejectionCause,
    Step,
    Trajectory,
    Verdict,
)
from governor.deadline import call_with_deadline
from governor.errors import ConfigError, EnvError, GuardTimeout
from governor.feedback import FeedbackWriter, TemplateFeedbackWriter
from governor.on_loop import blocking, on_loop
from governor.telemetry import record_usage, span
from governor.usage import Usage, metered

T = TypeVar("T")


class _StepLog:
    """Latency and LLM usage per stage, accumulated over one step."""

    def __init__(self) -> None:
        self.latency: dict[str, float] = {}
        self.usage: dict[str, Usage] = {}
        self.errors: list[str] = []

    def run(self, stage: str, fn: Callable[[], T], timeout_s: float | None) -> T:
        start = time.perf_counter()
        with span(stage) as current, metered() as meter:
            try:
                return call_with_deadline(fn, timeout_s, stage)
            finally:
                self.latency[stage] = self.latency.get(stage, 0.0) + time.perf_counter() - start
                # calls still running belong to a stage given up on: made, so counted
                used, late = meter.snapshot()
                used = used + Usage(calls=late, abandoned=late) if late else used
                if current is not None:
                    record_usage(current, used)
                if used.calls or used.failed:
                    before = self.usage.get(stage)
                    self.usage[stage] = used if before is None else before + used


class Observer:
    """Policy + constraints + arbiter + feedback writer + fallback, within explicit bounds."""

    def __init__(
        self,
        policy: Policy,
        constraints: Sequence[Constraint] = (),
        fallback: Fallback | None = None,
        *,
        config: ObserverConfig | None = None,
        feedback: FeedbackWriter | None = None,
        arbiter: Arbiter | None = None,
    ) -> None:
        names = [c.name for c in constraints]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise ConfigError(f"constraint names: expected unique names, found {duplicates} twice")
        self.policy = policy
        self.constraints = tuple(constraints)
        self.fallback = fallback
        self.config = config or ObserverConfig()
        self.arbiter = arbiter or Arbiter(self.config)
        self.feedback = feedback or TemplateFeedbackWriter()

    def start(self, observation: Any, info: Mapping[str, Any] | None = None) -> Trajectory:
        """The trajectory of a new episode: each constraint's initial state in memory."""
        memory = {c.name: c.initial_state(observation) for c in self.constraints}
        return Trajectory(observation, memory=memory, info=info or {})

    def step(self, traj: Trajectory) -> Decision:
        """Decide the next action for ``traj``. Never raises for a failing plug-in.

        An interrupt (``KeyboardInterrupt``, ``SystemExit``), whether the user's or raised inside
        a plug-in, is not a plug-in failure: it propagates and stops the run. The step then
        returns no decision, so no action, checked or not, is executed.
        """
        with span("step") as current:
            decision = self._step(traj)
            if current is not None:
                current.set_attribute("governor.decision", decision.kind.value)
                current.set_attribute("governor.cause", str(decision.cause or ""))
                current.set_attribute("governor.regenerations", decision.regenerations)
                record_usage(current, decision.total_usage)
            return decision

    def _step(self, traj: Trajectory) -> Decision:
        cfg = self.config
        log = _StepLog()
        deadline = None if cfg.time_budget_s is None else time.monotonic() + cfg.time_budget_s
        attempts: list[Attempt] = []
        feedback = traj.feedback
        previous: frozenset[str] | None = None
        for n in range(cfg.max_regenerations + 1):
            try:
                attempt, failure = self._attempt(traj, feedback, log, deadline)
            except NoMoreProposals as stop:
                if not attempts:
                    return self._fall_back(traj, attempts, _failure("policy", stop, log), log)
                last = attempts[-1].cause
                return self._fall_back(traj, attempts, (last, f"{last}; {stop}"), log)
            if attempt is not None:
                attempts.append(attempt)
            if failure is not None:
                return self._fall_back(traj, attempts, failure, log)
            assert attempt is not None
            if attempt.chosen is not None:
                return self._execute(attempt, attempts, log, n)
            signature = violation_signature(attempt.candidates, attempt.verdicts)
            if cfg.stop_on_repeat and signature == previous:
                why = f"no progress: the same violation twice ({', '.join(sorted(signature))})"
                return self._fall_back(traj, attempts, (attempt.cause, why), log)
            if n == cfg.max_regenerations:
                why = f"{attempt.cause}" + (f" after {n} regeneration(s)" if n else "")
                return self._fall_back(traj, attempts, (attempt.cause, why), log)
            if deadline is not None and time.monotonic() >= deadline:
                why = f"time budget of {cfg.time_budget_s} s spent"
                return self._fall_back(traj, attempts, (RejectionCause.TIMEOUT, why), log)
            previous = signature
            problems = [f"reply {c.text!r}: {c.error}" for c in attempt.candidates if not c.valid]
            rejected = [v for row in attempt.verdicts for v in row]
            try:
                feedback = log.run(
                    "feedback", partial(self.feedback.forced, rejected, problems), _left(deadline)
                )
            except Exception as exc:
                return self._fall_back(traj, attempts, _failure("feedback", exc, log), log)
        raise AssertionError("unreachable: the loop returns on its last attempt")

    def _attempt(
        self, traj: Trajectory, feedback: Feedback | None, log: _StepLog, deadline: float | None
    ) -> tuple[Attempt | None, tuple[RejectionCause, str] | None]:
        """One proposal and its judgement; a failed stage is returned as (cause, reason)."""
        try:
            candidates = log.run("propose", lambda: self._propose(traj, feedback), _left(deadline))
        except NoMoreProposals:
            raise
        except Exception as exc:
            return None, _failure("policy", exc, log)
        rows: list[tuple[Verdict, ...]] = []
        check = partial(self._check, traj, candidates, rows)
        try:
            if on_loop() and _text_size(candidates) > LOOP_CHECK_MAX_CHARS:
                # checks whose time grows with a text the model wrote: on a worker thread (the
                # event loop goes on), the stage abandoned at the deadline as off the loop
                blocking(log.run, "check", check, _left(deadline))
            else:
                log.run("check", check, _left(deadline))
        except Exception as exc:
            cause, reason = _failure("constraints", exc, log)
            padded = _pad(rows, candidates, self.constraints)
            return Attempt(candidates, padded, feedback, None, cause), (cause, reason)
        result = self.arbiter.arbitrate(candidates, rows)
        failed = [v for row in rows for v in row if v.error is not None]
        if result.chosen is None and failed:
            # a check that could not be made is a stage error, not a violation to regenerate
            # against: the policy is never told the internals, and the step falls back
            log.errors.extend(f"constraint {v.constraint}: {v.error}" for v in failed)
            names = ", ".join(sorted({v.constraint for v in failed}))
            cause, reason = RejectionCause.ERROR, f"check failed ({names})"
            return Attempt(candidates, tuple(rows), feedback, None, cause), (cause, reason)
        return Attempt(candidates, tuple(rows), feedback, result.chosen, result.cause), None

    def _execute(
        self, attempt: Attempt, attempts: list[Attempt], log: _StepLog, regenerations: int
    ) -> Decision:
        assert attempt.chosen is not None
        verdicts = attempt.verdicts[attempt.chosen]
        try:  # advisory: the action is admissible whether or not a note can be written
            implicit = log.run("feedback", lambda: self.feedback.implicit(verdicts), None)
        except Exception as exc:
            _failure("feedback", exc, log)
            implicit = None
        return Decision(
            DecisionKind.EXECUTE_WITH_FEEDBACK if implicit else DecisionKind.EXECUTE,
            attempt.candidates[attempt.chosen].action,
            verdicts,
            implicit,
            f"admissible after {regenerations} regeneration(s)" if regenerations else "admissible",
            None,
            tuple(attempts),
            log.latency,
            log.usage,
            tuple(log.errors),
        )

    def commit(
        self,
        traj: Trajectory,
        decision: Decision,
        next_observation: Any,
        info: Mapping[str, Any] | None = None,
    ) -> Trajectory:
        """Advance ``traj`` by the executed ``decision``; each constraint commits its state.

        A constraint whose commit raises keeps a :class:`CommitFailure` in its memory slot and
        rejects every later candidate (fail closed).
        """
        if not decision.executed:
            raise EnvError(f"commit: expected an executed decision, found {decision.kind}")
        step = Step(traj.observation, decision.action, next_observation, decision.kind, info or {})
        memory = dict(traj.memory)
        for c in self.constraints:
            if isinstance(memory.get(c.name), CommitFailure):
                continue
            try:
                memory[c.name] = c.commit(traj, step)
            except Exception as exc:
                memory[c.name] = CommitFailure(f"{type(exc).__name__}: {exc}")
        with_note = decision.kind is DecisionKind.EXECUTE_WITH_FEEDBACK
        return traj.advance(step, memory, decision.feedback if with_note else None)

    # ------------------------------------------------------------------ stages

    def _propose(self, traj: Trajectory, feedback: Feedback | None) -> tuple[Candidate[Any], ...]:
        proposed = self.policy.propose(traj, feedback, self.config.n_candidates)
        candidates = tuple(proposed)
        if not candidates or not all(isinstance(c, Candidate) for c in candidates):
            found = repr(proposed)[:200]
            raise TypeError(f"{self.policy.name}.propose: expected Candidates, found {found}")
        return candidates[: self.config.n_candidates]

    def _check(
        self,
        traj: Trajectory,
        candidates: Sequence[Candidate[Any]],
        rows: list[tuple[Verdict, ...]],
    ) -> None:
        """Fill ``rows`` (one per candidate) as checks finish: a timeout keeps what was done."""
        for cand in candidates:
            rows.append(_verdicts(self.constraints, traj, cand.action) if cand.valid else ())

    def verdicts(
        self, traj: Trajectory, action: Any, constraints: Sequence[Constraint] | None = None
    ) -> tuple[Verdict, ...]:
        """Every constraint's verdict on ``action`` after ``traj`` (no policy call, no time
        budget): a constraint that raises, answers garbage or lost its state fails closed."""
        return _verdicts(self.constraints if constraints is None else constraints, traj, action)

    def _fall_back(
        self,
        traj: Trajectory,
        attempts: list[Attempt],
        why: tuple[RejectionCause | None, str],
        log: _StepLog,
    ) -> Decision:
        cause, reason = why
        last = attempts[-1].verdicts if attempts else ()
        verdicts = tuple(v for row in last for v in row if not v.admissible)

        def decide(kind: DecisionKind, action: Any, text: str) -> Decision:
            return Decision(
                kind,
                action,
                verdicts,
                None,
                text,
                cause,
                tuple(attempts),
                log.latency,
                log.usage,
                tuple(log.errors),
            )

        if self.fallback is None:
            return decide(DecisionKind.DEFER, None, f"{reason}; no fallback configured: deferred")
        fallback = self.fallback
        budget = self.config.fallback_budget_s
        try:
            action = log.run("fallback", lambda: fallback.act(traj, verdicts), budget)
        except Exception as exc:
            _failure("fallback", exc, log)
            return decide(DecisionKind.ABORT, None, f"{reason}; fallback failed: {log.errors[-1]}")
        if action is None:
            return decide(DecisionKind.ABORT, None, f"{reason}; {fallback.name} stops")
        refused = self._refused_by_hard_constraints(traj, action, log)
        if refused:
            names = ", ".join(v.constraint for v in refused)
            text = f"{reason}; {fallback.name}'s action {action!r} refused by {names}: deferred"
            return replace(decide(DecisionKind.DEFER, None, text), verdicts=verdicts + refused)
        return decide(DecisionKind.FALLBACK, action, f"{reason}; {fallback.name} acts")

    def _refused_by_hard_constraints(
        self, traj: Trajectory, action: Any, log: _StepLog
    ) -> tuple[Verdict, ...]:
        """The verdicts of the hard constraints that reject the fallback's ``action``."""
        hard = [c for c in self.constraints if c.hard]
        if not hard:
            return ()

        def check() -> tuple[Verdict, ...]:
            return self.verdicts(traj, action, hard)

        try:
            verdicts = log.run("fallback_check", check, self.config.fallback_budget_s)
        except Exception as exc:
            _failure("fallback_check", exc, log)
            verdicts = tuple(Verdict.failed(c.name, "not checked in time") for c in hard)
        return tuple(v for v in verdicts if not v.admissible)


LOOP_CHECK_MAX_CHARS = 4096
"""The most characters of text an attempt's candidates may hold for their checks to run on the
event loop when the step runs there (:mod:`governor.on_loop`); longer ones (a model, or a hostile
upstream, may send megabytes) are checked on a worker thread. Text checks cost up to about 15 µs
a character: 4,096 holds the loop for at most about 60 ms."""


def _text_size(candidates: Sequence[Candidate[Any]]) -> int:
    """The characters of text in ``candidates``: each one's raw text, or its action's content and
    tool-call arguments, whichever is longer."""
    total = 0
    for cand in candidates:
        action = cand.action
        size = len(action) if isinstance(action, str) else 0
        content = getattr(action, "content", None)
        if isinstance(content, str):
            size += len(content)
        calls = getattr(action, "tool_calls", None)
        if isinstance(calls, Sequence):
            for call in calls:
                arguments = getattr(call, "arguments", None)
                size += len(arguments) if isinstance(arguments, str) else 0
        raw = len(cand.text) if isinstance(cand.text, str) else 0
        total += max(size, raw)
    return total


def _verdicts(
    constraints: Sequence[Constraint], traj: Trajectory, action: Any
) -> tuple[Verdict, ...]:
    """Each of ``constraints``' verdicts on ``action`` after ``traj``, in order; one that raises,
    answers something other than a Verdict or lost its state in a failed commit fails closed."""
    memory = traj.memory
    out: list[Verdict] = []
    for constraint in constraints:
        name = constraint.name
        state = memory.get(name)
        if isinstance(state, CommitFailure):
            out.append(Verdict.failed(name, f"state lost in a failed commit: {state.error}"))
            continue
        try:
            verdict = constraint.check(traj, action)
        except Exception as exc:
            verdict = Verdict.failed(name, exc)
        else:
            if not isinstance(verdict, Verdict):
                found = type(verdict).__name__
                verdict = Verdict.failed(name, f"check: expected a Verdict, found {found}")
        out.append(verdict)
    return tuple(out)


def _left(deadline: float | None) -> float | None:
    return None if deadline is None else deadline - time.monotonic()


def _failure(stage: str, exc: BaseException, log: _StepLog) -> tuple[RejectionCause, str]:
    log.errors.append(f"{stage}: {type(exc).__name__}: {exc}")
    cause = RejectionCause.TIMEOUT if isinstance(exc, GuardTimeout) else RejectionCause.ERROR
    return cause, f"{stage} failed: {type(exc).__name__}: {exc}"


def _pad(
    rows: list[tuple[Verdict, ...]],
    candidates: Sequence[Candidate[Any]],
    constraints: Sequence[Constraint],
) -> tuple[tuple[Verdict, ...], ...]:
    """Rows for a check stage that timed out: unfinished checks become failed verdicts."""
    done = list(rows)
    while len(done) < len(candidates):
        done.append(tuple(Verdict.failed(c.name, "timed out") for c in constraints))
    return tuple(done)
