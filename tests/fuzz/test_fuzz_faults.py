"""Faults at the boundaries: the HTTP backend against a local server that answers garbage, errors,
truncated bodies, slow drips and resets; the runtime loop against plug-ins that raise, hang, or
return garbage. Only governor's errors come out, and no unchecked action is ever executed."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from fake_openai_server import FakeOpenAIServer, Reply
from fuzzing import counted, fuzz_settings
from hypothesis import given
from hypothesis import strategies as st

from governor.backends import OpenAIBackend
from governor.config import BackendConfig, ObserverConfig
from governor.core import Candidate, Constraint, Fallback, Policy, Trajectory, Verdict
from governor.errors import GovernorError
from governor.observer import Observer

bodies = st.one_of(
    st.binary(max_size=200),
    st.text(max_size=200),
    st.recursive(
        st.none()
        | st.booleans()
        | st.integers()
        | st.floats(allow_nan=False)
        | st.text(max_size=10),
        lambda inner: (
            st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
        ),
        max_leaves=10,
    ),
    st.builds(
        lambda content, logprobs: {
            "choices": [{"message": {"content": content}, "logprobs": logprobs}]
        },
        st.none() | st.text(max_size=10) | st.integers(),
        st.none()
        | st.integers()
        | st.fixed_dictionaries({"content": st.lists(st.integers(), max_size=2)}),
    ),
)
replies = st.builds(
    Reply,
    status=st.sampled_from([200, 200, 200, 400, 404, 429, 500, 503]),
    body=bodies,
    headers=st.sampled_from([{}, {"Retry-After": "0"}, {"Retry-After": "soon"}]),
    drip_s=st.sampled_from([0.0, 0.0, 0.0, 0.001]),
    truncate=st.booleans(),
    reset=st.sampled_from([False, False, False, True]),
)

SERVER = FakeOpenAIServer().start()


@fuzz_settings(150)
@given(st.lists(replies, min_size=1, max_size=3), st.sampled_from(["chat", "embed"]))
def test_the_backend_raises_only_its_errors(script: list[Reply], call: str) -> None:
    counted("http")
    SERVER.script("/chat/completions" if call == "chat" else "/embeddings", *script)
    config = BackendConfig(SERVER.url, "m", timeout_s=2.0, max_retries=1, backoff_s=0.0)
    start = time.perf_counter()
    with OpenAIBackend(config) as backend:
        try:
            if call == "chat":
                result = backend.chat("hi")
                assert all(isinstance(c.text, str) for c in result.completions)
            else:
                vectors = backend.embed(["a"])
                assert vectors.shape[0] == 1
        except GovernorError:
            pass
    assert time.perf_counter() - start < 2.0 + 1.0  # one deadline per call, retries inside it
    SERVER.clear()  # drop what this input did not use


behaviours = st.sampled_from(["ok", "ok", "raise", "garbage", "slow", "none"])


def act(kind: str, good: Any) -> Any:
    if kind == "raise":
        raise RuntimeError("plug-in failure")
    if kind == "garbage":
        return object()
    if kind == "slow":
        time.sleep(0.05)
    if kind == "none":
        return None
    return good


class FuzzPolicy(Policy):
    name = "fuzz"

    def __init__(self, kind: str, proposals: Sequence[int]) -> None:
        self.kind, self.proposals = kind, list(proposals)

    def propose(self, traj: Trajectory, feedback: Any, n: int) -> list[Candidate[Any]]:
        return act(self.kind, [Candidate(a) for a in self.proposals])


class FuzzConstraint(Constraint):
    """Admits actions below a limit, unless told to misbehave."""

    def __init__(self, name: str, kind: str, limit: int, hard: bool) -> None:
        self.name, self.kind, self.limit, self.hard = name, kind, limit, hard

    def check(self, traj: Trajectory, action: Any) -> Verdict:
        verdict = Verdict.from_margin(self.name, float(self.limit - action), threshold=0.0)
        return act(self.kind, verdict)


class FuzzFallback(Fallback):
    name = "fuzz_fallback"

    def __init__(self, kind: str, action: int) -> None:
        self.kind, self.action = kind, action

    def act(self, traj: Trajectory, verdicts: Sequence[Verdict]) -> Any:
        return act(self.kind, self.action)


@fuzz_settings(500)
@given(
    behaviours,
    st.lists(st.integers(0, 9), min_size=1, max_size=3),
    st.lists(st.tuples(behaviours, st.integers(0, 9), st.booleans()), max_size=3),
    st.none() | st.tuples(behaviours, st.integers(0, 9)),
    st.sampled_from(["intersection", "majority", "weighted"]),
)
def test_no_unchecked_action_is_ever_executed(
    policy: str,
    proposals: list[int],
    constraints: list[tuple[str, int, bool]],
    fallback: tuple[str, int] | None,
    arbitration: str,
) -> None:
    counted("observer")
    plugins = [
        FuzzConstraint(f"c{i}", k, lim, hard) for i, (k, lim, hard) in enumerate(constraints)
    ]
    config = ObserverConfig(time_budget_s=0.02, max_regenerations=1, arbitration=arbitration)
    observer = Observer(
        FuzzPolicy(policy, proposals),
        plugins,
        None if fallback is None else FuzzFallback(*fallback),
        config=config,
    )
    decision = observer.step(observer.start("obs"))
    if not decision.executed:
        assert decision.action is None
        return
    action = decision.action
    if decision.kind.value in ("execute", "execute_with_feedback"):
        # a proposal the arbiter admitted: every verdict it carries admits it, none failed
        assert action in proposals
        assert all(v.error is None for v in decision.verdicts)
        if arbitration == "intersection":
            assert all(v.admissible for v in decision.verdicts)
            assert all(p.kind in ("ok", "slow") and action < p.limit for p in plugins)
    else:  # the fallback's action: every hard constraint must have admitted it
        assert fallback is not None
        for p in plugins:
            if p.hard:
                # a slow check still answers within the fallback's own budget
                assert p.kind in ("ok", "slow") and isinstance(action, int) and action < p.limit
