"""Stages under a deadline: run on reused workers; overrunning stages are abandoned, counted and
capped."""

from __future__ import annotations

import contextvars
import os
import subprocess
import sys
import threading
import time
from functools import partial

import pytest

from governor import deadline
from governor.deadline import MAX_ABANDONED, abandoned_stages, call_with_deadline
from governor.errors import GuardTimeout


def test_a_fast_stage_returns_and_a_raising_one_raises() -> None:
    assert call_with_deadline(lambda: 3, 1.0, "fast") == 3
    with pytest.raises(KeyError):
        call_with_deadline(lambda: {}["x"], 1.0, "raising")


def test_overrunning_stages_are_capped_and_counted() -> None:
    release = threading.Event()
    try:
        for _ in range(MAX_ABANDONED):
            with pytest.raises(GuardTimeout, match="abandoned"):
                call_with_deadline(release.wait, 0.01, "slow")
        assert abandoned_stages() == MAX_ABANDONED
        start = time.perf_counter()
        with pytest.raises(GuardTimeout, match="not started: 8 earlier stages"):
            call_with_deadline(lambda: 1, 5.0, "next")
        assert time.perf_counter() - start < 0.5
    finally:
        release.set()
    deadline = time.monotonic() + 5
    while abandoned_stages() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert abandoned_stages() == 0
    assert call_with_deadline(lambda: 1, 1.0, "after") == 1


def _stage_threads() -> int:
    return sum(t.name.startswith("governor-") for t in threading.enumerate())


def test_stages_run_on_reused_workers_off_the_callers_thread() -> None:
    call_with_deadline(lambda: None, 1.0, "warm")
    before = _stage_threads()
    idents = {call_with_deadline(threading.get_ident, 1.0, "where") for _ in range(50)}
    assert threading.get_ident() not in idents
    assert len(idents) <= before and _stage_threads() <= before


def test_stages_in_flight_at_once_each_get_a_worker() -> None:
    together = threading.Barrier(4)
    results: list[int] = []
    errors: list[BaseException] = []

    def meet(i: int) -> int:
        together.wait(5.0)  # broken unless all four stages run at the same time
        return i

    def caller(i: int) -> None:
        try:
            results.append(call_with_deadline(partial(meet, i), 10.0, "meet"))
        except BaseException as exc:
            errors.append(exc)

    callers = [threading.Thread(target=caller, args=(i,)) for i in range(4)]
    for t in callers:
        t.start()
    for t in callers:
        t.join()
    assert not errors and sorted(results) == [0, 1, 2, 3]


def test_a_stage_sees_the_callers_context_and_its_interrupts_reach_the_caller() -> None:
    var: contextvars.ContextVar[str] = contextvars.ContextVar("who", default="nobody")
    var.set("caller")
    assert call_with_deadline(var.get, 1.0, "context") == "caller"

    def interrupt() -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        call_with_deadline(interrupt, 1.0, "interrupt")
    assert call_with_deadline(lambda: 2, 1.0, "after") == 2


def test_an_idle_worker_ends(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(deadline, "IDLE_S", 0.01)
    worker = call_with_deadline(threading.current_thread, 1.0, "idle")
    worker.join(5.0)
    assert not worker.is_alive()
    assert call_with_deadline(lambda: 3, 1.0, "after") == 3


def test_a_stage_that_finished_as_its_deadline_passed_is_not_counted_as_abandoned() -> None:
    stage = deadline._Stage(lambda: 1, "late")
    stage.run()
    assert not stage.abandon() and abandoned_stages() == 0 and stage.value == 1


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_forked_child_runs_stages_on_workers_of_its_own() -> None:
    call_with_deadline(lambda: None, 1.0, "warm")  # leaves an idle worker in this process
    pid = os.fork()
    if pid == 0:  # the child: the parent's idle worker does not exist here
        try:
            code = 0 if call_with_deadline(lambda: 7, 5.0, "child") == 7 else 1
        except BaseException:
            code = 2
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


def test_waiting_for_abandoned_stages_is_bounded_and_sees_them_end() -> None:
    release = threading.Event()
    with pytest.raises(GuardTimeout):
        call_with_deadline(release.wait, 0.01, "slow")
    assert deadline.wait_for_abandoned(0.05) == 1  # still running: the wait gives up
    threading.Timer(0.05, release.set).start()
    assert deadline.wait_for_abandoned(5.0) == 0


def test_the_process_exits_after_its_abandoned_stages_return(tmp_path) -> None:
    mark = tmp_path / "returned"
    script = (
        "import time, pathlib\n"
        "from governor.deadline import call_with_deadline\n"
        "def slow():\n"
        "    time.sleep(0.5)\n"
        f"    pathlib.Path({str(mark)!r}).write_text('yes')\n"
        "try:\n"
        "    call_with_deadline(slow, 0.01, 'slow')\n"
        "except Exception as exc:\n"
        "    print(type(exc).__name__)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0 and done.stdout.strip() == "GuardTimeout"
    assert mark.read_text() == "yes"  # the exit waited for the stage: it was not cut off
