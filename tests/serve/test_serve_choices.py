"""``n > 1``: each choice an admitted candidate, none committed until the client goes on with one."""

from __future__ import annotations

from typing import Any

import httpx
from fake_openai_server import FakeOpenAIServer
from serve_helpers import TOOLS, answer, tool_call

from governor.guard import Guard

USER = [{"role": "user", "content": "hi"}]


def choices_reply(*messages: dict[str, Any]) -> Any:
    """An upstream answer with one choice per message."""
    reply = answer(messages[0], "stop")
    choices = [{"index": i, "message": m, "finish_reason": "stop"} for i, m in enumerate(messages)]
    return type(reply)(body={**reply.body, "choices": choices})


def post(base: str, messages: list[Any], **more: Any) -> httpx.Response:
    body = {"model": "m", "messages": messages, "metadata": {"governor_session": "n"}, **more}
    return httpx.post(f"{base}/v1/chat/completions", json=body, timeout=10)


def test_n_choices_are_admitted_candidates_and_none_is_committed(
    base: str, server: FakeOpenAIServer, guard: Guard
) -> None:
    r = post(base, USER, n=3)
    assert r.status_code == 200
    choices = r.json()["choices"]
    assert [c["index"] for c in choices] == [0, 1, 2]
    assert sorted(c["message"]["content"] for c in choices) == ["answer 0", "answer 1", "answer 2"]
    assert server.requests_to("/chat/completions")[0].body["n"] == 3  # one call, n candidates
    governor = r.json()["governor"]
    assert governor["choices"] == 3 and governor["committed"] is False
    assert [m.role for m in guard.session("n").state.messages] == ["user"]
    # the client goes on with the second choice: that one is committed, as executed
    picked = choices[1]["message"]
    r = post(base, [*USER, picked, {"role": "user", "content": "and then?"}])
    assert r.status_code == 200
    saved = guard.session("n").state.messages
    assert [m.content for m in saved[:3]] == ["hi", picked["content"], "and then?"]


def test_only_admitted_candidates_are_offered(
    base: str, server: FakeOpenAIServer, guard: Guard
) -> None:
    messages: list[Any] = [{"role": "user", "content": "read the secret"}]
    server.script("/chat/completions", tool_call("c1", "read_secret", key="db"))
    first = post(base, messages, tools=TOOLS).json()["choices"][0]["message"]
    messages += [first, {"role": "tool", "tool_call_id": "c1", "content": "s3cr3t"}]
    email = {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c2", "type": "function", "function": {"name": "send_email", "arguments": "{}"}}]}  # fmt: skip
    server.script(
        "/chat/completions", choices_reply(email, {"role": "assistant", "content": "Done."})
    )
    r = post(base, messages, tools=TOOLS, n=2)
    choices = r.json()["choices"]
    assert [c["message"]["content"] for c in choices] == ["Done."]  # the email was refused
    assert "tool_calls" not in choices[0]["message"]


def test_when_no_candidate_is_admitted_the_one_fallback_reply_is_committed(
    base: str, server: FakeOpenAIServer, guard: Guard
) -> None:
    call = {
        "id": "t",
        "type": "function",
        "function": {"name": "transfer_funds", "arguments": "{}"},
    }
    refused = {"role": "assistant", "content": None, "tool_calls": [call]}  # before verify_identity
    server.script("/chat/completions", *[choices_reply(refused, refused)] * 3)
    r = post(base, USER, tools=TOOLS, n=2)
    choices = r.json()["choices"]
    assert len(choices) == 1 and choices[0]["message"]["content"].startswith("I did not run")
    assert "choices" not in r.json()["governor"]
    assert [m.role for m in guard.session("n").state.messages] == ["user", "assistant"]
