"""The runtime loop: execution, feedback, bounded regeneration, fallback, failing closed."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from governor.arbiter import Arbiter
from governor.backends.base import Message
from governor.backends.scripted import ScriptedBackend
from governor.config import ObserverConfig
from governor.core import (
    Candidate,
    CommitFailure,
    Constraint,
    DecisionKind,
    Fallback,
    Feedback,
    FeedbackKind,
    NoMoreProposals,
    Policy,
    RejectionCause,
    Severity,
    Step,
    Trajectory,
    Verdict,
)
from governor.deadline import wait_for_abandoned
from governor.errors import ConfigError, EnvError
from governor.feedback import TemplateFeedbackWriter
from governor.observer import Observer


class ListPolicy(Policy):
    """Proposes from a script of candidate lists; records the feedback it was given."""

    name = "listed"

    def __init__(self, script: Sequence[Sequence[Any]] | Callable[[Feedback | None], list[Any]]):
        self.script = script
        self.calls = 0
        self.feedback_seen: list[Feedback | None] = []

    def propose(self, traj: Trajectory, feedback: Feedback | None, n: int) -> list[Candidate[Any]]:
        self.feedback_seen.append(feedback)
        if callable(self.script):
            items = self.script(feedback)
        else:
            items = list(self.script[min(self.calls, len(self.script) - 1)])
        self.calls += 1
        return [c if isinstance(c, Candidate) else Candidate(c) for c in items]


class Below(Constraint):
    """Admits numbers below a limit; within ``tolerance`` past it, admits with a note."""

    def __init__(self, limit: float, name: str = "below", tolerance: float = 0.0):
        self.limit, self.name, self.tolerance = limit, name, tolerance

    def check(self, traj: Trajectory, action: Any) -> Verdict:
        over = float(action) - self.limit
        text = f"{action} is {over:g} past {self.limit:g}"
        if over <= 0:
            return Verdict.allow(self.name, margin=-over)
        if over <= self.tolerance:
            return Verdict.allow(self.name, deviation=over, descriptor=text)
        return Verdict.reject(self.name, over, text)


class Counting(Constraint):
    """Keeps the number of executed steps in its memory slot."""

    name = "counting"

    def initial_state(self, observation: Any) -> int:
        return 0

    def check(self, traj: Trajectory, action: Any) -> Verdict:
        return Verdict.allow(self.name)

    def commit(self, traj: Trajectory, step: Step) -> int:
        return int(traj.memory[self.name]) + 1


class Raising(Constraint):
    name = "raising"

    def check(self, traj: Trajectory, action: Any) -> Verdict:
        raise RuntimeError("sensor offline")


class Slow(Constraint):
    name = "slow"

    def check(self, traj: Trajectory, action: Any) -> Verdict:
        time.sleep(2.0)
        return Verdict.allow(self.name)


class Constant(Fallback):
    name = "constant"

    def __init__(self, action: Any = 0):
        self.action = action
        self.seen: list[Sequence[Verdict]] = []

    def act(self, traj: Trajectory, verdicts: Sequence[Verdict]) -> Any:
        self.seen.append(verdicts)
        return self.action


def decide(
    policy: Policy, constraints: Sequence[Constraint], fallback: Fallback | None = None, **cfg: Any
):
    observer = Observer(policy, constraints, fallback, config=ObserverConfig(**cfg))
    return observer, observer.step(observer.start("obs"))


def test_admissible_candidate_is_executed_with_its_verdicts():
    _, d = decide(ListPolicy([[3]]), [Below(5)], Constant())
    assert d.kind is DecisionKind.EXECUTE and d.action == 3
    assert [v.constraint for v in d.verdicts] == ["below"] and d.verdicts[0].margin == 2
    assert not d.intervened and d.regenerations == 0
    assert set(d.latency) == {"propose", "check", "feedback"}


def test_first_admissible_in_preference_order_is_chosen():
    _, d = decide(ListPolicy([[9, 4, 1]]), [Below(5)], Constant(), n_candidates=3)
    assert d.action == 4 and d.attempts[0].chosen == 1


def test_within_tolerance_executes_with_implicit_feedback_for_the_next_step():
    policy = ListPolicy([[5.5], [1]])
    observer = Observer(policy, [Below(5, tolerance=1)], Constant())
    traj = observer.start("obs")
    d = observer.step(traj)
    assert d.kind is DecisionKind.EXECUTE_WITH_FEEDBACK and d.action == 5.5
    assert d.feedback is not None and d.feedback.kind is FeedbackKind.IMPLICIT
    assert "5.5 is 0.5 past 5" in d.feedback.text
    traj = observer.commit(traj, d, "obs2")
    assert traj.feedback == d.feedback
    observer.step(traj)
    assert policy.feedback_seen[-1] == d.feedback


def test_rejection_regenerates_under_forced_feedback_until_admissible():
    def script(feedback: Feedback | None) -> list[Any]:
        return [2] if feedback is not None and "past 5" in feedback.text else [8]

    policy = ListPolicy(script)
    _, d = decide(policy, [Below(5)], Constant())
    assert d.kind is DecisionKind.EXECUTE and d.action == 2 and d.regenerations == 1
    forced = policy.feedback_seen[1]
    assert (
        forced is not None
        and forced.kind is FeedbackKind.FORCED
        and forced.constraints == ("below",)
    )
    assert d.intervened


def test_regeneration_is_bounded_then_fallback():
    policy = ListPolicy([[6], [7], [8], [9], [10], [11]])
    fallback = Constant(-1)
    _, d = decide(policy, [Below(5)], fallback, max_regenerations=3, stop_on_repeat=False)
    assert policy.calls == 4 and len(d.attempts) == 4
    assert d.kind is DecisionKind.FALLBACK and d.action == -1
    assert d.cause is RejectionCause.EMPTY and "after 3 regeneration(s)" in d.reason
    assert [v.constraint for v in fallback.seen[0]] == ["below"]


def test_same_violation_twice_goes_to_fallback_early():
    policy = ListPolicy([[6]])
    _, d = decide(policy, [Below(5)], Constant(), max_regenerations=3)
    assert policy.calls == 2 and d.kind is DecisionKind.FALLBACK and "no progress" in d.reason


def test_failing_policy_falls_back_with_the_error_recorded():
    def broken(feedback: Feedback | None) -> list[Any]:
        raise ConnectionError("endpoint down")

    _, d = decide(ListPolicy(broken), [Below(5)], Constant(0))
    assert d.kind is DecisionKind.FALLBACK and d.action == 0
    assert d.cause is RejectionCause.ERROR and "endpoint down" in d.errors[0]
    assert d.attempts == ()


def test_a_policy_with_no_more_proposals_falls_back_for_the_last_cause_not_an_error():
    def once(feedback: Feedback | None) -> list[Any]:
        if feedback is not None:
            raise NoMoreProposals("text was released")
        return [9]

    _, d = decide(ListPolicy(once), [Below(5)], Constant(0), max_regenerations=3)
    assert d.kind is DecisionKind.FALLBACK and d.action == 0 and len(d.attempts) == 1
    assert d.cause is RejectionCause.EMPTY and d.errors == ()
    assert d.reason.startswith(f"{RejectionCause.EMPTY}; text was released")
    first = ListPolicy(lambda feedback: (_ for _ in ()).throw(NoMoreProposals("nothing to give")))
    _, d = decide(first, [Below(5)], Constant(0))
    assert d.kind is DecisionKind.FALLBACK and d.cause is RejectionCause.ERROR  # before any attempt
    assert "nothing to give" in d.errors[0]


def test_policy_returning_garbage_is_an_error_not_an_action():
    class Garbage(Policy):
        def propose(self, traj: Trajectory, feedback: Feedback | None, n: int) -> Any:
            return [7]  # bare actions, not Candidates

    _, d = decide(Garbage(), [Below(5)], Constant(0))
    assert (
        d.kind is DecisionKind.FALLBACK and d.action == 0 and "expected Candidates" in d.errors[0]
    )


@pytest.mark.parametrize("mode", ["intersection", "majority", "weighted"])
def test_raising_constraint_vetoes_in_every_arbitration_mode(mode: str):
    constraints = [Below(5, "a"), Below(5, "b"), Raising()]
    _, d = decide(ListPolicy([[1]]), constraints, Constant(0), arbitration=mode)
    assert d.kind is DecisionKind.FALLBACK
    failed = d.attempts[0].verdicts[0][2]
    assert failed.error == "RuntimeError: sensor offline" and not failed.admissible


def test_slow_constraint_times_out_into_the_fallback():
    start = time.perf_counter()
    _, d = decide(ListPolicy([[1]]), [Slow()], Constant(0), time_budget_s=0.2)
    assert time.perf_counter() - start < 1.5
    assert d.kind is DecisionKind.FALLBACK and d.cause is RejectionCause.TIMEOUT
    assert d.attempts[0].verdicts[0][0].error == "timed out"


def test_slow_policy_times_out_into_the_fallback():
    def slow(feedback: Feedback | None) -> list[Any]:
        time.sleep(2.0)
        return [1]

    _, d = decide(ListPolicy(slow), [], Constant(0), time_budget_s=0.2)
    assert d.kind is DecisionKind.FALLBACK and d.cause is RejectionCause.TIMEOUT


def test_a_model_call_still_running_when_its_stage_is_given_up_on_is_counted():
    release = threading.Event()

    def slow_reply(messages: Any) -> str:
        release.wait(5.0)
        return "late"

    class Asking(Policy):
        def __init__(self) -> None:
            self.backend = ScriptedBackend([slow_reply])

        def propose(self, traj: Trajectory, feedback: Feedback | None, n: int) -> list[Any]:
            reply = self.backend.chat([Message("user", "hi")])
            return [Candidate(reply.completions[0].text)]

    try:
        _, d = decide(Asking(), [], Constant(0), time_budget_s=0.2)
    finally:
        release.set()
        wait_for_abandoned(5.0)
    assert d.kind is DecisionKind.FALLBACK and d.cause is RejectionCause.TIMEOUT
    used = d.usage["propose"]
    assert used.calls == 1 and used.abandoned == 1 and used.completion_tokens == 0
    assert d.total_usage.calls == 1  # made, so counted, though the step did not wait for it


def test_a_call_that_ends_in_time_is_not_abandoned():
    class Asking(Policy):
        backend = ScriptedBackend(["quick"])

        def propose(self, traj: Trajectory, feedback: Feedback | None, n: int) -> list[Any]:
            return [Candidate(self.backend.chat([Message("user", "hi")]).completions[0].text)]

    _, d = decide(Asking(), [], Constant(0), time_budget_s=5.0)
    assert d.usage["propose"].calls == 1 and d.usage["propose"].abandoned == 0


def test_without_fallback_the_step_is_deferred():
    _, d = decide(ListPolicy([[9]]), [Below(5)], None)
    assert d.kind is DecisionKind.DEFER and d.action is None and not d.executed


def test_fallback_that_stops_aborts():
    _, d = decide(ListPolicy([[9]]), [Below(5)], Constant(None))
    assert d.kind is DecisionKind.ABORT and not d.executed and "stops" in d.reason


def test_fallback_that_raises_aborts_with_the_error():
    class Broken(Fallback):
        def act(self, traj: Trajectory, verdicts: Sequence[Verdict]) -> Any:
            raise ValueError("no recovery")

    _, d = decide(ListPolicy([[9]]), [Below(5)], Broken())
    assert d.kind is DecisionKind.ABORT and "no recovery" in d.reason and d.action is None


def test_invalid_candidates_are_never_shown_to_constraints_and_feed_back():
    seen: list[Any] = []

    class Recording(Constraint):
        name = "recording"

        def check(self, traj: Trajectory, action: Any) -> Verdict:
            seen.append(action)
            return Verdict.allow(self.name)

    policy = ListPolicy([[Candidate.invalid("D", "expected one of A, B, C; found 'D'")], [2]])
    _, d = decide(policy, [Recording()], Constant())
    assert seen == [2] and d.action == 2 and d.attempts[0].verdicts == ((),)
    assert d.attempts[0].cause is RejectionCause.EMPTY
    forced = policy.feedback_seen[1]
    assert forced is not None and "found 'D'" in forced.text


def test_conflicting_constraints_are_named():
    policy = ListPolicy([[1, 9]])
    high = Below(-100, "high")

    class Above(Constraint):
        name = "above"

        def check(self, traj: Trajectory, action: Any) -> Verdict:
            if action >= 5:
                return Verdict.allow(self.name)
            return Verdict.reject(self.name, 5 - action, "too small")

    _, d = decide(policy, [Below(5), Above()], Constant(), n_candidates=2, max_regenerations=0)
    assert d.attempts[0].cause is RejectionCause.CONFLICT
    _, d = decide(
        ListPolicy([[1, 9]]), [high, Above()], Constant(), n_candidates=2, max_regenerations=0
    )
    assert d.attempts[0].cause is RejectionCause.EMPTY


def test_low_confidence_rejects_an_admissible_candidate():
    class Unsure(Constraint):
        name = "unsure"

        def check(self, traj: Trajectory, action: Any) -> Verdict:
            return Verdict.allow(self.name, confidence=0.4)

    _, d = decide(
        ListPolicy([[1]]), [Unsure()], Constant(0), min_confidence=0.5, max_regenerations=0
    )
    assert d.kind is DecisionKind.FALLBACK and d.cause is RejectionCause.LOW_CONFIDENCE


def test_majority_and_weighted_voting():
    three = [Below(5, "a"), Below(5, "b"), Below(0, "c")]
    _, d = decide(ListPolicy([[3]]), three, Constant(-1), arbitration="majority")
    assert d.action == 3  # two of three admit
    _, d = decide(
        ListPolicy([[3]]), three, Constant(-1), arbitration="intersection", max_regenerations=0
    )
    assert d.action == -1
    weights = {"a": 1.0, "b": 1.0, "c": 5.0}
    _, d = decide(ListPolicy([[3]]), three, Constant(-1), arbitration="weighted", weights=weights)
    assert d.action == -1  # 2/7 of the weight is below the quorum


def test_disagreement_lowers_confidence_in_voting_modes():
    three = [Below(5, "a"), Below(5, "b"), Below(0, "c")]
    cfg = {"arbitration": "majority", "min_confidence": 0.9, "max_regenerations": 0}
    _, d = decide(ListPolicy([[3]]), three, Constant(-1), **cfg)
    assert d.action == -1 and d.cause is RejectionCause.LOW_CONFIDENCE
    _, d = decide(ListPolicy([[-3]]), three, Constant(-1), **cfg)
    assert d.action == -3  # unanimous


def test_commit_advances_constraint_memory_without_touching_the_old_trajectory():
    observer = Observer(ListPolicy([[1]]), [Counting()], Constant())
    t0 = observer.start("o0")
    t1 = observer.commit(t0, observer.step(t0), "o1", {"k": 1})
    t2 = observer.commit(t1, observer.step(t1), "o2")
    assert (t0.memory["counting"], t1.memory["counting"], t2.memory["counting"]) == (0, 1, 2)
    assert t0.t == 0 and t2.t == 2 and t2.observation == "o2" and t1.info["k"] == 1
    assert t2.steps[0].observation == "o0" and t2.steps[0].next_observation == "o1"
    with pytest.raises(TypeError):
        t2.memory["counting"] = 5  # type: ignore[index]


def test_failed_commit_poisons_the_constraint_so_it_rejects_everything():
    class BadCommit(Below):
        def commit(self, traj: Trajectory, step: Step) -> Any:
            raise KeyError("lost")

    observer = Observer(ListPolicy([[1]]), [BadCommit(5)], Constant(0))
    traj = observer.start("o")
    traj = observer.commit(traj, observer.step(traj), "o1")
    assert isinstance(traj.memory["below"], CommitFailure)
    d = observer.step(traj)
    assert (
        d.kind is DecisionKind.FALLBACK
        and "failed commit" in d.attempts[0].verdicts[0][0].descriptor
    )


def test_commit_of_an_unexecuted_decision_is_refused():
    observer, d = decide(ListPolicy([[9]]), [Below(5)], None)
    with pytest.raises(EnvError, match="expected an executed decision"):
        observer.commit(observer.start("o"), d, "o1")


def test_duplicate_constraint_names_are_refused():
    with pytest.raises(ConfigError, match="unique names"):
        Observer(ListPolicy([[1]]), [Below(1), Below(2)])


def test_every_llm_call_is_counted_per_stage_even_inside_constraints():
    backend = ScriptedBackend(["3", "ok"])

    class LLMPolicy(Policy):
        def propose(
            self, traj: Trajectory, feedback: Feedback | None, n: int
        ) -> list[Candidate[Any]]:
            return [Candidate(int(backend.chat("pick a number").text))]

    class LLMJudge(Constraint):
        name = "judge"

        def check(self, traj: Trajectory, action: Any) -> Verdict:
            backend.chat(f"is {action} fine?")
            return Verdict.allow(self.name)

    _, d = decide(LLMPolicy(), [LLMJudge()], Constant())
    assert d.usage["propose"].calls == 1 and d.usage["check"].calls == 1
    assert d.total_usage.calls == 2 and d.total_usage.tokens > 0


def test_failed_llm_calls_are_counted_too():
    backend = ScriptedBackend([])

    class LLMPolicy(Policy):
        def propose(
            self, traj: Trajectory, feedback: Feedback | None, n: int
        ) -> list[Candidate[Any]]:
            return [Candidate(backend.chat("hello").text)]

    _, d = decide(LLMPolicy(), [], Constant(0))
    assert d.kind is DecisionKind.FALLBACK and d.usage["propose"].calls == 1


@settings(max_examples=60, deadline=None)
@given(
    table=st.lists(st.lists(st.booleans(), min_size=1, max_size=3), min_size=1, max_size=4),
    mode=st.sampled_from(["intersection", "majority", "weighted"]),
)
def test_never_executes_a_candidate_outside_the_admissible_set(table: list[list[bool]], mode: str):
    width = len(table[0])
    table = [(row + [True] * width)[:width] for row in table]

    class Judge(Constraint):
        def __init__(self, j: int):
            self.j, self.name = j, f"c{j}"

        def check(self, traj: Trajectory, action: Any) -> Verdict:
            ok = table[action][self.j]
            return Verdict.allow(self.name) if ok else Verdict.reject(self.name, 1.0, "no")

    policy = ListPolicy([list(range(len(table)))])
    _, d = decide(
        policy,
        [Judge(j) for j in range(width)],
        Constant(-1),
        n_candidates=len(table),
        arbitration=mode,
    )
    if d.action == -1:
        assert d.kind is DecisionKind.FALLBACK
        return
    row = table[d.action]
    votes = sum(row)
    assert all(row) if mode == "intersection" else 2 * votes > width
    assert all(table[i][j] or mode != "intersection" for i in [d.action] for j in range(width))


@pytest.mark.parametrize(
    "field, value",
    [
        ("admissible", "false"),
        ("admissible", 1),
        ("constraint", 3),
        ("severity", 2),
        ("deviation", "0.5"),
        ("deviation", True),
        ("confidence", None),
        ("margin", "1"),
    ],
)
def test_verdict_fields_are_validated_at_construction(field: str, value: object) -> None:
    fields: dict[str, object] = {"constraint": "c", "admissible": False, field: value}
    with pytest.raises(ValueError, match=f"verdict {field}: expected"):
        Verdict(**fields)


def test_verdict_accepts_numpy_numbers() -> None:
    import numpy as np

    v = Verdict.reject("c", np.float32(0.5), "too close", margin=np.float64(-0.5))
    assert not v.admissible and v.deviation == 0.5


def test_a_raising_constraint_is_a_stage_error_kept_out_of_the_prompt():
    policy = ListPolicy([[1], [1]])
    _, d = decide(policy, [Below(5), Raising()], Constant(0))
    assert d.kind is DecisionKind.FALLBACK and d.cause is RejectionCause.ERROR
    assert any("sensor offline" in e for e in d.errors)
    assert policy.calls == 1  # no regeneration against a check that could not be made
    assert all(f is None or "sensor offline" not in f.text for f in policy.feedback_seen)


def test_feedback_never_carries_the_internals_of_a_failed_check():
    note = TemplateFeedbackWriter().forced([Verdict.failed("db", RuntimeError("password=hunter2"))])
    assert "hunter2" not in note.text and "db could not be checked" in note.text


def test_the_fallback_action_must_pass_the_hard_constraints():
    class HardBelow(Below):
        hard = True

    _, soft = decide(ListPolicy([[9]]), [Below(5)], Constant(7))
    assert soft.kind is DecisionKind.FALLBACK and soft.action == 7
    _, hard = decide(ListPolicy([[9]]), [HardBelow(5)], Constant(7))
    assert hard.kind is DecisionKind.DEFER and hard.action is None and not hard.executed
    assert "refused by below" in hard.reason and "fallback_check" in hard.latency
    _, safe = decide(ListPolicy([[9]]), [HardBelow(5)], Constant(2))
    assert safe.kind is DecisionKind.FALLBACK and safe.action == 2


def test_a_hard_constraint_that_raises_on_the_fallback_defers():
    class HardRaising(Raising):
        hard = True

    _, d = decide(ListPolicy([[1]]), [HardRaising()], Constant(0))
    assert d.kind is DecisionKind.DEFER and not d.executed


@pytest.mark.parametrize("interrupt", [KeyboardInterrupt, SystemExit])
@pytest.mark.parametrize("budget", [None, 5.0])
def test_an_interrupt_in_a_constraint_stops_the_step_without_an_action(interrupt, budget):
    class Interrupting(Constraint):
        name = "interrupting"

        def check(self, traj: Trajectory, action: Any) -> Verdict:
            raise interrupt()

    observer = Observer(ListPolicy([[1]]), [Interrupting()], Constant(0))
    observer.config = ObserverConfig(time_budget_s=budget)
    with pytest.raises(interrupt):
        observer.step(observer.start("o"))


def test_a_call_refused_by_an_open_circuit_is_counted_as_failed():
    from governor.errors import BackendUnavailable
    from governor.usage import Usage, record_llm_call

    class FailsFast(Policy):
        name = "fails_fast"

        def propose(self, traj: Trajectory, feedback: Feedback | None, n: int) -> list[Any]:
            record_llm_call(Usage(calls=0, failed=1))  # what a backend records for a refused call
            raise BackendUnavailable("circuit open")

    _, d = decide(FailsFast(), [], Constant(0))
    assert d.kind is DecisionKind.FALLBACK
    assert d.total_usage.failed == 1 and d.total_usage.calls == 0


_VERDICTS = st.one_of(
    st.builds(
        lambda name, conf: Verdict.allow(name, confidence=conf),
        st.sampled_from("abc"),
        st.sampled_from([0.0, 0.2, 0.5, 0.9, 1.0]),
    ),
    st.builds(lambda name: Verdict.allow(name), st.sampled_from("abc")),
    st.builds(
        lambda name, dev: Verdict.reject(name, dev, "no"),
        st.sampled_from("abc"),
        st.sampled_from([0.0, 1.0, 2.5]),
    ),
    st.builds(lambda name: Verdict.failed(name, "broken"), st.sampled_from("abc")),
)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(st.booleans(), st.lists(_VERDICTS, max_size=4)), min_size=1, max_size=4),
    st.sampled_from([0.0, 0.3, 0.6, 1.0]),
)
def test_intersection_arbitration_reads_each_row_once_with_the_same_result(
    table: list[tuple[bool, list[Verdict]]], min_confidence: float
):
    candidates = [Candidate("act") if ok else Candidate.invalid("x", "bad") for ok, _ in table]
    rows = [tuple(row) for _, row in table]
    arbiter = Arbiter(ObserverConfig(min_confidence=min_confidence))
    assert arbiter.mode == "intersection"
    assert arbiter.arbitrate(candidates, rows) == arbiter._voted(candidates, rows)


def test_a_plain_admission_is_one_shared_verdict_and_any_other_is_its_own():
    plain = Verdict.allow("brevity")
    assert Verdict.allow("brevity") is plain
    assert plain == Verdict("brevity", True, 0.0, None, 1.0, "", Severity.LOW)
    noted = Verdict.allow("brevity", descriptor="pending")
    assert noted is not plain and noted.descriptor == "pending"
    assert Verdict.allow("brevity", deviation=0.5).deviation == 0.5
    assert Verdict.allow("other") is not plain and Verdict.allow("other").constraint == "other"
