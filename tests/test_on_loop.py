"""Synchronous code run on the event loop (governor.on_loop): what it awaits is awaited by the
loop, exceptions and cancellations cross in both directions, context variables are its caller's,
and a stage under a deadline runs in place there."""

from __future__ import annotations

import asyncio
import contextvars
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from governor.deadline import call_with_deadline, stage_deadline
from governor.errors import GuardTimeout
from governor.on_loop import Carried, await_here, finish_on_loop, on_loop, run_on_loop

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


# --- finish_on_loop: a call that outlives its caller, driven from the caller's task -----------


class Ended:
    """The ``ended`` of a call: counts its calls, and notes whether the call had finished."""

    def __init__(self) -> None:
        self.times = 0

    def __call__(self) -> None:
        self.times += 1


def _later(loop: asyncio.AbstractEventLoop, seconds: float, value: object) -> Carried:
    future = Carried(loop=loop)
    loop.call_later(seconds, lambda: future.done() or future.set_result(value))
    return future


def test_a_call_awaiting_carried_futures_runs_in_its_callers_task_alone() -> None:
    seen: list[object] = []

    def step() -> int:
        loop = asyncio.get_running_loop()
        got = await_here(_later(loop, 0.01, 20))
        seen.append((asyncio.current_task(), len(asyncio.all_tasks())))
        return got + await_here(_later(loop, 0.01, 22))

    async def main() -> tuple[int, asyncio.Task[object] | None]:
        ended = Ended()
        got = await finish_on_loop(ended, step)
        assert ended.times == 1
        return got, asyncio.current_task()

    got, caller = asyncio.run(main())
    assert got == 42
    assert seen == [(caller, 1)]  # driven by the caller's own task: no task of its own


def test_the_caller_wakes_in_the_turn_its_future_wakes_it() -> None:
    """Between the answer and the code after it, one turn of the loop: as many as a task awaiting
    the future itself (a step in a task of its own handing back to its caller took two more)."""
    turns = [0]

    def tick() -> None:
        turns[0] += 1
        asyncio.get_running_loop().call_soon(tick)

    marks: dict[str, int] = {}

    def step(future: Carried) -> None:
        await_here(future)
        marks["code"] = turns[0]

    async def main() -> None:
        loop = asyncio.get_running_loop()
        future = Carried(loop=loop)

        async def call() -> None:
            await finish_on_loop(Ended(), step, future)
            marks["caller"] = turns[0]

        caller = asyncio.ensure_future(call())
        await asyncio.sleep(0.01)
        loop.call_soon(tick)

        def answer() -> None:
            marks["answer"] = turns[0]
            future.set_result(None)

        loop.call_later(0.01, answer)
        await caller

    asyncio.run(main())
    assert marks["code"] - marks["answer"] <= 1
    assert marks["caller"] == marks["code"]  # the call ended in the caller's own turn


async def _cancelled(ended: Ended, step: Callable[..., Any], after: float = 0.01) -> float:
    """Start ``finish_on_loop(ended, step)``, cancel its caller ``after`` seconds later: the
    seconds the caller then took to be woken cancelled."""
    task = asyncio.ensure_future(finish_on_loop(ended, step))
    await asyncio.sleep(after)
    start = time.monotonic()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    return time.monotonic() - start


def test_a_cancelled_caller_is_cancelled_at_once_and_the_call_finishes_its_await() -> None:
    events: list[str] = []
    ended = Ended()

    def step() -> str:
        future = _later(asyncio.get_running_loop(), 0.2, "answer")
        events.append("awaiting")
        got = await_here(future)
        events.append(f"got {got}")
        events.append(f"ended before the end: {ended.times}")
        return got

    async def main() -> float:
        woke = await _cancelled(ended, step, 0.02)
        assert ended.times == 0 and events == ["awaiting"]
        await asyncio.sleep(0.3)
        return woke

    woke = asyncio.run(main())
    assert woke < 0.1  # not when the answer came (0.2 s)
    assert events == ["awaiting", "got answer", "ended before the end: 0"]
    assert ended.times == 1


async def _awaiting(ended: Ended, got: list[object]) -> tuple[asyncio.Task[None], Carried]:
    """A call started by finish_on_loop, now awaiting a new Carried future (what it gets goes
    to ``got``): its caller's task and the future."""

    def step(future: Carried) -> None:
        got.append(await_here(future))

    future = Carried(loop=asyncio.get_running_loop())
    task = asyncio.ensure_future(finish_on_loop(ended, step, future))
    await asyncio.sleep(0.01)
    return task, future


def test_a_caller_cancelled_twice_before_it_wakes_leaves_the_future_alone() -> None:
    ended = Ended()
    got: list[object] = []

    async def main() -> Carried:
        task, future = await _awaiting(ended, got)
        task.cancel()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert not future.cancelled()
        future.set_result("late")
        await asyncio.sleep(0.01)
        return future

    asyncio.run(main())
    assert got == ["late"] and ended.times == 1


def test_a_caller_cancelled_as_its_answer_came_still_finishes_the_call() -> None:
    ended = Ended()
    got: list[object] = []

    async def main() -> None:
        task, future = await _awaiting(ended, got)
        future.set_result("answer")  # the caller is woken in the next turn...
        task.cancel()  # ...cancelled before it runs
        with pytest.raises(asyncio.CancelledError):
            await task
        await asyncio.sleep(0.01)

    asyncio.run(main())
    assert got == ["answer"] and ended.times == 1


