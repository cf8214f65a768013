"""The guard service's fast paths judge exactly as the slow ones: a small check on the event loop,
the memoised LTL what-ifs, the dialogue the overlays share, the quick Verdict validation and the
JSON writer."""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from governor.backends.scripted import ScriptedBackend
from governor.bench.service.workload import TEXT_REPLY, TOOL_NAMES, USER_TEXT, bench_policy
from governor.core import RejectionCause, Severity, Trajectory, Verdict
from governor.guard import Guard, GuardSession, MemoryStore, Reply, ToolCall
from governor.guard.constraints import ToolLTLConstraint, dialogue_of
from governor.guard.exchange import Conversation, Message
from governor.overlays.features.dialogue import Turn
from governor.serve import replies

USER = [{"role": "user", "content": USER_TEXT}]


def make_guard(store: Any = None) -> Guard:
    """The bench's ``both`` policy (overlays and ten LTL rules); no upstream is ever called."""
    policy = bench_policy("both", "http://127.0.0.1:9/v1")
    return Guard.from_policy(policy, backend=ScriptedBackend([]), store=store)


def transfer(amount: float, call_id: str = "c1") -> dict[str, Any]:
    arguments = json.dumps({"amount": amount})
    fn = {"name": "transfer_funds", "arguments": arguments}
    return {"content": None, "tool_calls": [{"id": call_id, "type": "function", "function": fn}]}


def spy_threads(session: GuardSession) -> list[int]:
    """The threads ``session``'s checks run in, in order."""
    seen: list[int] = []
    real = session._check

    def spy(*args: Any) -> Any:
        seen.append(threading.get_ident())
        return real(*args)

    session._check = spy  # type: ignore[method-assign]
    return seen


def test_a_small_check_runs_on_the_loop_once_the_state_is_loaded_with_the_same_verdicts() -> None:
    guard = make_guard()
    session = guard.session("s")
    seen = spy_threads(session)

    async def main() -> tuple[int, list[Any]]:
        out = []
        for candidate, inline in [
            (TEXT_REPLY, True),  # the state is not loaded yet: a worker thread loads it
            (TEXT_REPLY, True),  # on the loop
            (TEXT_REPLY, False),  # asked for a worker thread
            (transfer(50), True),  # verify_first rejects it, on the loop
            (transfer(50), False),
        ]:
            out.append(await session.check(candidate, messages=USER, inline=inline))
        return threading.get_ident(), out

    loop, results = asyncio.run(main())
    guard.close()
    assert [t == loop for t in seen] == [False, True, False, True, False]
    assert results[0].summary == results[1].summary == results[2].summary
    assert results[0].admissible
    assert results[3].summary == results[4].summary and not results[3].admissible
    assert "verify_first" in results[3].summary["rejected_by"]


def test_a_long_saved_history_is_judged_in_a_worker_thread() -> None:
    guard = make_guard()
    session = guard.session("s")
    long = [{"role": "user", "content": "tell me more " * 1000}]  # 13,000 characters
    session.commit_sync(TEXT_REPLY, messages=long)  # now saved, and loaded
    seen = spy_threads(session)

    async def main() -> int:
        await session.check(TEXT_REPLY, inline=True)
        return threading.get_ident()

    loop = asyncio.run(main())
    guard.close()
    assert seen and loop not in seen


class SharedMemoryStore(MemoryStore):
    """A memory store that says it is shared (each call must hold its lock)."""

    shared = True

    def __init__(self) -> None:
        super().__init__()
        self.locks = 0

    @contextlib.contextmanager
    def locked(self, session_id: str) -> Iterator[None]:
        self.locks += 1
        yield


def test_a_shared_store_never_judges_on_the_loop() -> None:
    store = SharedMemoryStore()
    guard = make_guard(store)
    session = guard.session("s")
    seen = spy_threads(session)

    async def main() -> int:
        for _ in range(3):
            await session.check(TEXT_REPLY, messages=USER, inline=True)
        return threading.get_ident()

    loop = asyncio.run(main())
    guard.close()
    assert len(seen) == 3 and loop not in seen
    assert store.locks == 3  # each call held the session's lock and re-read the state


def test_an_inline_check_waits_for_a_sync_call_holding_the_session() -> None:
    guard = make_guard()
    session = guard.session("s")
    session.check_sync(TEXT_REPLY, messages=USER)  # the state is loaded

    async def main() -> bool:
        session._thread_lock.acquire()  # as a sync call in another thread would
        task = asyncio.ensure_future(session.check(TEXT_REPLY, messages=USER, inline=True))
        await asyncio.sleep(0.2)
        waited = not task.done()
        session._thread_lock.release()
        assert (await task).admissible
        return waited

    assert asyncio.run(main())
    guard.close()


