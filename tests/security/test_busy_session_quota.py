"""With the session quota on, requests piling up on one busy session (its step waiting on a slow
upstream) must not hold the threads that other sessions' requests need: asking whether a session
is new waits for the step without holding a thread."""

from __future__ import annotations

import threading
import time

import httpx
from fake_openai_server import FakeOpenAIServer, Reply
from serve_helpers import text, tools_guard

from governor.serve import create_app
from governor.serve.app import Limits
from governor.serve.local import serving

PILED = 40  # more than asyncio's default pool has threads (at most 32)


def test_requests_waiting_on_a_busy_session_do_not_hold_up_another(
    server: FakeOpenAIServer,
) -> None:
    guard = tools_guard(server.url, timeout_s=5.0)
    app = create_app(guard, limits=Limits(sessions_per_hour=1e6, session_burst=1000))
    with serving(app) as base, httpx.Client(base_url=base, timeout=10) as http:

        def chat(session: str, content: str) -> httpx.Response:
            body = {
                "model": "m",
                "messages": [{"role": "user", "content": content}],
                "metadata": {"governor_session": session},
            }
            return http.post("/v1/chat/completions", json=body)

        assert chat("warm", "x").status_code == 200
        server.script("/chat/completions", Reply(body=text("slow").body, delay_s=2.0))
        answers: list[int] = []
        piled = [
            threading.Thread(target=lambda: answers.append(chat("busy", "same").status_code))
            for _ in range(PILED)
        ]
        for t in piled:
            t.start()
        time.sleep(0.4)  # the busy session's step is waiting on the upstream
        start = time.perf_counter()
        other = chat("other", "hello")
        took = time.perf_counter() - start
        for t in piled:
            t.join(10)
    assert other.status_code == 200
    assert answers == [200] * PILED
    assert len(server.requests_to("/chat/completions")) == 3  # warm, busy once, other
    assert took < 1.0, f"another session's request waited {took:.2f} s for the busy one"
