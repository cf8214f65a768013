"""A guard that replaces another (a reloaded policy): it keeps the worker threads, and a session's
step still running under the old guard saves before the same session under the new one reads."""

from __future__ import annotations

import threading

from guard_helpers import TOOLS_POLICY

from governor.backends.scripted import ScriptedBackend
from governor.guard import Guard, MemoryStore, Sampling, load_policy

HI = [{"role": "user", "content": "hi"}]


def test_the_same_session_under_the_new_guard_waits_for_the_old_ones_step() -> None:
    store = MemoryStore()
    old = Guard.from_policy(
        load_policy(TOOLS_POLICY), backend=ScriptedBackend(["One."]), store=store
    )
    new = Guard.from_policy(
        load_policy(TOOLS_POLICY),
        backend=ScriptedBackend(["Two."]),
        store=store,
        replaces=old,
    )
    assert new.executor is old.executor
    running = old.session("s")
    running._thread_lock.acquire()  # its step is running (it holds the session's thread lock)
    answers: list[str] = []
    said = [*HI, {"role": "assistant", "content": "One."}, {"role": "user", "content": "more"}]
    waiting = threading.Thread(
        target=lambda: answers.append(new.session("s").respond_sync(said).reply.content or "")
    )
    waiting.start()
    waiting.join(0.3)
    assert waiting.is_alive() and answers == []  # it waits for the old guard's step
    # the old step's work, under its lock: it saves its reply (what the new session must read)
    assert running._respond(HI, None, Sampling()).reply.content == "One."
    running._thread_lock.release()
    waiting.join(5)
    assert answers == ["Two."]
    assert new.session("s").state.t == 2  # the old step's reply, then the new one
    last = store.records("s")[-1]
    assert "client_claims" not in last.get("extra", {})  # "One." was read as governor's own
    old_again = Guard.from_policy(
        load_policy(TOOLS_POLICY), backend=ScriptedBackend([]), store=store, replaces=new
    )
    assert new._replaced is None and old_again._replaced is new  # two generations at most