@settings(max_examples=25, deadline=None)
@example([("read_secret", 0, False), ("search", 0, False), ("delete_file", 0, True)])
@given(
    st.lists(
        st.tuples(st.sampled_from(TOOL_NAMES), st.integers(-5, 80), st.booleans()),
        min_size=1,
        max_size=6,
    )
)
def test_memoised_what_ifs_equal_fresh_ones_along_any_run(
    steps: list[tuple[str, int, bool]],
) -> None:
    guard = make_guard()
    session = guard.session("s")
    warm = [c for c in guard.observer.constraints if isinstance(c, ToolLTLConstraint)]
    traj, _, _ = session._catch_up(USER, None)
    for i, (name, amount, confirm) in enumerate(steps):
        args = json.dumps({"amount": amount})
        reply = Reply(None, (ToolCall(f"c{i}", name, args),))
        actions = [Reply("ok"), *(Reply(None, (ToolCall("x", n, args),)) for n in TOOL_NAMES)]
        for c in warm:
            fresh = ToolLTLConstraint(c.rule, guard.policy.vocabulary, guard.policy.checks)
            for action in actions:
                assert c.check(traj, action) == fresh.check(traj, action)
                assert c.check(traj, action) == fresh.check(traj, action)  # now memoised
        traj = session._advance(traj, reply, "executed")
        said = "yes, go ahead" if confirm else "what next?"
        more = (Message("tool", "done", (), f"c{i}"), Message("user", said))
        traj = Trajectory(traj.observation.then(*more), memory=traj.memory)
    guard.close()


def test_the_dialogue_is_shared_per_conversation_and_never_mixed() -> None:
    def traj(*texts: str) -> Trajectory:
        messages = tuple(
            Message("user" if i % 2 == 0 else "assistant", t) for i, t in enumerate(texts)
        )
        return Trajectory(Conversation(messages))

    first = traj("hello", "hi there")
    assert dialogue_of(first) == (Turn("user", "hello"), Turn("assistant", "hi there"))
    assert dialogue_of(first) is dialogue_of(first)
    for i in range(200):  # more conversations than the cache holds, equal texts in new tuples
        assert dialogue_of(traj(f"m{i}")) == (Turn("user", f"m{i}"),)
    assert dialogue_of(traj("hello", "hi there")) == dialogue_of(first)
    assert dialogue_of(Trajectory("not a conversation")) == ()


BASE: dict[str, Any] = {
    "constraint": "c",
    "admissible": True,
    "deviation": 0.0,
    "margin": None,
    "confidence": 1.0,
    "severity": Severity.LOW,
    "error": None,
    "cause": None,
}
ODD: dict[str, list[Any]] = {  # values each field may take, valid or not
    "constraint": ["c", 3, None],
    "admissible": [True, False, 1, None],
    "deviation": [0.0, 0.5, 0, 1, True, math.inf, -math.inf, math.nan, -0.0, -1.0, "1", None],
    "margin": [None, 0.0, -2.5, 3, math.inf, -math.inf, math.nan, True, "x"],
    "confidence": [1.0, 0.0, 0.5, 1, 0, 1.5, -0.1, math.nan, math.inf, False, None],
    "severity": [Severity.LOW, Severity.CRITICAL, 2, "high", None],
    "error": [None, "boom"],
    "cause": [None, RejectionCause.LOOKAHEAD, "lookahead_failure"],
}


def judged(fields: dict[str, Any]) -> tuple[str | None, str | None]:
    """What the full validation says of ``fields``, and what constructing a Verdict says."""
    bare = object.__new__(Verdict)
    for name, value in {**fields, "descriptor": ""}.items():
        object.__setattr__(bare, name, value)
    answers: list[str | None] = []
    for attempt in (bare._validate, lambda: Verdict(**fields)):
        try:
            attempt()
            answers.append(None)
        except (ValueError, TypeError) as exc:
            answers.append(f"{type(exc).__name__}: {exc}")
    return answers[0], answers[1]


@pytest.mark.parametrize("name", list(ODD))
def test_quick_verdict_validation_refuses_each_odd_field_as_the_full_one(name: str) -> None:
    for admissible in (True, False):
        for value in ODD[name]:
            fields = {**BASE, "admissible": admissible, name: value}
            full, quick = judged(fields)
            assert quick == full, (name, value)


@settings(max_examples=300, deadline=None)
@given(st.fixed_dictionaries({k: st.sampled_from(v) for k, v in ODD.items()}))
def test_quick_verdict_validation_agrees_with_the_full_one_on_any_mix(
    fields: dict[str, Any],
) -> None:
    full, quick = judged(fields)
    assert quick == full


def test_json_bytes_writes_utf8_and_never_a_nan_token(monkeypatch: pytest.MonkeyPatch) -> None:
    value = {"text": "déjà vu", "margin": math.inf, "n": [1, 2.5]}
    fast = replies.json_bytes(value)
    assert json.loads(fast) == {"text": "déjà vu", "margin": None, "n": [1, 2.5]}
    assert "déjà".encode() in fast
    monkeypatch.setattr(replies, "orjson", None)  # the standard library's writer
    assert json.loads(replies.json_bytes({"a": "é"})) == {"a": "é"}
    with pytest.raises(ValueError):
        replies.json_bytes(value)


def test_completion_ids_are_the_openai_shape_unique_and_new_in_a_forked_child() -> None:
    import os
    import re

    ids = {replies.completion_id() for _ in range(20_000)}
    assert len(ids) == 20_000
    assert all(re.fullmatch(r"chatcmpl-[0-9a-f]{32}", i) for i in ids)
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: its first id, then out at once
        os.write(write, replies.completion_id().encode())
        os._exit(0)
    os.close(write)
    os.waitpid(pid, 0)
    child = os.read(read, 100).decode()
    os.close(read)
    assert re.fullmatch(r"chatcmpl-[0-9a-f]{32}", child)
    assert child != replies.completion_id()  # (the parent's next: the same without a reseed)
