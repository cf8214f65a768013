"""OpenAIBackend fills ``n`` when a server returns fewer choices (llama.cpp's server returns one)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from fake_openai_server import FakeOpenAIServer, Reply

from governor.backends import OpenAIBackend
from governor.errors import BackendHTTPError
from governor.usage import metered

MakeBackend = Callable[..., OpenAIBackend]
CHAT = "/chat/completions"


def test_a_server_returning_one_choice_is_asked_again_and_every_request_counted(
    server: FakeOpenAIServer, make_backend: MakeBackend
) -> None:
    server.max_choices = 1
    with metered() as meter:
        result = make_backend().chat("hi", n=3, temperature=0.7)
    assert [r.body["n"] for r in server.requests_to(CHAT)] == [3, 2, 1]
    assert len(result.completions) == 3
    assert result.usage.calls == 3
    assert (meter.total.calls, meter.total.prompt_tokens, meter.total.completion_tokens) == (
        3,
        21,
        6,
    )


def test_a_server_returning_some_choices_is_asked_for_the_rest_only(
    server: FakeOpenAIServer, make_backend: MakeBackend
) -> None:
    server.max_choices = 2
    result = make_backend().chat("hi", n=5, temperature=0.7)
    assert [r.body["n"] for r in server.requests_to(CHAT)] == [5, 3, 1]
    assert [c.text for c in result.completions] == [f"answer {i}" for i in (0, 1, 0, 1, 0)]


def test_a_server_honouring_n_is_asked_once_and_extra_choices_are_cut(
    server: FakeOpenAIServer, make_backend: MakeBackend
) -> None:
    backend = make_backend()
    assert len(backend.chat("hi", n=4, temperature=0.7).completions) == 4
    assert len(server.requests_to(CHAT)) == 1
    server.script(CHAT, Reply(body=_choices(3)))
    assert [c.text for c in backend.chat("hi", n=2).completions] == ["c0", "c1"]


def test_a_failed_fill_request_fails_the_call_counting_every_request(
    server: FakeOpenAIServer, make_backend: MakeBackend
) -> None:
    server.script(CHAT, Reply(body=_choices(1)), Reply(400, {"error": {"message": "no"}}))
    with metered() as meter, pytest.raises(BackendHTTPError, match="HTTP 400"):
        make_backend().chat("hi", n=2, temperature=0.7)
    assert len(server.requests_to(CHAT)) == 2
    assert (meter.total.calls, meter.total.failed) == (2, 1)


def _choices(k: int) -> dict[str, object]:
    choices = [
        {"index": i, "message": {"role": "assistant", "content": f"c{i}"}, "finish_reason": "stop"}
        for i in range(k)
    ]
    return {"choices": choices, "usage": {"prompt_tokens": 1, "completion_tokens": k}}
