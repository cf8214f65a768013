"""OpenTelemetry spans: one per observer step with a child per stage, carrying the decision and
every LLM call; a failing stage is recorded on its span; the step is unchanged by tracing."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import pytest

from governor.backends.scripted import ScriptedBackend
from governor.core import Candidate, Constraint, Feedback, Policy, Trajectory, Verdict
from governor.observer import Observer

sdk_trace = pytest.importorskip("opentelemetry.sdk.trace")
export = pytest.importorskip("opentelemetry.sdk.trace.export")
in_memory = pytest.importorskip("opentelemetry.sdk.trace.export.in_memory_span_exporter")
from opentelemetry import trace  # noqa: E402

EXPORTER = in_memory.InMemorySpanExporter()


@pytest.fixture(scope="module", autouse=True)
def provider() -> Iterator[None]:
    made = sdk_trace.TracerProvider()
    made.add_span_processor(export.SimpleSpanProcessor(EXPORTER))
    trace.set_tracer_provider(made)  # once per process: OpenTelemetry refuses a second one
    yield


@pytest.fixture(autouse=True)
def spans() -> Iterator[None]:
    EXPORTER.clear()
    yield


class Asks(Policy):
    """Proposes what the scripted model says (one LLM call per proposal)."""

    def __init__(self, replies: list[Any]) -> None:
        self.backend = ScriptedBackend(replies)

    def propose(
        self, traj: Trajectory, feedback: Feedback | None, n: int
    ) -> Sequence[Candidate[Any]]:
        text = self.backend.chat(f"turn {traj.t}").text
        return [Candidate(text, text)]


class NoShouting(Constraint):
    name = "no_shouting"

    def check(self, traj: Trajectory, action: Any) -> Verdict:
        if str(action).isupper():
            return Verdict.reject(self.name, 1.0, "shouting")
        return Verdict.allow(self.name)


class Broken(Constraint):
    name = "broken"

    def check(self, traj: Trajectory, action: Any) -> Verdict:
        raise RuntimeError("the check crashed")


def test_a_step_has_a_span_with_a_child_per_stage_and_its_llm_calls() -> None:
    observer = Observer(Asks(["HELLO", "hello"]), [NoShouting()])
    decision = observer.step(observer.start("hi"))
    assert decision.action == "hello" and decision.regenerations == 1
    finished = {s.name: s for s in EXPORTER.get_finished_spans()}
    step = finished["governor.step"]
    assert step.attributes["governor.decision"] == "execute"
    assert step.attributes["governor.regenerations"] == 1
    assert step.attributes["governor.llm.calls"] == 2
    propose = [s for s in EXPORTER.get_finished_spans() if s.name == "governor.propose"]
    assert len(propose) == 2 and all(s.parent.span_id == step.context.span_id for s in propose)
    assert [s.attributes["governor.llm.calls"] for s in propose] == [1, 1]
    assert "governor.check" in finished and "governor.feedback" in finished


def test_a_failing_stage_is_recorded_on_its_span_and_the_step_still_fails_closed() -> None:
    observer = Observer(Asks(["hello"]), [Broken()])
    decision = observer.step(observer.start("hi"))
    assert decision.action is None  # no fallback: deferred, never the unchecked reply
    step = next(s for s in EXPORTER.get_finished_spans() if s.name == "governor.step")
    assert step.attributes["governor.decision"] == "defer"
    assert step.attributes["governor.cause"] == "stage_error"


def test_without_the_api_a_step_makes_no_span(monkeypatch: pytest.MonkeyPatch) -> None:
    import governor.telemetry

    monkeypatch.setattr(governor.telemetry, "_trace", None)
    observer = Observer(Asks(["hello"]), [NoShouting()])
    assert observer.step(observer.start("hi")).action == "hello"
    assert EXPORTER.get_finished_spans() == ()
