"""One session called from several event loops at once (the async API on the service's loop, the
sync API from other threads, each sync call on a loop of its own): the calls are serialised,
none fails for being on another loop, and a request sent again is answered without a second
step."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any

from fake_openai_server import FakeOpenAIServer, Reply
from guard_helpers import TOOLS_POLICY

from governor.backends import OpenAIBackend
from governor.guard import Guard, load_policy

MESSAGES = [{"role": "user", "content": "hi"}]


def slow_text(content: str, delay_s: float) -> Reply:
    message = {"role": "assistant", "content": content}
    body = {
        "model": "fake",
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 3, "completion_tokens": 2},
    }
    return Reply(body=body, delay_s=delay_s)


def test_sync_calls_from_threads_while_async_calls_wait_on_the_loop(
    server: FakeOpenAIServer, make_backend: Callable[..., OpenAIBackend]
) -> None:
    server.script("/chat/completions", slow_text("only once", 0.3))
    guard = Guard(load_policy(TOOLS_POLICY), make_backend())
    session = guard.session("shared")

    async def main() -> tuple[list[Any], list[Any]]:
        waiting = [asyncio.create_task(session.respond(MESSAGES)) for _ in range(3)]
        await asyncio.sleep(0.05)  # the first step holds the session; two more wait on this loop
        from_threads: list[Any] = []

        def sync_call() -> None:
            try:
                from_threads.append(session.respond_sync(MESSAGES).reply.content)
            except Exception as exc:  # recorded: the assertion names it
                from_threads.append(exc)

        threads = [threading.Thread(target=sync_call) for _ in range(2)]
        for t in threads:
            t.start()
        on_loop = [r.reply.content for r in await asyncio.gather(*waiting)]
        for t in threads:
            await asyncio.to_thread(t.join, 5)
        return on_loop, from_threads

    on_loop, from_threads = asyncio.run(main())
    assert on_loop == ["only once"] * 3
    assert from_threads == ["only once"] * 2
    assert len(server.requests_to("/chat/completions")) == 1  # one step; the rest replayed it
    assert len(guard.store.records(session.id)) == 1
    # after calls from loops now closed, the session still serves another loop
    assert session.respond_sync(MESSAGES).reply.content == "only once"
