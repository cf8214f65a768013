"""Synchronous code run on the event loop (governor.on_loop): what it awaits is awaited by the
loop, exceptions and cancellations cross in both directions, context variables are its caller's,
and a stage under a deadline runs in place there."""

from __future__ import annotations

import asyncio
import contextvars
import threading
import time

import pytest

from governor.deadline import call_with_deadline, stage_deadline
from governor.errors import GuardTimeout
from governor.on_loop import await_here, on_loop, run_on_loop

WHO: contextvars.ContextVar[str] = contextvars.ContextVar("who", default="nobody")


def test_sync_code_awaits_on_the_loop_and_returns_its_value() -> None:
    seen: list[object] = []

    def step(x: int) -> int:
        seen.append((on_loop(), threading.current_thread() is threading.main_thread()))
        y = await_here(asyncio.sleep(0.01, result=x + 1))
        return y * 2

    assert asyncio.run(run_on_loop(step, 20)) == 42
    assert seen == [(True, True)]  # on the loop's own thread, no worker thread
    assert not on_loop()


def test_two_calls_interleave_while_each_awaits() -> None:
    order: list[str] = []

    def step(name: str) -> str:
        order.append(f"{name} starts")
        await_here(asyncio.sleep(0.05))
        order.append(f"{name} ends")
        return name

    async def both() -> tuple[list[str], float]:
        start = time.monotonic()
        got = await asyncio.gather(run_on_loop(step, "a"), run_on_loop(step, "b"))
        return list(got), time.monotonic() - start

    got, seconds = asyncio.run(both())
    assert got == ["a", "b"]
    assert order[:2] == ["a starts", "b starts"]  # b ran while a awaited
    assert seconds < 0.09  # the two waits overlapped (each 0.05 s)


def test_errors_cross_both_ways() -> None:
    def raises_inside() -> None:
        raise KeyError("boom")

    with pytest.raises(KeyError, match="boom"):
        asyncio.run(run_on_loop(raises_inside))

    async def fails() -> None:
        raise ValueError("awaited failure")

    def handles() -> str:
        try:
            await_here(fails())
        except ValueError as exc:
            return f"handled {exc}"
        return "not raised"

    assert asyncio.run(run_on_loop(handles)) == "handled awaited failure"


def test_a_cancelled_caller_cancels_what_the_code_awaits() -> None:
    reached: list[str] = []

    def step() -> None:
        try:
            await_here(asyncio.sleep(10))
        except asyncio.CancelledError:
            reached.append("cancelled inside")
            raise

    async def main() -> None:
        task = asyncio.ensure_future(run_on_loop(step))
        await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    assert reached == ["cancelled inside"]


def test_the_code_sees_its_callers_context_and_changes_only_its_copy() -> None:
    def step() -> str:
        before = WHO.get()
        WHO.set("changed inside")
        await_here(asyncio.sleep(0))
        return f"{before}/{WHO.get()}"

    async def main() -> tuple[str, str]:
        WHO.set("caller")
        got = await run_on_loop(step)
        return got, WHO.get()

    assert asyncio.run(main()) == ("caller/changed inside", "caller")


def test_await_here_outside_the_loop_is_refused() -> None:
    with pytest.raises(RuntimeError, match="run_on_loop"):
        await_here(asyncio.sleep(0))


def test_a_stage_runs_in_place_on_the_loop_under_its_deadline() -> None:
    def stage() -> tuple[bool, float | None]:
        return threading.current_thread() is threading.main_thread(), stage_deadline()

    def late() -> str:
        await_here(asyncio.sleep(0.05))
        return "too late"

    def step() -> tuple[tuple[bool, float | None], str]:
        got = call_with_deadline(stage, 5.0, "check")
        try:
            call_with_deadline(late, 0.01, "propose")
        except GuardTimeout as exc:
            return got, str(exc)
        return got, "no timeout"

    (here, deadline), late_message = asyncio.run(run_on_loop(step))
    assert here and deadline is not None and deadline > time.monotonic()
    assert "propose: expected an answer within 0.01 s, found one" in late_message


def test_calls_in_turn_reuse_a_runner_and_share_nothing_but_it() -> None:
    """A finished call's runner serves the next: each call sees its own caller's context, not
    what an earlier call set; a call that raised leaves it fit to serve; the runner holds no
    value, argument or exception of a call once it has ended."""
    import gc
    import weakref

    import greenlet

    from governor import on_loop as module

    class Value:
        pass

    runners: list[object] = []
    kept: list[weakref.ref[Value]] = []

    def step(n: int) -> Value:
        runners.append(greenlet.getcurrent())
        seen = WHO.get()
        WHO.set(f"set by call {n}")
        await_here(asyncio.sleep(0))
        if n == 2:
            raise KeyError(f"call {n} saw {seen}")
        value = Value()
        kept.append(weakref.ref(value))
        value.seen = seen  # type: ignore[attr-defined]
        return value

    async def main() -> list[str]:
        out = []
        for n in range(4):
            WHO.set(f"caller {n}")
            try:
                out.append((await run_on_loop(step, n)).seen)
            except KeyError as exc:
                out.append(str(exc))
        return out

    assert asyncio.run(main()) == ["caller 0", "caller 1", "'call 2 saw caller 2'", "caller 3"]
    assert len({id(r) for r in runners}) == 1  # one runner, reused
    gc.collect()
    assert all(ref() is None for ref in kept)  # no call's value is held after it ended
    assert len(module._idle.runners) <= module.IDLE_RUNNERS


def test_runners_are_kept_up_to_the_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    """As many runners as calls at once; past IDLE_RUNNERS, finished ones are let go."""
    from governor import on_loop as module

    monkeypatch.setattr(module, "IDLE_RUNNERS", 3)
    monkeypatch.setattr(module._idle, "runners", [], raising=False)

    def step() -> None:
        await_here(asyncio.sleep(0.01))

    async def many() -> None:
        await asyncio.gather(*(run_on_loop(step) for _ in range(10)))

    asyncio.run(many())
    assert len(module._idle.runners) == 3
