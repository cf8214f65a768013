"""Ten sessions of three turns at once: every decision stored, no session's messages mixed."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import openai
from fake_openai_server import FakeOpenAIServer, Reply
from serve_helpers import text, tools_guard

from governor.guard import SqliteStore
from governor.serve import create_app
from governor.serve.local import serving


class EchoServer(FakeOpenAIServer):
    """Answers each chat request with the last user message, echoed."""

    def answer(self, method: str, path: str, headers: dict[str, str], raw: bytes) -> Reply:
        default = super().answer(method, path, headers, raw)  # recorded there
        if not path.endswith("/chat/completions"):
            return default
        body = json.loads(raw)
        last = [m for m in body["messages"] if m["role"] == "user"][-1]["content"]
        return text(f"echo {last}.")


def conversation(base: str, session: str) -> list[str]:
    c = openai.OpenAI(base_url=f"{base}/v1", api_key="x", max_retries=0, timeout=60)
    messages: list[Any] = []
    said = []
    for turn in range(3):
        messages.append({"role": "user", "content": f"{session} turn {turn}"})
        reply = c.chat.completions.create(
            model="m", messages=messages, metadata={"governor_session": session}
        )
        content = reply.choices[0].message.content or ""
        said.append(content)
        messages.append({"role": "assistant", "content": content})
    return said


def test_ten_sessions_of_three_turns_at_once(tmp_path: Path) -> None:
    upstream = EchoServer().start()
    guard = tools_guard(upstream.url, store=SqliteStore(tmp_path / "sessions.sqlite3"))
    sessions = [f"s{i}" for i in range(10)]
    try:
        with serving(create_app(guard)) as base, ThreadPoolExecutor(10) as pool:
            said = dict(
                zip(sessions, pool.map(lambda s: conversation(base, s), sessions), strict=True)
            )
    finally:
        guard.backend.close()  # type: ignore[attr-defined]
        upstream.stop()
    store = SqliteStore(tmp_path / "sessions.sqlite3")  # read back from the file
    for s in sessions:
        assert said[s] == [f"echo {s} turn {t}." for t in range(3)]
        records = store.records(s)
        assert [r["t"] for r in records] == [1, 2, 3]
        assert all(r["kind"] == "execute" for r in records)
        state = store.load(s)
        assert state is not None
        texts = json.dumps(state["messages"])
        assert all(other not in texts.replace(f"{s} ", "") for other in sessions if other != s)
    assert len(upstream.requests_to("/chat/completions")) == 30
