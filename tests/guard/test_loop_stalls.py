"""A step run on the event loop (governor.on_loop) must not hold the loop for work whose size an
upstream controls: a long reply's checks run on a worker thread, under the stage's deadline as
there; what a step hands to a thread sees the step's context variables."""

from __future__ import annotations

import asyncio
import contextvars
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from fake_openai_server import FakeOpenAIServer, Reply
from guard_helpers import TOOLS_POLICY

from governor import on_loop
from governor.backends import OpenAIBackend
from governor.core import Constraint, Trajectory, Verdict
from governor.guard import Guard, load_policy
from governor.observer import LOOP_CHECK_MAX_CHARS


def text_reply(content: str) -> Reply:
    message = {"role": "assistant", "content": content}
    body = {
        "model": "fake",
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 3, "completion_tokens": 2},
    }
    return Reply(body=body)


class Slow(Constraint):
    """A pure check whose time grows with a reply's text (as text overlays' do): it records the
    thread it ran on."""

    name = "slow"
    pure = True

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.threads: list[int] = []

    def check(self, traj: Trajectory, action: Any) -> Verdict:
        self.threads.append(threading.get_ident())
        if len(getattr(action, "content", None) or "") > LOOP_CHECK_MAX_CHARS:
            time.sleep(self.seconds)
        return Verdict.allow(self.name)


async def largest_gap(step: Any) -> tuple[Any, float]:
    """``step``'s result and the longest the loop went without running a 5 ms ticker meanwhile."""
    gaps: list[float] = []
    done = asyncio.Event()

    async def tick() -> None:
        last = time.perf_counter()
        while not done.is_set():
            await asyncio.sleep(0.005)
            now = time.perf_counter()
            gaps.append(now - last)
            last = now

    ticker = asyncio.create_task(tick())
    await asyncio.sleep(0.02)
    try:
        result = await step
    finally:
        done.set()
        await ticker
    return result, max(gaps)


def guard_with(backend: OpenAIBackend, slow: Slow) -> Guard:
    guard = Guard(load_policy(TOOLS_POLICY), backend)
    guard.observer.constraints = (*guard.observer.constraints, slow)
    assert guard.on_loop
    return guard


def test_a_long_replys_checks_run_off_the_loop(
    server: FakeOpenAIServer, make_backend: Callable[..., OpenAIBackend]
) -> None:
    slow = Slow(0.4)
    guard = guard_with(make_backend(), slow)
    server.script(
        "/chat/completions", text_reply("short"), text_reply("x" * (LOOP_CHECK_MAX_CHARS + 1))
    )

    async def steps() -> tuple[int, Any, Any, float]:
        loop_thread = threading.get_ident()
        first = await guard.session("short").respond([{"role": "user", "content": "hi"}])
        long_step = guard.session("long").respond([{"role": "user", "content": "hi"}])
        second, gap = await largest_gap(long_step)
        return loop_thread, first, second, gap

    loop_thread, first, second, gap = asyncio.run(steps())
    assert first.summary["kind"] == "execute" and second.summary["kind"] == "execute"
    assert len(second.reply.content) == LOOP_CHECK_MAX_CHARS + 1
    assert slow.threads[0] == loop_thread  # a short reply is checked on the loop
    assert slow.threads[1] != loop_thread  # a long one on a thread: the loop went on
    assert gap < 0.2, f"the loop stalled {gap:.3f} s while a long reply was checked"


def test_a_long_replys_checks_past_the_budget_fall_back_without_holding_the_loop(
    server: FakeOpenAIServer, make_backend: Callable[..., OpenAIBackend]
) -> None:
    slow = Slow(1.5)
    guard = guard_with(make_backend(), slow)
    guard.observer.config = replace(guard.observer.config, time_budget_s=0.3)
    server.script("/chat/completions", text_reply("y" * (LOOP_CHECK_MAX_CHARS + 1)))

    async def step() -> tuple[Any, float]:
        return await largest_gap(guard.session("s").respond([{"role": "user", "content": "hi"}]))

    start = time.perf_counter()
    reply, gap = asyncio.run(step())
    took = time.perf_counter() - start
    assert reply.summary["kind"] != "execute"  # the check did not finish: never the unchecked
    assert gap < 0.2, f"the loop stalled {gap:.3f} s"
    assert took < 1.4, f"the step waited {took:.2f} s for a check past its 0.3 s budget"


VAR: contextvars.ContextVar[str] = contextvars.ContextVar("VAR", default="unset")


def test_blocking_sees_the_steps_context() -> None:
    def step() -> tuple[str, str]:
        VAR.set("the step's")
        here = VAR.get()
        return here, on_loop.blocking(VAR.get)

    async def main() -> tuple[str, str]:
        return await on_loop.run_on_loop(step)

    assert asyncio.run(main()) == ("the step's", "the step's")