def test_other_awaits_go_on_in_a_task_of_their_own_past_a_cancelled_caller() -> None:
    ended = Ended()
    events: list[str] = []

    def step() -> None:
        await_here(asyncio.sleep(0.1))  # not a Carried future: awaited by a task of its own
        events.append("slept")

    async def main() -> None:
        await _cancelled(ended, step, 0.02)
        assert events == [] and ended.times == 0
        await asyncio.sleep(0.2)

    asyncio.run(main())
    assert events == ["slept"] and ended.times == 1


def test_a_call_failing_after_its_caller_left_is_logged_and_ended(
    caplog: pytest.LogCaptureFixture,
) -> None:
    ended = Ended()

    def step() -> None:
        await_here(_later(asyncio.get_running_loop(), 0.05, None))
        raise KeyError("after the caller left")

    async def main() -> None:
        await _cancelled(ended, step)
        await asyncio.sleep(0.1)

    with caplog.at_level("ERROR", logger="governor.on_loop"):
        asyncio.run(main())
    assert ended.times == 1
    assert any("after its caller left" in r.getMessage() for r in caplog.records)


def test_errors_and_values_cross_as_with_run_on_loop() -> None:
    ended = Ended()

    def step(future: Carried) -> str:
        try:
            await_here(future)
        except ValueError as exc:
            return f"handled {exc}"
        return "not raised"

    async def main() -> str:
        future = Carried(loop=asyncio.get_running_loop())
        future.get_loop().call_later(0.01, future.set_exception, ValueError("upstream"))
        return await finish_on_loop(ended, step, future)

    assert asyncio.run(main()) == "handled upstream" and ended.times == 1

    def raises() -> None:
        raise KeyError("boom")

    with pytest.raises(KeyError, match="boom"):
        asyncio.run(finish_on_loop(ended, raises))
    assert ended.times == 2


def test_a_carried_future_awaited_elsewhere_is_an_ordinary_future() -> None:
    async def main() -> bool:
        future = Carried(loop=asyncio.get_running_loop())
        waiter = asyncio.ensure_future(future)
        await asyncio.sleep(0)
        waiter.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiter
        return future.cancelled()

    assert asyncio.run(main())


@pytest.mark.parametrize("loop_kind", ["asyncio", "uvloop"])
def test_a_call_left_awaiting_as_asyncio_run_ends_fails_closed_and_ends_once(
    loop_kind: str,
) -> None:
    """asyncio.run cancels the tasks left when its main coroutine returns, its loop stopped: no
    task of its own could finish the call then, so the call is cancelled where it awaits (and
    the future with it: its connection is not reused), ended once, and the run ends cleanly."""
    factory = None
    if loop_kind == "uvloop":
        uvloop = pytest.importorskip("uvloop")
        factory = uvloop.new_event_loop
    ended = Ended()
    events: list[str] = []
    futures: list[Carried] = []

    def step(future: Carried) -> None:
        try:
            events.append(await_here(future))
        except BaseException as exc:
            events.append(type(exc).__name__)
            raise

    async def main() -> None:
        futures.append(Carried(loop=asyncio.get_running_loop()))
        asyncio.get_running_loop().create_task(finish_on_loop(ended, step, futures[0]))
        await asyncio.sleep(0.01)  # returns with the call awaiting its future

    with asyncio.Runner(loop_factory=factory) as runner:
        runner.run(main())
    assert events == ["CancelledError"] and ended.times == 1
    assert futures[0].cancelled()


@pytest.mark.parametrize("error", [KeyboardInterrupt, SystemExit])
def test_an_interrupt_raised_by_a_call_awaited_elsewhere_goes_to_its_caller_alone(
    error: type[BaseException],
) -> None:
    """A call that went on in a task of its own raises what it raises to its caller, as a call
    driven by its caller's task does: its task does not raise it again out of the loop."""
    ended = Ended()

    def step() -> None:
        await_here(asyncio.sleep(0.01))  # (awaited by a task of its own)
        raise error("in the call")

    async def main() -> str:
        try:
            await finish_on_loop(ended, step)
        except error as exc:
            return f"caught {exc}"
        return "not raised"

    try:
        got = asyncio.run(main())
    except error as exc:  # (as it was: a KeyboardInterrupt would end the test run here)
        pytest.fail(f"expected the caller to catch it, found {exc!r} raised out of the loop")
    assert got == "caught in the call"
    assert ended.times == 1


def test_two_calls_awaiting_one_carried_future_are_each_cancelled_alone() -> None:
    """A Carried future two calls await is carried by the first alone (the second awaits it from
    a task of its own): cancelling the second caller woke the first cancelled, drove the second
    call twice, ended it twice and the first never."""
    first, second = Ended(), Ended()
    got: list[tuple[str, object]] = []

    def step(name: str, future: Carried) -> None:
        got.append((name, await_here(future)))

    async def main() -> None:
        future = Carried(loop=asyncio.get_running_loop())
        one = asyncio.ensure_future(finish_on_loop(first, step, "one", future))
        two = asyncio.ensure_future(finish_on_loop(second, step, "two", future))
        await asyncio.sleep(0.01)
        two.cancel()
        await asyncio.sleep(0.01)
        try:
            assert two.cancelled() and not one.done()
        finally:
            future.set_result("answer")  # (else what still awaits it would hang asyncio.run)
        await asyncio.wait([one], timeout=1.0)
        assert one.done() and one.result() is None
        await asyncio.sleep(0.01)

    asyncio.run(main())
    assert sorted(got) == [("one", "answer"), ("two", "answer")]
    assert (first.times, second.times) == (1, 1)
